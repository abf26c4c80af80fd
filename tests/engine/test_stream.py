"""`SubmissionHandle.stream()`: the exact events of a streamed answer, a tool round with streamed
output, a retry, and a stream obtained after reopening a session whose run was cut off; on trio
and asyncio. Every delta is committed (`persist_within=0`), so each one is an event."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
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
        durable.RetryWaitingEvent(r.RetryLive(1, until, "Overloaded", "overloaded", "faux", 529)),
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
        durable.RetryWaitingEvent(r.RetryLive(1, until, HOST_STOPPED_1, "interrupted")),
        durable.AttemptRestartedEvent(2),
        durable.TextDeltaEvent("Hell"), durable.TextDeltaEvent("o wo"), durable.TextDeltaEvent("rld"),
        durable.SettledEvent(r.Answered("Hello world", 3)),
    ]


CHILD = textwrap.dedent("""
    import sys, anyio, durable
    from durable.models import FauxModel, faux

    async def main():
        settings = durable.Settings(progress=durable.Progress(persist_within=0, output_interval=0))
        async with durable.open_harness(sys.argv[1], model=FauxModel([faux.hang("Hello wor")]),
                                        settings=settings) as h:
            await h.root.submit("hi", id="sub_killed")
            async for live in h.root.follow():
                if live.generation is not None and live.generation.message.text == "Hello wor":
                    print("committed", flush=True)  # the parent kills us now
                    await anyio.sleep_forever()

    anyio.run(main, backend="trio")
""")


def kill_while_streaming(path: str) -> None:
    """Run an agent in a child process and SIGKILL it once its partial "Hello wor" is committed."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, path], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline() == "committed\n"
    child.send_signal(signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL


@BACKENDS
async def test_a_stream_after_a_sigkill_starts_from_what_the_killed_process_committed(host, anyio_backend):
    await anyio.to_thread.run_sync(kill_while_streaming, host.path)
    async with host.open(FauxModel([faux.reply("Hello world")]), settings=settings()) as h:
        events: list[Any] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(streamed, h, h.root.submission("sub_killed"), events)
            until = await host.clock.wait_for_timer("retry:1")
            host.clock.advance(1.0)
    assert events == [
        durable.TextDeltaEvent("Hello wor"),
        durable.RetryWaitingEvent(r.RetryLive(1, until, HOST_STOPPED_1, "interrupted")),
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


def test_the_sync_api_streams_as_a_blocking_iterator(tmp_path):
    import durable.sync

    model = Gated(FauxModel([faux.reply("Hi there")]))
    with durable.sync.open_harness(str(tmp_path / "s.sqlite"), model=model, settings=settings()) as h:
        # The model answers once the stream has subscribed (on the harness's thread): a stream
        # taken after the run settled would rightly show the status alone (it failed so in CI).
        h._harness.session.watchers = Announcing(model.gate)
        events = list(h.root.submit("hi").stream())
    assert events[-1] == durable.SettledEvent(r.Answered("Hi there", 2))
    assert {type(e) for e in events[:-1]} <= {durable.TextDeltaEvent}  # as many as were committed before it read
    assert "".join(e.text for e in events[:-1]) == "Hi there"


async def test_a_stream_ends_without_a_result_when_the_harness_closes(host):
    model = Gated(FauxModel([faux.hang("Hel")]))
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        events: list[Any] = []

        async def close_once_shown() -> None:
            await until_live(h, partial_is("Hel"))
            await h.close()

        async with anyio.create_task_group() as tg:
            tg.start_soon(close_once_shown)
            await streamed(h, sub, events, model.gate)
    assert events == [durable.TextDeltaEvent("Hel")]


@durable.tool(approval=True)
async def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


async def test_a_call_waiting_for_approval_is_announced_after_it_starts(host):
    model = Gated(FauxModel([faux.reply("", tool_calls=[faux.call("delete", {"path": "a"}, id="c1")]),
                             faux.reply("Gone")]))
    async with host.open(model, tools=[delete], settings=settings()) as h:
        sub = await h.root.submit("hi")
        events: list[Any] = []

        async def approve_when_asked() -> None:
            await until_live(h, lambda live: bool(live.approvals))
            await h.approve("c1")

        async with anyio.create_task_group() as tg:
            tg.start_soon(approve_when_asked)
            await streamed(h, sub, events, model.gate)
    assert events == [
        durable.ToolCallStartedEvent("c1", "delete", '{"path": "a"}'),
        durable.ApprovalRequestedEvent("c1", "delete", '{"path": "a"}'),
        durable.ToolCallEndedEvent("c1", "delete", "deleted a"),
        durable.TextDeltaEvent("Gone"),
        durable.SettledEvent(r.Answered("Gone", 4)),
    ]


def commit_of(sid: str, *, text: str | None = None, entries: tuple[Any, ...] = (), settled: Any = None) -> tuple:
    """One commit as a stream sees it: the live document (a run of `sid` showing `text`, or no run
    once settled), the entries appended (from seq 2) and the submission written."""
    run = None if settled is not None else r.Run(1, (sid,))
    gen = None if text is None else r.GenerationLive(1, r.PartialMessage(text))
    stored = tuple(r.StoredEntry("root", 2 + i, e) for i, e in enumerate(entries))
    subs = () if settled is None else (r.Submission(sid, "root", "hi", seq=1, status=settled, task_id=1),)
    return r.Live(run=run, generation=gen), stored, subs


def test_the_tail_a_coalesced_partial_never_showed_comes_with_the_committed_message():
    from durable.engine.streaming import Differ

    differ = Differ("s1", seq=1)
    assert differ.step(*commit_of("s1", text="Hel")) == [durable.TextDeltaEvent("Hel")]
    answered = r.Answered("Hello world", 2)
    assert differ.step(*commit_of("s1", entries=(r.AssistantEntry("Hello world", "stop"),), settled=answered)) == [
        durable.TextDeltaEvent("lo world"), durable.SettledEvent(answered)]


def test_a_committed_message_that_is_not_the_one_shown_restarts_the_text():
    from durable.engine.streaming import Differ

    differ = Differ("s1", seq=1)
    differ.step(*commit_of("s1", text="Hello"))
    assert differ.step(*commit_of("s1", entries=(r.AssistantEntry("Goodbye", "tool_use"),))) == [
        durable.AttemptRestartedEvent(1), durable.TextDeltaEvent("Goodbye")]
