"""OpenTelemetry spans (the `otel` extra), recorded with the SDK's in-memory exporter: one span
per task runner, model attempt, tool call and commit, with the task's id, kind and attempt."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra and opentelemetry-sdk")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

import durable  # noqa: E402
from durable import records as r  # noqa: E402
from durable.engine import tracing  # noqa: E402
from durable.engine.scheduler import Scheduler  # noqa: E402
from durable.models import FauxModel, faux  # noqa: E402
from durable.testing import crash  # noqa: E402

from .conftest import partial_is, settings, until_live  # noqa: E402

pytestmark = pytest.mark.anyio

# The engine marks what it traces with one decorator line each (see durable/engine/tracing.py).
assert hasattr(Scheduler._guarded, "__wrapped__"), "the scheduler's runner is traced"

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def provider():
    """The process's tracer provider can be set once: this module sets it, and the `durable`
    tracer (a proxy) follows it."""
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        tp = TracerProvider()
        tp.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(tp)
    elif not getattr(current, "_durable_test_exporter", False):
        current.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.get_tracer_provider()._durable_test_exporter = True
    yield


@pytest.fixture
def spans():
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def named(exporter, name):
    return [s for s in exporter.get_finished_spans() if s.name == name]


async def test_a_traced_call_runs_in_a_span_with_the_attributes_described(spans):
    @tracing.traced(lambda x, *, y: ("demo.work", {"demo.x": x, "demo.y": y}))
    async def work(x, *, y):
        await anyio.lowlevel.checkpoint()
        return x + y

    assert await work(1, y=2) == 3
    (span,) = spans.get_finished_spans()
    assert (span.name, dict(span.attributes), span.status.status_code) == ("demo.work", {"demo.x": 1, "demo.y": 2},
                                                                          StatusCode.UNSET)


async def test_an_exception_is_recorded_and_the_span_ends_in_error_and_it_still_propagates(spans):
    @tracing.traced(lambda: ("demo.fail", {}))
    async def fail():
        raise KeyError("nope")

    with pytest.raises(KeyError, match="nope"):
        await fail()
    (span,) = spans.get_finished_spans()
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == "KeyError: 'nope'"
    assert [e.name for e in span.events] == ["exception"]


async def test_a_cancelled_call_ends_its_span_without_an_error(spans):
    @tracing.traced(lambda: ("demo.sleep", {}))
    async def sleep():
        await anyio.sleep_forever()

    with anyio.move_on_after(0.01):
        await sleep()
    (span,) = spans.get_finished_spans()
    assert span.status.status_code == StatusCode.UNSET
    assert span.attributes["durable.cancelled"] is True


def test_without_opentelemetry_installed_the_function_is_left_unchanged(monkeypatch):
    monkeypatch.setattr(tracing, "available", lambda: False)

    async def work():
        return 1

    assert tracing.traced(lambda: ("x", {}))(work) is work


_LATE_PROVIDER = """
import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from durable.engine import tracing

@tracing.traced(lambda n: (f"work{n}", {}))
async def work(n):
    return n

anyio.run(work, 1)  # no provider yet: no span, and the check is now the cheap one
anyio.run(work, 2)
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
anyio.run(work, 3)
print([s.name for s in exporter.get_finished_spans()])
"""


def test_a_provider_set_after_the_first_traced_calls_is_followed():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _LATE_PROVIDER], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "['work3']"


def span_tree(exporter):
    """(name, selected attributes, parent name) of each finished span, commits left out."""
    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    keys = ("durable.task.id", "durable.task.kind", "durable.task.restarts", "durable.attempt", "durable.tool.name")
    out = []
    for s in spans:
        if s.name == "durable.commit":
            continue
        parent = by_id.get(s.parent.span_id).name if s.parent is not None and s.parent.span_id in by_id else None
        out.append((s.name, {k: s.attributes[k] for k in keys if k in s.attributes}, parent))
    return sorted(out, key=lambda x: (x[1].get("durable.task.id", 0), x[0]))


async def _lookup(args, api, ctx):
    return "found"


async def test_a_run_with_a_tool_round_makes_runner_attempt_tool_call_and_commit_spans(host, spans):
    lookup = durable.define_tool("lookup", "Looks up", execute=_lookup)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("lookup", {}, id="c1")]), faux.reply("done")])
    async with host.open(model, settings=settings(), tools=[lookup]) as h:
        assert await (await h.root.submit("go")).wait() == r.Answered("done", 4)
    gen = {"durable.task.id": 1, "durable.task.kind": "generation", "durable.task.restarts": 0}
    tool = {"durable.task.id": 2, "durable.task.kind": "tool", "durable.task.restarts": 0}
    # One runner drives the generation through both requests (attempt 1 of each); the tool's
    # runner is started by the commit of the first answer, inside that attempt.
    assert span_tree(spans) == [
        ("durable.attempt", {**gen, "durable.attempt": 1}, "durable.generation"),
        ("durable.attempt", {**gen, "durable.attempt": 1}, "durable.generation"),
        ("durable.generation", gen, None),
        ("durable.tool", tool, "durable.attempt"),
        ("durable.tool_call", {**tool, "durable.tool.name": "lookup"}, "durable.tool"),
    ]
    commits = named(spans, "durable.commit")
    assert commits and all(isinstance(c.attributes["durable.commit.entries"], int) for c in commits)
    assert {tuple(c.attributes["durable.commit.task_ids"]) for c in commits} >= {(1,), (2,)}


async def test_after_a_crash_the_runner_span_shows_the_restart_and_the_attempt_is_2(host, spans):
    async with host.open(FauxModel([faux.hang("Hello wor")]), settings=settings()) as h:
        sub = await h.root.submit("hi")
        await until_live(h, partial_is("Hello wor"))
        crash(h)
    spans.clear()
    async with host.open(FauxModel([faux.reply("Hello world")]), settings=settings()) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("Hello world", 3)
    gen = {"durable.task.id": 1, "durable.task.kind": "generation"}
    print(span_tree(spans)); assert span_tree(spans) == [
        ("durable.attempt", {**gen, "durable.task.restarts": 0, "durable.attempt": 2}, "durable.generation"),
        ("durable.generation", {**gen, "durable.task.restarts": 1}, None),
    ]
