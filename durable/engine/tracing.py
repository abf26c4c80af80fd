"""Optional OpenTelemetry spans: one per task runner, model attempt, tool call and commit.

Opt-in twice: the `otel` extra installs `opentelemetry-api`, and the application configures a
tracer provider. Without the API every decorator here returns the function unchanged; installed
but not configured, a traced call costs one check of the global provider and makes no span.

| decorator            | on                                                | span name           |
|----------------------|---------------------------------------------------|---------------------|
| `@tracing.task_run`  | `Scheduler._guarded(self, task)`                  | `durable.<kind>`    |
| `@tracing.attempt`   | `GenerationKind._stream(self, rt, task, request)` | `durable.attempt`   |
| `@tracing.tool_call` | `ToolKind._execute(self, rt, task, tool, args)`   | `durable.tool_call` |
| `@tracing.commit`    | `Session.commit(self, change, ...)`               | `durable.commit`    |

Attributes: `durable.task.id`, `.kind`, `durable.conversation.id`, `durable.task.restarts`;
`durable.attempt`; `durable.tool.name`, `.call_id`; `durable.commit.task_ids`, `.entries`. Spans
follow the context (a tool runner started by a generation's commit is a child of its span). An
exception is recorded on its span (status ERROR); a cancellation ends it without an error.
Tracing never changes what the traced call does or raises.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from ..records import Task

AttributeValue = str | int | float | bool | Sequence[int] | Sequence[str]
Describe = Callable[..., tuple[str, Mapping[str, AttributeValue]]]
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

TRACER_NAME = "durable"

_tracer: Any = None
_trace: Any = None  # the `opentelemetry.trace` module, once imported (on the first traced call)
_provider_set = False  # a real tracer provider was seen: it stays (OpenTelemetry sets it once)


def _cancelled() -> type[BaseException]:
    """The event loop's cancellation exception (anyio imported only once a traced call runs)."""
    import anyio

    return anyio.get_cancelled_exc_class()


# `os.environ`'s own dict and the variable's key in it: one dict look-up a traced call, where `in
# os.environ` goes through three Python calls and a raised KeyError. The dict is the one that
# `os.environ[...] = ...`, `del` and `putenv`-backed updates of `os.environ` change.
_ENVIRONMENT: Any = getattr(os.environ, "_data", os.environ)
_PROVIDER_VARIABLE: Any = (os.environ.encodekey("OTEL_PYTHON_TRACER_PROVIDER") if _ENVIRONMENT is not os.environ
                           else "OTEL_PYTHON_TRACER_PROVIDER")


def _import_trace() -> Any:
    """`opentelemetry.trace`, or None while no provider can have been set: a provider is set by
    code that imported `opentelemetry.trace` (then it is in `sys.modules`) or named by
    `OTEL_PYTHON_TRACER_PROVIDER`. Until either, a traced call imports nothing (importing OpenTelemetry's
    API is a large share of a recovering process's start-up)."""
    global _trace
    if "opentelemetry.trace" not in sys.modules and _PROVIDER_VARIABLE not in _ENVIRONMENT:
        return None
    from opentelemetry import trace  # imported on the first traced call, not with durable

    _trace = trace
    return trace


_looked_up = False  # `get_tracer_provider()` was called once (it applies OTEL_PYTHON_TRACER_PROVIDER)


def _configured(trace: Any) -> bool:
    """Whether a tracer provider that makes spans is set. Once one is, it stays (the global
    provider can be set only once), so the check is then a flag. Until then, after one call of
    `get_tracer_provider()` (which loads a provider named by the environment), the module's
    global is read directly: `get_tracer_provider()` looks the environment up on every call
    (~1.5 µs, a few times a durable step); if that global ever goes away, the call is made."""
    global _provider_set, _looked_up
    if _provider_set:
        return True
    if _looked_up and getattr(trace, "_TRACER_PROVIDER", trace) is None:
        return False  # no provider set by anyone: spans would be no-ops
    _looked_up = True
    if isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return False
    _provider_set = True
    return True


def available() -> bool:
    """Whether `opentelemetry-api` is installed (the `otel` extra): its `opentelemetry.trace`
    found in the `opentelemetry` namespace's folders (a `find_spec` of the submodule would import
    the namespace)."""
    spec = importlib.util.find_spec("opentelemetry")
    folders = spec.submodule_search_locations if spec is not None else None
    return any(os.path.exists(os.path.join(f, "trace", "__init__.py")) for f in folders or ())


def _get_tracer() -> Any:
    """The `durable` tracer: a proxy that follows the global tracer provider, even one set later."""
    global _tracer
    if _tracer is None:
        from opentelemetry import trace

        from .._version import __version__

        _tracer = trace.get_tracer(TRACER_NAME, __version__)
    return _tracer


def task_attributes(task: Task) -> dict[str, AttributeValue]:
    """The attributes that name a task on its spans."""
    return {
        "durable.task.id": task.id,
        "durable.task.kind": task.kind,
        "durable.conversation.id": task.conversation_id,
        "durable.task.restarts": task.restarts,
    }


def traced(describe: Describe) -> Callable[[F], F]:
    """Decorate an async function so that each call runs in a span; `describe` gets the call's
    arguments and returns the span's name and attributes. Without OpenTelemetry installed the
    function is returned unchanged."""

    def decorate(fn: F) -> F:
        if not available():
            return fn

        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            trace = _trace or _import_trace()
            if trace is None or not _configured(trace):
                return await fn(*args, **kwargs)  # no provider configured: spans would be no-ops
            from opentelemetry.trace import Status, StatusCode

            name, attributes = describe(*args, **kwargs)
            with _get_tracer().start_as_current_span(name, attributes=dict(attributes), record_exception=False,
                                                     set_status_on_exception=False) as span:
                try:
                    return await fn(*args, **kwargs)
                except _cancelled():
                    span.set_attribute("durable.cancelled", True)
                    raise
                except Exception as exc:
                    span.record_exception(exc)
                    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
                    raise

        return wrapper  # type: ignore[return-value]  # same signature as fn (functools.wraps)

    return decorate


def _task_run(scheduler: object, task: Task) -> tuple[str, Mapping[str, AttributeValue]]:
    return f"durable.{task.kind}", task_attributes(task)


def _attempt(kind: object, rt: object, task: Task, request: Any) -> tuple[str, Mapping[str, AttributeValue]]:
    return "durable.attempt", {**task_attributes(task), "durable.attempt": int(request.attempt)}


Described = tuple[str, Mapping[str, AttributeValue]]


def _tool_call(kind: object, rt: object, task: Task, tool: Any, args: object) -> Described:
    call_id = getattr(getattr(task.input, "call", None), "id", "")
    return "durable.tool_call", {**task_attributes(task), "durable.tool.name": str(tool.name),
                                 "durable.tool.call_id": str(call_id)}


def _commit(session: object, change: Any, **_: object) -> tuple[str, Mapping[str, AttributeValue]]:
    # At the start of `Session.commit` the change's tasks are still in `tasks` (the host API
    # may also have put some in its batch directly).
    ids = set(change.tasks) | {t.id for t in change.batch.tasks}
    return "durable.commit", {"durable.commit.task_ids": sorted(ids),
                              "durable.commit.entries": len(change.batch.entries)}


task_run = traced(_task_run)
"""On `Scheduler._guarded(self, task)`: a span per task runner, named after the task's kind."""
attempt = traced(_attempt)
"""On `GenerationKind._stream(self, rt, task, request)`: a span per model attempt."""
tool_call = traced(_tool_call)
"""On `ToolKind._execute(self, rt, task, tool, args)`: a span per tool execution."""
commit = traced(_commit)
"""On `Session.commit(self, change, ...)`: a span per commit (the store may group several)."""


__all__ = ["TRACER_NAME", "attempt", "available", "commit", "task_attributes", "task_run", "tool_call", "traced"]
