"""`define_tool` and `@tool`: a checked `Tool` from a function (typed or raw) or an explicit
schema. Everything a tool can get wrong is refused here, when it is defined, with a
`ToolDefinitionError` naming the tool, so that a call never meets a bad schema."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, overload

from ..errors import ToolDefinitionError
from .arguments import compile_schema
from .protocol import EMPTY_SCHEMA, AnyExecute, ApprovalCheck, Execute, Replay, Tool
from .schema import is_async, typed_call
from .threads import in_thread

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")


def define_tool(
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    *,
    replay: Replay = "unsafe",
    execute: AnyExecute | None = None,
    client: bool = False,
    approval: bool | ApprovalCheck = False,
    max_retries: int = 1,
    timeout: float | None = None,
) -> Tool:
    """Define a tool; raises `ToolDefinitionError` (naming the tool) for a bad name, schema,
    signature or policy.

    `name` defaults to the function's name and `description` to its docstring. `execute` is
    told apart by its signature: a typed one (`async def f(city: str, days: int = 1)`) gets its
    schema from its type hints and its arguments converted (`durable.tools.schema`); a raw one,
    `execute(args, api, ctx)` (three positional parameters, the last two unannotated, `Any`,
    `ToolApi` / `ToolContext`), gets the parsed JSON and accepts any object. With `parameters`,
    that schema is used as given and wins over the derived one (it must be a valid Draft 2020-12
    schema of type object).

    `execute` may be a plain `def` (typed or raw): it then runs in a worker thread
    (`durable.tools.threads`, at most `TOOL_THREADS` at once), gets `ToolContext` like an async
    one, and streams output with `api.output_sync(text)`. A thread cannot be interrupted: on an
    abort, an interrupt, its timeout or a clean close the call is abandoned (answered at once; its
    result, when the thread ends, is discarded) and counts as cut off mid-run whatever `replay`
    says ("may have partially run"; not run again on the next open). After a crash its `replay`
    applies as for an async tool.

    `approval=True`: every call waits, committed and never charged, for a person's decision
    (`Harness.approve` / `Harness.deny`) before it runs; `approval=check`: only the calls for which
    `check(args, ctx)` (sync or async, given the validated JSON arguments) returns True. A client
    tool takes none: the host that runs it decides. `max_retries` (default 1): how many times per
    run the model may be asked to call the tool again (`durable.RetryTool`, invalid arguments);
    the next time the call ends with an error result saying so. `timeout`: seconds a call may run,
    measured from its stored start (across restarts), then it is cancelled and answered; not for
    a client tool (`settings.client_tool_timeout` bounds those)."""
    if name is None:
        if execute is None:
            raise ToolDefinitionError("A tool needs a name (or an execute function to take it from)")
        name = getattr(execute, "__name__", "")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ToolDefinitionError(f"Tool name {name!r} is not valid (letters, digits, _ and -, at most 64)")
    if replay not in ("safe", "unsafe"):
        raise ToolDefinitionError(f"Tool {name}: replay must be 'safe' or 'unsafe', not {replay!r}")
    if client and execute is not None:
        raise ToolDefinitionError(f"Tool {name}: a client tool is run by the host and has no execute")
    if not client and execute is None:
        raise ToolDefinitionError(f"Tool {name}: execute is required (or client=True)")
    _check_options(name, client, approval, max_retries, timeout)
    if description is None:
        description = (inspect.getdoc(execute) or "") if execute is not None else ""
    convert: Callable[[Any], Any] | None = None
    run: Execute | None = execute
    threaded = execute is not None and not is_async(execute)
    if execute is not None:
        typed = typed_call(name, execute)
        if typed is not None:
            convert, run = typed.convert, typed.execute
            if parameters is None:
                parameters = typed.schema
        elif threaded:
            run = in_thread(execute)
    params = parameters if parameters is not None else dict(EMPTY_SCHEMA)
    validator = compile_schema(name, params)
    return Tool(name, description, params, replay, run, client, convert, validator, approval, max_retries,
                None if timeout is None else float(timeout), threaded)


def _check_options(name: str, client: bool, approval: object, max_retries: object, timeout: object) -> None:
    if not isinstance(approval, bool) and not callable(approval):
        raise ToolDefinitionError(f"Tool {name}: approval must be True, False or a callable(args, ctx), "
                                  f"not {approval!r}")
    if client and approval is not False:
        raise ToolDefinitionError(f"Tool {name}: a client tool is run by the host, which decides itself; "
                                  f"it takes no approval")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ToolDefinitionError(f"Tool {name}: max_retries must be an int >= 0, not {max_retries!r}")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ToolDefinitionError(f"Tool {name}: timeout must be a positive number of seconds (or None), "
                                      f"not {timeout!r}")
        if client:
            raise ToolDefinitionError(f"Tool {name}: a client tool takes no timeout "
                                      f"(settings.client_tool_timeout bounds it)")


@overload
def tool(name: AnyExecute, /) -> Tool: ...


@overload
def tool(name: str | None = None, description: str | None = None, parameters: dict[str, Any] | None = None,
         *, replay: Replay = "unsafe", approval: bool | ApprovalCheck = False, max_retries: int = 1,
         timeout: float | None = None) -> Callable[[AnyExecute], Tool]: ...


def tool(name: str | AnyExecute | None = None, description: str | None = None,
         parameters: dict[str, Any] | None = None, *, replay: Replay = "unsafe",
         approval: bool | ApprovalCheck = False, max_retries: int = 1,
         timeout: float | None = None) -> Tool | Callable[[AnyExecute], Tool]:
    """Decorator form of `define_tool`: `@tool` or `@tool(name, description, parameters, replay=,
    approval=, max_retries=, timeout=)`. The function's name and docstring are the defaults; its
    signature gives the schema."""
    if callable(name):
        return define_tool(execute=name)

    def wrap(fn: AnyExecute) -> Tool:
        return define_tool(name, description, parameters, replay=replay, execute=fn, approval=approval,
                           max_retries=max_retries, timeout=timeout)

    return wrap


__all__ = ["define_tool", "tool"]
