"""Generations that survive crashes: docs/spec.md §4, one behaviour a test, with exact transcripts,
submission results, live snapshots and reports. A crash abandons the harness with its storage
hanging (what a killed process leaves); reopening uses a new harness on the same file."""

from __future__ import annotations

from typing import Any, ClassVar

import anyio
import attrs
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.tasks.generation.records import AttemptFailure, Request, Retry
from durable.testing import crash

from .conftest import partial_is, settings, until_live, used

pytestmark = pytest.mark.anyio

HOST_STOPPED_1 = "The host stopped while the model was answering, on attempt 1"
HOST_STOPPED_2 = "The host stopped while the model was answering, on attempt 2"


async def crash_while_streaming(host, text="Hello wor", **kw):
    """Submit, let the model stream `text` (committed), then crash. Returns the submission id."""
    model = FauxModel([faux.hang(text)])
    async with host.open(model, settings=settings(**kw)) as h:
        sub = await h.root.submit("hi")
        await until_live(h, partial_is(text))
        crash(h)
    return sub.id


@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_a_crash_while_the_model_streams_is_charged_once_and_attempt_2_answers(host, anyio_backend):
    sid = await crash_while_streaming(host)
    model = FauxModel([faux.reply("Hello world")])
    async with host.open(model, settings=settings()) as h:
        task = await h.task(1)
        assert (task.state, task.restarts, task.checkpoint) == (r.Pending(), 1, Request(1))
        await h.resume()
        until = await host.clock.wait_for_timer("retry:1")
        assert until == host.clock.now() + 1.0
        assert h.root.live() == r.Live(
            run=r.Run(1, (sid,)),
            generation=r.GenerationLive(1, retry=r.RetryLive(1, until, HOST_STOPPED_1, "interrupted")),
            usage=used(1),  # the request of attempt 1, counted with the commit before it was sent
        )
        host.clock.advance(1.0)
        assert await h.root.submission(sid).wait() == r.Answered("Hello world", 3)
        assert h.root.live() == r.Live(usage=used(2, 10, 3))
    assert await host.transcript() == ["user", "assistant:aborted", "assistant:stop"]
    entries = await host.entries()
    assert entries[1] == r.AssistantEntry("Hello wor", "aborted", usage=entries[1].usage, error=HOST_STOPPED_1, attempt=1, interrupted=True, model="faux")
    assert entries[2].text == "Hello world" and entries[2].attempt == 2
    # The aborted partial is in the conversation but not in the request of attempt 2.
    assert model.requests[0].messages == (r.UserEntry("hi", sid),)
    assert model.requests[0].attempt == 2
    assert [(type(x).__name__, x.reason, x.restarts, x.detail) for x in host.reports] == [
        ("TaskInterrupted", "interrupted", 1, HOST_STOPPED_1)
    ]


async def test_a_long_backoff_after_the_charge_sleeps_durably_with_restarts_cleared(host):
    await crash_while_streaming(host)
    policy = durable.RetryPolicy(base_delay=30.0, max_delay=60.0)
    async with host.open(FauxModel([]), settings=settings(retry=policy)) as h:
        await h.resume()
        until = await host.clock.wait_for_timer("retry:1")
        task = await h.task(1)
        assert task.state == r.Sleeping(until)
        assert until == host.clock.now() + 30.0
        assert isinstance(task.checkpoint, Retry) and task.checkpoint.attempt == 1
        assert task.checkpoint.error == AttemptFailure(HOST_STOPPED_1, "interrupted")
        assert task.restarts == 0
        assert h.wake() == durable.Wake(active=False, next_timer=until)


async def test_two_crashes_with_max_retries_1_end_the_run_interrupted_keeping_both_partials(host):
    policy = durable.RetryPolicy(max_retries=1, base_delay=1.0)
    sid = await crash_while_streaming(host, "First", retry=policy)
    model = FauxModel([faux.hang("Second")])
    async with host.open(model, settings=settings(retry=policy)) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        await until_live(h, partial_is("Second"))
        crash(h)
    last = FauxModel([])
    async with host.open(last, settings=settings(retry=policy)) as h:
        result = await h.root.submission(sid).wait()
        assert result == r.Unanswered("interrupted", HOST_STOPPED_2)
        task = await h.task(1)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(HOST_STOPPED_2, r.ErrorDetail("interrupted"))))
        assert h.root.live().run_failure == r.RunFailure(1, (sid,), "interrupted", HOST_STOPPED_2, "hi")
    assert last.calls == 0
    assert await host.transcript() == ["user", "assistant:aborted", "assistant:aborted"]
    assert [e.text for e in (await host.entries())[1:]] == ["First", "Second"]


async def test_with_retries_disabled_an_interrupted_request_ends_the_run_at_once(host):
    policy = durable.RetryPolicy(enabled=False)
    sid = await crash_while_streaming(host, retry=policy)
    model = FauxModel([])
    async with host.open(model, settings=settings(retry=policy)) as h:
        assert await h.root.submission(sid).wait() == r.Unanswered("interrupted", HOST_STOPPED_1)
    assert model.calls == 0
    assert await host.transcript() == ["user", "assistant:aborted"]


async def test_a_close_is_not_a_crash_the_request_is_resent_without_a_charge(host):
    model = FauxModel([faux.hang("Hel")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await until_live(h, partial_is("Hel"))
    # A clean close wrote the task back pending, restarts unchanged.
    model = FauxModel([faux.reply("Hello")])
    async with host.open(model, settings=settings()) as h:
        task = await h.task(1)
        assert (task.state, task.restarts, task.checkpoint) == (r.Pending(), 0, Request(1))
        assert await sub_wait(h, sub.id) == r.Answered("Hello", 3)
    assert model.requests[0].attempt == 1
    assert await host.transcript() == ["user", "assistant:aborted", "assistant:stop"]
    assert host.reports == []


async def sub_wait(h, sid):
    return await h.root.submission(sid).wait()


async def test_a_crash_while_sleeping_in_a_retry_backoff_is_not_charged(host):
    model = FauxModel([faux.error("Rate limited", kind="rate_limit", status_code=429)])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        until = await host.clock.wait_for_timer("retry:1")
        crash(h)
    model = FauxModel([faux.reply("Hello")])
    async with host.open(model, settings=settings()) as h:
        task = await h.task(1)
        assert (task.state, task.restarts) == (r.Sleeping(until), 0)
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        assert await sub_wait(h, sub.id) == r.Answered("Hello", 2)
    assert model.requests[0].attempt == 2
    # The provider error was reported; nothing about crash handling (nothing was charged).
    assert [(x.type, x.message) for x in host.reports] == [("error", "Attempt 1 of task 1 failed: Rate limited")]


async def test_a_crash_right_after_the_input_commit_at_restart_limit_1_ends_the_run_with_restart_limit(host):
    # Commit 1 places the input and creates the generation running in its first request: crash
    # just after it, before anything is sent (the submit is never acknowledged, as in a process
    # killed right after its commit).
    async with host.open(FauxModel([faux.reply("never")]), settings=settings(restart_limit=1), crash_after=1) as h:
        async with anyio.create_task_group() as tg:
            tg.start_soon(h.root.submit, "hi")
            await h.storage.crashed.wait()
            crash(h)
            tg.cancel_scope.cancel()
    model = FauxModel([])
    detail = "The generation was interrupted once in its request phase"
    async with host.open(model, settings=settings(restart_limit=1)) as h:
        (sid,) = (await h.task(1)).input.submission_ids
        assert await sub_wait(h, sid) == r.Unanswered("restart_limit", detail)
        task = await h.task(1)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(detail, r.ErrorDetail("restart_limit"))))
        # The request was counted by the input's commit, the barrier before it would be sent.
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sid,), "restart_limit", detail, "hi"),
                                       usage=used(1))
    assert model.calls == 0
    assert await host.transcript() == ["user"]
    assert host.reports == [
        durable.TaskInterrupted(durable.TaskRef(1, "generation", "root"), "restart_limit", 1, detail)
    ]


async def test_a_crash_while_streaming_at_restart_limit_1_keeps_the_partial_and_sends_nothing(host):
    sid = await crash_while_streaming(host, "Partial", restart_limit=1)
    model = FauxModel([])
    detail = "The generation was interrupted once in its request phase"
    async with host.open(model, settings=settings(restart_limit=1)) as h:
        assert await sub_wait(h, sid) == r.Unanswered("restart_limit", detail)
    assert model.calls == 0
    assert await host.transcript() == ["user", "assistant:aborted"]
    assert (await host.entries())[1].text == "Partial"


async def test_past_the_restart_limit_the_partial_is_dropped(host):
    sid = await crash_while_streaming(host, "Partial", restart_limit=1)
    # The limit handler is itself cut off: commits 1 (open charge) and 2 (marked running).
    async with host.open(FauxModel([]), settings=settings(restart_limit=1), crash_after=2) as h:
        await h.resume()
        await h.storage.crashed.wait()
        crash(h)
    model = FauxModel([])
    detail = "The generation was interrupted 2 times in a row in its request phase"
    async with host.open(model, settings=settings(restart_limit=1)) as h:
        assert (await h.task(1)).restarts == 2
        assert await sub_wait(h, sid) == r.Unanswered("restart_limit", detail)
    assert await host.transcript() == ["user"]
    assert model.calls == 0


async def test_crash_reopen_clean_close_reopen_charges_the_request_exactly_once(host):
    sid = await crash_while_streaming(host)
    async with host.open(FauxModel([]), settings=settings()) as h:
        assert (await h.task(1)).restarts == 1  # charged by this open; not resumed
    model = FauxModel([faux.reply("Hello world")])
    async with host.open(model, settings=settings()) as h:
        assert (await h.task(1)).restarts == 1
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        assert await sub_wait(h, sid) == r.Answered("Hello world", 3)
    assert model.requests[0].attempt == 2
    assert await host.transcript() == ["user", "assistant:aborted", "assistant:stop"]
    assert [x.restarts for x in host.reports] == [1]


class CountingSettings(durable.Settings):
    """Settings that count reads of `restart_limit` (a subclass: the harness takes `Settings`)."""

    reads: ClassVar[list[str]] = []

    def __getattribute__(self, name: str) -> Any:
        if name == "restart_limit":
            CountingSettings.reads.append(name)
        return super().__getattribute__(name)


async def test_the_normal_path_never_reads_the_restart_settings(host):
    lookup = durable.define_tool("lookup", "Look up", replay="safe", execute=_lookup)
    script = []
    for i in range(3):
        script += [faux.reply("", tool_calls=[faux.call("lookup", {"q": i})]), faux.reply(f"answer {i}")]
    counting = CountingSettings(**attrs.asdict(settings(), recurse=False))
    CountingSettings.reads.clear()
    async with host.open(FauxModel(script), settings=counting, tools=[lookup]) as h:
        for i in range(3):
            sub = await h.root.submit(f"question {i}")
            assert await sub.wait() == r.Answered(f"answer {i}", 4 * i + 4)
    assert CountingSettings.reads == []
    assert counting.restart_limit == 3 and CountingSettings.reads == ["restart_limit"]  # the counter counts
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result", "assistant:stop"] * 3


async def _lookup(args, api, ctx):
    return "found"


async def test_a_provider_error_is_retried_after_the_backoff_shown_in_live(host):
    model = FauxModel([faux.error("Overloaded", kind="overloaded", status_code=529, retry_after=5.0),
                       faux.reply("Fine now")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        until = await host.clock.wait_for_timer("retry:1")
        assert until == host.clock.now() + 5.0  # raised to the provider's retry-after
        assert h.root.live().generation == r.GenerationLive(
            1, retry=r.RetryLive(1, until, "Overloaded", "overloaded", "faux", 529))
        host.clock.advance(5.0)
        assert await sub.wait() == r.Answered("Fine now", 2)
    assert await host.transcript() == ["user", "assistant:stop"]


async def test_a_non_retryable_provider_error_ends_the_run_with_model_error(host):
    model = FauxModel([faux.error("Invalid API key", kind="auth", status_code=401)])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        assert await sub.wait() == r.Unanswered("model_error", "Invalid API key")
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sub.id,), "model_error", "Invalid API key", "hi"),
                                       usage=used(1))
    assert model.calls == 1


async def test_attempts_never_exceed_max_retries_plus_one(host):
    policy = durable.RetryPolicy(max_retries=2, base_delay=1.0)
    model = FauxModel([faux.error("boom", kind="server", status_code=500)] * 5)
    async with host.open(model, settings=settings(retry=policy)) as h:
        sub = await h.root.submit("hi")
        for attempt in (1, 2):
            await host.clock.wait_for_timer("retry:1")
            host.clock.advance(2.0 ** (attempt - 1))
        assert await sub.wait() == r.Unanswered("model_error", "boom")
    assert [q.attempt for q in model.requests] == [1, 2, 3]


async def test_partials_are_committed_at_most_once_per_persist_within_window_counted_from_the_stream_start(host):
    text = "abcdefgh" * 4
    model = FauxModel([faux.hang(text)], token_size=1)
    st = attrs.evolve(settings(), progress=durable.Progress(persist_within=3600.0))
    partials = []
    async with host.open(model, settings=st) as h:
        sub = await h.root.submit("hi")

        async def watch():
            async for live in h.root.follow():
                if live.generation is not None and live.generation.message.text:
                    partials.append(live.generation.message.text)

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            await model.wait_until(lambda: model.delivered == len(text))
            await h.root.abort()
            await sub.wait()
            tg.cancel_scope.cancel()
    # The first window starts with the stream: nothing streamed within it is committed on its own
    # (a crash or a stop loses at most that window; an answer that ends within it costs no flush).
    assert partials == []
