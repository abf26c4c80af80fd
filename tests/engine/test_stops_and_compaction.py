"""Abort, busy input (queue / interrupt / reject) and compaction, each crash-safe."""

from __future__ import annotations

import time

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.models.faux import HangingCancel
from durable.tasks.cancel import CancelInput
from durable.testing import crash

from .conftest import partial_is, settings, until_live, used

pytestmark = pytest.mark.anyio


def hang_tool(name="slow"):
    started = anyio.Event()

    async def execute(args, api, ctx):
        await api.output("half")
        started.set()
        await anyio.sleep_forever()

    return durable.define_tool(name, "never ends", execute=execute), started


async def test_abort_while_streaming_keeps_the_partial_and_ends_the_run_aborted(host):
    model = FauxModel([faux.hang("Once upon")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("story")
        await until_live(h, partial_is("Once upon"))
        await h.root.abort()
        assert await sub.wait() == r.Unanswered("aborted", "The run was aborted")
        assert (await h.task(1)).state == r.Terminal(r.Aborted())
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sub.id,), "aborted", "The run was aborted", "story"),
                                       usage=used(1))
    assert await host.transcript() == ["user", "assistant:aborted"]


async def test_abort_during_a_tool_round_answers_every_call_and_cancels_running_tools(host):
    slow, started = hang_tool()
    calls = [faux.call("slow", {}, id="a"), faux.call("missing", {}, id="b")]
    model = FauxModel([faux.reply("", tool_calls=calls)])
    async with host.open(model, settings=settings(), tools=[slow]) as h:
        sub = await h.root.submit("go")
        await started.wait()
        await h.root.abort()
        assert await sub.wait() == r.Unanswered("aborted", "The run was aborted")
        assert [t.state for t in await h.tasks(kind="tool")] == [r.Terminal(r.Aborted()), r.Terminal(r.Done())]
    entries = await host.entries()
    assert [type(e).__name__ for e in entries] == ["UserEntry", "AssistantEntry", "ToolResultEntry", "ToolResultEntry"]
    assert entries[2] == r.ToolResultEntry("a", "slow", "The tool call was aborted\nPartial output:\nhalf", True,
                                           (r.Diagnostic("error", "aborted", "The tool call was aborted"),))
    assert entries[3].call_id == "b" and entries[3].diagnostics[0].code == "unknown_tool"


def crash_in_the_abort_handler(h):
    """Crash right after the abort handler committed `running` (before its ending commit)."""

    def on_commit(number, batch):
        if any(t.kind == "generation" and t.stop is not None and t.state == r.Running() for t in batch.tasks):
            crash(h)

    h.storage.on_commit = on_commit


async def test_an_abort_handler_cut_off_restart_limit_times_faults_the_run_at_once_and_its_job_is_cancelled_once(host):
    # Defect 1 of the engine-shape issue: the handler used to call the provider's cancel before
    # marking itself running, so a process dying there was never charged and looped forever.
    st = settings(restart_limit=2, stream=durable.StreamSettings(deferred=True))
    model = FauxModel([faux.hang()], deferred=True, poll_after=60.0)
    async with host.open(model, settings=st) as h:
        sub = await h.root.submit("think")
        await host.clock.wait_for_timer("poll:1")
        crash_in_the_abort_handler(h)
        await h.root.abort()
        await h.storage.crashed.wait()
    assert model.cancelled == []  # the handler itself never calls the provider
    model = FauxModel([], deferred=True)
    async with host.open(model, settings=st) as h:
        assert (await h.task(1)).restarts == 1
        crash_in_the_abort_handler(h)
        await h.resume()
        await h.storage.crashed.wait()
    detail = "Abort handler of task 1 (generation) was cut off 2 times"
    model = FauxModel([], deferred=True)
    async with host.open(model, settings=st) as h:
        assert await h.root.submission(sub.id).wait() == r.Unanswered("aborted", detail)
        assert (await h.task(1)).state == r.Terminal(r.Faulted(r.ErrorInfo(detail, r.ErrorDetail("restart_limit"))))
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sub.id,), "aborted", detail, "think"),
                                       usage=used(1))  # the deferred job, counted with its intent
        cancel = await h.wait_for_task(2)  # the owed cancel, recorded by the ending commit
        assert (cancel.kind, cancel.input, cancel.state) == (
            "cancel", CancelInput(r.DeferredJob("g1-s1-a1", "faux-job-1"), 1, "faux"),
            r.Terminal(r.Done({"cancelled": True})))
    assert model.cancelled == ["faux-job-1"]
    assert [(x.type, x.reason) for x in host.reports] == [
        ("task_interrupted", "interrupted"), ("task_faulted", "restart_limit")]
    assert host.reports[-1] == durable.TaskFaulted(durable.TaskRef(1, "generation", "root"), "restart_limit", detail)


async def test_ending_a_run_never_waits_on_a_hanging_cancel_and_the_owed_cancel_ends_visibly_at_the_limit(host):
    # Defect 2 of the engine-shape issue: the run used to wait up to 30 s for the provider.
    st = settings(restart_limit=2, stream=durable.StreamSettings(deferred=True))
    model = HangingCancel([faux.hang()], deferred=True, poll_after=60.0)
    async with host.open(model, settings=st) as h:
        sub = await h.root.submit("think")
        await host.clock.wait_for_timer("poll:1")
        await h.root.abort()
        assert await sub.wait() == r.Unanswered("aborted", "The run was aborted")  # while the cancel hangs
        await model.wait_until(lambda: model.cancelled == ["faux-job-1"])
        assert (await h.task(2)).state == r.Running()
        crash(h)
    for restarts in (1, 2):
        model = HangingCancel([], deferred=True)
        async with host.open(model, settings=st) as h:
            assert ((await h.task(2)).state, (await h.task(2)).restarts) == (r.Pending(), restarts)
            await h.resume()
            if restarts == 1:  # below the limit the cancel is tried again (cancelling twice is harmless)
                await model.wait_until(lambda: model.cancelled == ["faux-job-1"])
                crash(h)
            else:
                detail = ("Cancelling deferred job faux-job-1 at faux was interrupted 2 times in a row; "
                          "it is not tried again")
                task = await h.wait_for_task(2)
                assert task.state == r.Terminal(r.Failed(r.ErrorInfo(detail, r.ErrorDetail("restart_limit"))))
                assert model.cancelled == []
    assert [(x.type, x.task.id, x.reason, x.restarts) for x in host.reports] == [
        ("task_interrupted", 2, "interrupted", 1), ("task_interrupted", 2, "restart_limit", 2)]
    assert host.reports[-1].detail == detail


async def test_an_owed_cancel_that_hangs_is_given_up_after_its_bound_with_a_report(host):
    st = settings(stream=durable.StreamSettings(deferred=True))
    model = HangingCancel([faux.hang()], deferred=True, poll_after=60.0)
    async with host.open(model, settings=st) as h:
        sub = await h.root.submit("think")
        await host.clock.wait_for_timer("poll:1")
        await h.root.abort()
        assert await sub.wait() == r.Unanswered("aborted", "The run was aborted")
        await host.clock.wait_for_timer("cancel:2")
        host.clock.advance(30.0)
        task = await h.wait_for_task(2)
    message = "Cancelling deferred job faux-job-1 at faux failed: faux did not answer within 30 s"
    assert task.state == r.Terminal(r.Failed(r.ErrorInfo(message, r.ErrorDetail("timeout"))))
    assert [(x.type, x.message) for x in host.reports] == [("error", message)]


async def test_interrupt_while_streaming_answers_the_new_input_next(host):
    model = FauxModel([faux.hang("I was say"), faux.reply("Sure, the new question.")])
    async with host.open(model, settings=settings()) as h:
        first = await h.root.submit("old question")
        await until_live(h, partial_is("I was say"))
        second = await h.root.submit("new question", when_busy="interrupt")
        assert await first.wait() == r.Unanswered("interrupted", "The run was interrupted by a new input")
        assert await second.wait() == r.Answered("Sure, the new question.", 4)
    assert await host.transcript() == ["user", "assistant:aborted", "user", "assistant:stop"]
    assert [m.text for m in model.requests[1].messages] == ["old question", "new question"]


async def test_interrupt_during_a_tool_round_gives_unanswered_calls_an_interrupted_result(host):
    slow, started = hang_tool()
    model = FauxModel([faux.reply("", tool_calls=[faux.call("slow", {}, id="a")]), faux.reply("New answer")])
    async with host.open(model, settings=settings(), tools=[slow]) as h:
        first = await h.root.submit("old")
        await started.wait()
        second = await h.root.submit("new", when_busy="interrupt")
        assert await first.wait() == r.Unanswered("interrupted", "The run was interrupted by a new input")
        assert await second.wait() == r.Answered("New answer", 5)
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "user", "assistant:stop"]
    result = (await host.entries())[2]
    assert result.content == "The tool call was interrupted by a new input\nPartial output:\nhalf"
    assert result.diagnostics == (r.Diagnostic("error", "interrupted", "The tool call was interrupted by a new input"),)


async def test_queued_inputs_are_answered_after_the_run_in_one_run(host):
    model = FauxModel([faux.hang("..."), faux.reply("both answered")])
    async with host.open(model, settings=settings()) as h:
        first = await h.root.submit("one")
        await until_live(h, partial_is("..."))
        second = await h.root.submit("two")
        third = await h.root.submit("three", when_busy="queue")
        assert h.root.live().run == r.Run(1, (first.id,))
        await h.root.abort()
        assert await second.wait() == r.Answered("both answered", 5)
        assert await third.wait() == r.Answered("both answered", 5)
        assert (await second.get()).task_id == (await third.get()).task_id == 2
    assert await host.transcript() == ["user", "assistant:aborted", "user", "user", "assistant:stop"]


async def test_reject_refuses_an_input_while_busy_and_loses_nothing(host):
    model = FauxModel([faux.hang("...")])
    async with host.open(model, settings=settings()) as h:
        await h.root.submit("one")
        await until_live(h, partial_is("..."))
        with pytest.raises(durable.ConversationBusy, match="Conversation 'root' is busy \\(run of task 1\\)"):
            await h.root.submit("two", when_busy="reject")
    assert await host.transcript() == ["user"]


# --------------------------------------------------------------------------- compaction


async def three_turns(h):
    for i in range(3):
        assert await (await h.root.submit(f"q{i}")).wait() == r.Answered(f"a{i}", 2 * i + 2)


async def test_manual_compaction_replaces_older_entries_in_the_next_request_only(host):
    model = FauxModel([faux.reply(f"a{i}") for i in range(3)] + [faux.reply("SUMMARY"), faux.reply("a3")])
    async with host.open(model, settings=settings(compaction=durable.Compaction(keep_last=2))) as h:
        await three_turns(h)
        tid = await h.root.compact()
        assert (await h.wait_for_task(tid)).state == r.Terminal(r.Done({"first_kept_seq": 5}))
        assert await (await h.root.submit("q3")).wait() == r.Answered("a3", 9)
    assert await host.transcript() == ["user", "assistant:stop"] * 3 + ["compaction", "user", "assistant:stop"]
    sent = model.requests[4].messages
    assert sent[0] == r.CompactionEntry("SUMMARY", 5, sent[0].usage)
    assert [getattr(m, "text", None) for m in sent[1:]] == ["q2", "a2", "q3"]


async def test_a_context_past_the_threshold_compacts_before_the_request(host):
    model = FauxModel([faux.reply("x" * 400), faux.reply("SUMMARY"), faux.reply("short")], context_window=200)
    st = settings(compaction=durable.Compaction(threshold=0.5, keep_last=1))
    async with host.open(model, settings=st) as h:
        assert await (await h.root.submit("first")).wait() == r.Answered("x" * 400, 2)
        assert await (await h.root.submit("second")).wait() == r.Answered("short", 5)
    assert await host.transcript() == ["user", "assistant:stop", "user", "compaction", "assistant:stop"]
    assert [type(m).__name__ for m in model.requests[2].messages] == ["CompactionEntry", "UserEntry"]


async def test_a_hanging_compaction_cut_off_at_restart_limit_1_fails_and_leaves_the_conversation(host):
    st = settings(restart_limit=1, compaction=durable.Compaction(keep_last=2))
    model = FauxModel([faux.reply(f"a{i}") for i in range(3)] + [faux.hang("SUMM")])
    async with host.open(model, settings=st) as h:
        await three_turns(h)
        tid = await h.root.compact()
        await model.wait_for_requests(4)
        crash(h)
    message = "Compaction was interrupted once"
    async with host.open(FauxModel([]), settings=st) as h:
        task = await h.wait_for_task(tid)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(message, r.ErrorDetail("restart_limit"))))
        assert h.root.live() == r.Live(compaction_failure=r.CompactionFailure(tid, "manual", message),
                                       usage=used(3, 30, 3))  # the three turns; the summary never answered
    assert "compaction" not in await host.transcript()
    assert host.reports == [durable.TaskInterrupted(durable.TaskRef(tid, "compaction", "root"), "restart_limit", 1, message)]


# --------------------------------------------------------------------------- the public API on asyncio


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_the_public_api_works_on_asyncio_and_trio(tmp_path, anyio_backend):
    async def lookup(args, api, ctx):
        await api.output("...")
        return "42"

    tools = [durable.define_tool("lookup", "look up", replay="safe", execute=lookup)]
    model = FauxModel([faux.reply("", tool_calls=[faux.call("lookup", {})]), faux.reply("It is 42.")])
    path = tmp_path / "s.sqlite"
    async with durable.open_harness(path, model=model, tools=tools) as h:
        began = time.monotonic()
        sub = await h.root.submit("question")
        assert await sub.wait() == r.Answered("It is 42.", 4)
        elapsed = time.monotonic() - began
        snapshots = []
        async for live in h.root.follow():
            snapshots.append(live)
            break
        [live] = snapshots
        assert live == r.Live(usage=used(2, 20, 4, tool_calls=1, tool_seconds=live.usage.tool_seconds))
        assert 0 < live.usage.tool_seconds <= elapsed  # on the system clock, within the run
    async with durable.open_harness(path, model=FauxModel([])) as h:
        assert await h.root.submission(sub.id).wait() == r.Answered("It is 42.", 4)
        assert [e.entry.__class__.__name__ for e in await h.root.entries()] == [
            "UserEntry", "AssistantEntry", "ToolResultEntry", "AssistantEntry"]
