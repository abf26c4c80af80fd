"""Faults other than crashes (docs/spec.md §5): a full disk, a tool or kind that raises."""

from __future__ import annotations

import base64
import random

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux

from .conftest import settings

pytestmark = pytest.mark.anyio


def noise(n: int, seed: int = 0) -> str:
    """`n` characters that do not compress (base64 of random bytes): a long body of it is stored
    as it is, never packed (`durable.storage.packing`), so it fills the pages a test leaves."""
    return base64.b64encode(random.Random(seed).randbytes(n)).decode()[:n]


async def set_page_limit(h, pages):
    inner = h.storage.inner
    await inner.call_in_writer(lambda c: c.execute(f"PRAGMA max_page_count = {pages}").fetchone())


async def page_count(h):
    return await h.storage.inner.call_in_writer(lambda c: c.execute("PRAGMA page_count").fetchone()[0])


async def test_a_full_disk_refuses_the_submit_cleanly_and_loses_nothing_once_space_is_back(host):
    model = FauxModel([faux.reply("fine")])
    async with host.open(model, settings=settings()) as h:
        await set_page_limit(h, await page_count(h))
        with pytest.raises(durable.DiskFull, match=host.path):
            await h.root.submit(noise(200_000))
        assert h.root.live() == r.Live()
        assert await h.tasks() == []
        await set_page_limit(h, 1_000_000)
        assert await (await h.root.submit("hello")).wait() == r.Answered("fine", 3)
    assert await host.transcript() == ["user", "assistant:stop"]


async def test_a_full_disk_during_a_run_is_reported_and_the_run_finishes_once_space_is_back(host):
    errors = anyio.Event()
    big = noise(300_000)
    model = FauxModel([faux.reply(big), faux.reply(big)])

    def report(event):
        host.reports.append(event)
        if event.type == "error":
            errors.set()

    async with host.open(model, settings=settings(progress=durable.Progress(persist_within=3600.0))) as h:
        h.report._callback = report
        await set_page_limit(h, await page_count(h) + 2)
        sub = await h.root.submit("write a lot")
        await errors.wait()
        assert "could not commit and will try again" in host.reports[0].message
        await set_page_limit(h, 1_000_000)
        assert await sub.wait() == r.Answered(big, 2)
    entries = await host.entries()
    assert entries[-1].text == big and entries[-1].stop_reason == "stop"
    assert [e for e in await host.transcript()].count("assistant:stop") == 1


SENT = noise(300_000)


async def test_an_unsafe_tool_whose_result_commit_is_refused_runs_once_and_its_result_reaches_the_model(host):
    # Defect 3 of the engine-shape issue: the refused commit used to make the scheduler run the
    # task again from the file, where it was still `running`: one execution per backoff.
    executions: list[str] = []
    refusals = []
    three_refusals = anyio.Event()
    harness = []

    async def send_email(args, api, ctx):
        executions.append(ctx.call_id)
        await set_page_limit(harness[0], await page_count(harness[0]) + 2)  # the disk fills up now
        return "sent: " + SENT

    def report(event):
        host.reports.append(event)
        if event.type == "error":
            refusals.append(event)
            if len(refusals) == 3:
                three_refusals.set()

    tool = durable.define_tool("send_email", "Send an email", execute=send_email)  # unsafe
    model = FauxModel([faux.reply("", tool_calls=[faux.call("send_email", {}, id="m1")]), faux.reply("Sent.")])
    async with host.open(model, settings=settings(), tools=[tool]) as h:
        harness.append(h)
        h.report._callback = report
        sub = await h.root.submit("email Bob")
        await three_refusals.wait()  # refused three times, retried in memory each time
        assert [x.message.split(":")[0] for x in refusals] == ["Task 2 (tool), task 1 (generation) could not commit and will try again"] * 3
        await set_page_limit(h, 1_000_000)
        assert await sub.wait() == r.Answered("Sent.", 4)
    assert executions == ["m1"]
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result", "assistant:stop"]
    result = model.requests[1].messages[-1]
    assert (result.call_id, result.content, result.is_error) == ("m1", "sent: " + SENT, False)


async def test_a_bug_in_a_kind_faults_only_that_task_and_ends_its_run_visibly(host):
    class Broken(FauxModel):
        def stream(self, request):
            raise ZeroDivisionError("oops")

    async with host.open(Broken([]), settings=settings()) as h:
        sub = await h.root.submit("hi")
        result = await sub.wait()
        assert result.reason == "faulted"
        assert result.detail == "Task 1 (generation) raised ZeroDivisionError: oops"
        assert (await h.task(1)).state == r.Terminal(r.Faulted(r.ErrorInfo(result.detail, r.ErrorDetail("exception"))))
        assert (await (await h.conversation("other").submit("again")).wait()).reason == "faulted"
    assert [x.type for x in host.reports] == ["error", "task_faulted", "error", "task_faulted"]


@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_an_error_raised_in_the_harness_block_reaches_the_caller_unwrapped_and_closes_cleanly(host, anyio_backend):
    model = FauxModel([faux.hang("par")])
    with pytest.raises(KeyError, match="mine"):
        async with host.open(model, settings=settings()) as h:
            await h.root.submit("hi")
            await model.wait_for_requests(1)
            raise KeyError("mine")
    async with host.open(FauxModel([]), settings=settings()) as h:
        task = await h.task(1)
        assert (task.state, task.restarts) == (r.Pending(), 0)  # a clean close, not a crash


@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_an_error_raised_in_the_harness_block_stays_unwrapped_when_the_scope_around_it_is_cancelled(
        host, anyio_backend):
    """The scope around the harness cancelled as the block raises (a deadline that passes during
    the close): the caller still gets its own error, not a group holding it beside a
    cancellation (trio gave `ExceptionGroup([KeyError])`)."""
    model = FauxModel([faux.hang("par")])
    with pytest.raises(KeyError, match="mine"), anyio.CancelScope() as scope:
        async with host.open(model, settings=settings()) as h:
            await h.root.submit("hi")
            await model.wait_for_requests(1)
            scope.cancel()
            raise KeyError("mine")
    async with host.open(FauxModel([]), settings=settings()) as h:
        task = await h.task(1)
        assert (task.state, task.restarts) == (r.Pending(), 0)  # a clean close, not a crash


async def test_unknown_tasks_and_submissions_are_clear_errors(host):
    async with host.open(FauxModel([]), settings=settings()) as h:
        with pytest.raises(durable.UnknownTask, match=f"Task 99 does not exist in .*{host.path}"):
            await h.wait_for_task(99)
        with pytest.raises(durable.UnknownSubmission, match="Submission sub_nope does not exist"):
            await h.root.submission("sub_nope").wait()
        with pytest.raises(ValueError, match="non-empty text"):
            await h.root.submit("   ")
    with pytest.raises(durable.HarnessClosed, match="closed"):
        await h.root.submit("late")


async def test_a_session_file_in_a_missing_folder_is_a_clear_storage_error(tmp_path):
    path = tmp_path / "no" / "such" / "agent.sqlite"
    with pytest.raises(durable.StorageError, match=f"Session file {path} cannot be opened: No such file"):
        async with durable.open_harness(path, model=FauxModel([])):
            pass


async def test_one_storage_object_can_be_opened_again_after_a_close(tmp_path):
    store = durable.SQLiteStorage(tmp_path / "s.sqlite")
    async with durable.open_harness(store, model=FauxModel([faux.reply("one")])) as h:
        assert await (await h.root.submit("first")).wait() == r.Answered("one", 2)
    async with durable.open_harness(store, model=FauxModel([faux.reply("two")])) as h:
        assert await (await h.root.submit("second")).wait() == r.Answered("two", 4)
        assert len(await h.root.entries()) == 4


async def test_an_undecodable_row_ends_the_run_visibly_naming_the_file_instead_of_retrying_forever(host):
    # Issue 13 item 3: a permanent error used to be reported "will try again" forever.
    async with host.open(FauxModel([faux.reply("first answer")]), settings=settings()) as h:
        assert await (await h.root.submit("first")).wait() == r.Answered("first answer", 2)
    import sqlite3

    from .test_context import Reading

    conn = sqlite3.connect(host.path)
    with conn:
        conn.execute("""UPDATE entries SET body = '{"type":"nope"}' WHERE seq = 2""")
    conn.close()
    model = Reading([faux.reply("never sent")])  # found when read (docs/guarantees.md), as every provider reads
    async with host.open(model, settings=settings()) as h:
        with anyio.fail_after(10):
            result = await (await h.root.submit("second")).wait()
        assert result.reason == "storage_error"
        assert result.detail.startswith(f"Task 2 (generation) stopped: Entry 2 of conversation 'root' in {host.path}")
        assert h.root.live().run_failure.reason == "storage_error"
    assert model.requests == []
    assert [(x.type, getattr(x, "reason", None)) for x in host.reports] == [("error", None),
                                                                            ("task_faulted", "storage_error")]


async def test_a_run_that_faults_during_its_tool_round_stops_and_answers_the_calls_still_running(host, monkeypatch):
    """A bug in the generation while its tool round runs: the run ends faulted, and the call still
    running is stopped and answered (its partial output kept), so no tool task outlives its run."""
    from durable.tasks.generation.kind import GenerationKind

    started = anyio.Event()

    async def slow(args, api, ctx):
        await api.output("half")
        started.set()
        await anyio.sleep_forever()

    async def broken_round(self, rt, task):
        await started.wait()
        raise ZeroDivisionError("oops in the round")

    monkeypatch.setattr(GenerationKind, "_tool_round", broken_round)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("slow", {}, id="a")])])
    tool = durable.define_tool("slow", "never ends", execute=slow)
    async with host.open(model, settings=settings(), tools=[tool]) as h:
        result = await (await h.root.submit("go")).wait()
        assert result == r.Unanswered("faulted", "Task 1 (generation) raised ZeroDivisionError: oops in the round")
        assert [(t.id, t.kind, type(t.state).__name__) for t in await h.tasks()] == [
            (1, "generation", "Terminal"), (2, "tool", "Terminal")]
        assert h.root.live().tools == ()
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error"]
    call = (await host.entries())[2]
    assert call.content == "The tool call was stopped: its run faulted\nPartial output:\nhalf"
    assert call.diagnostics == (r.Diagnostic("error", "faulted", "The tool call was stopped: its run faulted"),)
    assert [x.type for x in host.reports] == ["error", "task_faulted"]
