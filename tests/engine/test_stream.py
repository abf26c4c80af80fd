"""`SubmissionHandle.stream()`: the exact events of a streamed answer, a tool round with streamed
output, a retry, and a stream obtained after reopening a session whose run was cut off; on trio
and asyncio. Every delta is committed (`persist_within=0`), so each one is an event."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.testing import crash

from .conftest import partial_is, settings, until_live

pytestmark = pytest.mark.anyio

BACKENDS = pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
HOST_STOPPED_1 = "The host stopped while the model was answering, on attempt 1"


class Gated:
    """A model whose answers wait until the stream under test has subscribed."""

    def __init__(self, inner: FauxModel) -> None:
        self.inner = inner
        self.gate = anyio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def stream(self, request: Any) -> Any:
        await self.gate.wait()
        async for event in self.inner.stream(request):
            yield event


class Announcing(list):
    """The session's watcher list, setting `event` when a stream subscribes."""

    def __init__(self, event: anyio.Event) -> None:
        super().__init__()
        self.event = event

    def append(self, item: Any) -> None:
        super().append(item)
        self.event.set()


async def streamed(h: durable.Harness, sub: durable.SubmissionHandle, events: list[Any],
                   gate: anyio.Event | None = None) -> None:
    """Collect `sub.stream()` into `events`; set `gate` once it has subscribed."""
    subscribed = anyio.Event()
    h.session.watchers = Announcing(subscribed)
    async with anyio.create_task_group() as tg:

        async def collect() -> None:
            async for event in sub.stream():
                events.append(event)

        tg.start_soon(collect)
        await subscribed.wait()
        if gate is not None:
            gate.set()


@BACKENDS
async def test_a_streamed_answer_is_its_text_deltas_then_the_settled_answer(host, anyio_backend):
    model = Gated(FauxModel([faux.reply("Hello world")]))
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        events: list[Any] = []
        await streamed(h, sub, events, model.gate)
    assert events == [
        durable.TextDeltaEvent("Hell"), durable.TextDeltaEvent("o wo"), durable.TextDeltaEvent("rld"),
        durable.SettledEvent(r.Answered("Hello world", 2)),
    ]


@durable.tool
async def lookup(q: str, api: durable.ToolApi) -> str:
    """Look something up."""
    await api.output("a")
    await api.output("bc")
    return f"found {q}"


@BACKENDS
async def test_a_tool_round_streams_the_call_its_output_and_its_result(host, anyio_backend):
    model = Gated(FauxModel([faux.reply("Let me look", tool_calls=[faux.call("lookup", {"q": "x"}, id="c1")]),
                             faux.reply("Found it")]))
    async with host.open(model, tools=[lookup], settings=settings()) as h:
        sub = await h.root.submit("hi")
        events: list[Any] = []
        await streamed(h, sub, events, model.gate)
    assert events == [
        durable.TextDeltaEvent("Let "), durable.TextDeltaEvent("me l"), durable.TextDeltaEvent("ook"),
        durable.ToolCallStartedEvent("c1", "lookup", '{"q": "x"}'),
        durable.ToolOutputEvent("c1", "lookup", "a"), durable.ToolOutputEvent("c1", "lookup", "bc"),
        durable.ToolCallEndedEvent("c1", "lookup", "found x"),
        durable.TextDeltaEvent("Foun"), durable.TextDeltaEvent("d it"),
        durable.SettledEvent(r.Answered("Found it", 4)),
    ]


@BACKENDS
async def test_a_retry_waits_visibly_then_the_next_attempt_restarts_its_text(host, anyio_backend):
    model = Gated(FauxModel([faux.error("Overloaded", kind="overloaded", status_code=529, partial="Hel"),
                             faux.reply("Hello")]))
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        events: list[Any] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(streamed, h, sub, events, model.gate)
            until = await host.clock.wait_for_timer("retry:1")
            host.clock.advance(1.0)
    assert events == [
        durable.TextDeltaEvent("Hel"),
        durable.RetryWaitingEvent(1, until, "Overloaded", "overloaded", "faux", 529),
        durable.AttemptRestartedEvent(2),
        durable.TextDeltaEvent("Hell"), durable.TextDeltaEvent("o"),
        durable.SettledEvent(r.Answered("Hello", 3)),
    ]


@BACKENDS
async def test_a_stream_after_a_crash_starts_from_the_committed_partial_then_the_retry(host, anyio_backend):
    async with host.open(FauxModel([faux.hang("Hello wor")]), settings=settings()) as h:
        sid = (await h.root.submit("hi")).id
        await until_live(h, partial_is("Hello wor"))
        crash(h)
    async with host.open(FauxModel([faux.reply("Hello world")]), settings=settings()) as h:
        events: list[Any] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(streamed, h, h.root.submission(sid), events)
            until = await host.clock.wait_for_timer("retry:1")
            host.clock.advance(1.0)
    assert events == [
        durable.TextDeltaEvent("Hello wor"),  # what the dead process committed
        durable.RetryWaitingEvent(1, until, HOST_STOPPED_1, "interrupted"),
        durable.AttemptRestartedEvent(2),
        durable.TextDeltaEvent("Hell"), durable.TextDeltaEvent("o wo"), durable.TextDeltaEvent("rld"),
        durable.SettledEvent(r.Answered("Hello world", 3)),
    ]


async def test_a_settled_submission_streams_only_its_result(host):
    async with host.open(FauxModel([faux.reply("Hi")]), settings=settings()) as h:
        sub = await h.root.submit("hi")
        await sub.wait()
        assert [e async for e in sub.stream()] == [durable.SettledEvent(r.Answered("Hi", 2))]


async def test_a_queued_input_streams_its_own_run_only(host):
    model = Gated(FauxModel([faux.reply("One"), faux.reply("Two")]))
    async with host.open(model, settings=settings()) as h:
        await h.root.submit("first")
        second = await h.root.submit("second", when_busy="queue")
        events: list[Any] = []
        await streamed(h, second, events, model.gate)
    assert events == [durable.TextDeltaEvent("Two"), durable.SettledEvent(r.Answered("Two", 4))]


async def test_an_abort_ends_the_stream_with_the_unanswered_result(host):
    model = Gated(FauxModel([faux.hang("Hel")]))
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        events: list[Any] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(streamed, h, sub, events, model.gate)
            await until_live(h, partial_is("Hel"))
            await h.root.abort()
    assert events == [
        durable.TextDeltaEvent("Hel"),
        durable.SettledEvent(r.Unanswered("aborted", events[-1].status.detail)),
    ]
