"""The crash-testing toolkit itself: the checker names each kind of violation, the crashable
harness crashes and reopens as a process would, the logs survive in files, and settle()
detects quiescence from events."""

from __future__ import annotations

import os

import attrs
import pytest

import durable
from durable import records as r
from durable.models import faux
from durable.storage import MemoryStorage, SQLiteStorage
from durable.storage.protocol import Batch
from durable.tasks.generation.records import GenerationInput, Prepare, Request, ToolRound
from durable.tasks.tool import ToolInput, ToolProgress
from durable.testing import (
    ExecutionLog,
    FakeClock,
    FauxJobLedger,
    by_input,
    check_commit_history,
    check_invariants,
    crash,
    crashable_harness,
    describe_session,
    explore,
    scenarios,
    settle,
)

pytestmark = pytest.mark.anyio

SETTINGS = durable.Settings(progress=durable.Progress(0, 0))


# --------------------------------------------------------------------------- building sessions by hand


def gen_task(tid=1, *, state=r.Pending(), checkpoint=Prepare(1), subs=("s1",)):
    return r.Task(tid, "root", "generation", GenerationInput(tuple(subs)), state, checkpoint)


def tool_task(tid, call, *, parent=1, state=r.Pending(), replay="unsafe"):
    return r.Task(tid, "root", "tool", ToolInput(call, replay), state, ToolProgress(), parent_id=parent)


def user(seq, text="hi", sid="s1"):
    return r.StoredEntry("root", seq, r.UserEntry(text, sid))


def entry(seq, e):
    return r.StoredEntry("root", seq, e)


async def memory_session(*batches: Batch) -> MemoryStorage:
    store = MemoryStorage()
    await store.open()
    for b in batches:
        await store.commit(b)
    return store


def answered_run() -> Batch:
    """A run that answered its input: the shape every check accepts."""
    done = gen_task(state=r.Terminal(r.Done({"seq": 2})), checkpoint=Request(1))
    sub = r.Submission("s1", "root", "hi", seq=1, status=r.Answered(), task_id=1)
    return Batch(tasks=[done], entries=[user(1), entry(2, r.AssistantEntry("Hello", "stop"))], submissions=[sub],
                 live={"root": r.Live()})


async def test_a_session_that_keeps_every_invariant_has_no_violation():
    store = await memory_session(answered_run())
    assert check_invariants(store, acknowledged=["s1"], clean_close=True, quiescent=True) == []


async def test_an_acknowledged_submission_missing_from_the_file_is_named():
    store = await memory_session(answered_run())
    assert check_invariants(store, acknowledged=["s1", "s_lost"]) == [
        "Submission s_lost was acknowledged (submit returned) but is not in the file"
    ]


async def test_a_queued_input_that_no_run_will_take_would_never_settle():
    store = await memory_session(answered_run(), Batch(submissions=[r.Submission("s2", "root", "again")]))
    assert check_invariants(store) == [
        "Submission s2 is queued in conversation 'root', but no run is active there to take it next: "
        "it would never settle"
    ]


async def test_an_input_left_queued_by_a_run_that_ended_is_found():
    batch = answered_run()
    batch.submissions = [attrs.evolve(batch.submissions[0], status=r.Queued())]
    store = await memory_session(batch)
    assert check_invariants(store) == [
        "Submission s1 is still queued though its run (task 1) ended done: it will never settle"
    ]


async def test_a_tool_call_without_a_result_and_one_with_two_are_both_named():
    a, b = r.ToolCall("c1", "lookup", "{}"), r.ToolCall("c2", "charge", "{}")
    done = gen_task(state=r.Terminal(r.Done({"seq": 6})), checkpoint=Prepare(1))
    sub = r.Submission("s1", "root", "hi", seq=1, status=r.Answered(), task_id=1)
    store = await memory_session(Batch(
        tasks=[done, tool_task(2, a, state=r.Terminal(r.Done())), tool_task(3, b, state=r.Terminal(r.Done()))],
        entries=[user(1), entry(2, r.AssistantEntry("", "tool_use", (a, b))),
                 entry(3, r.ToolResultEntry("c1", "lookup", "x")), entry(4, r.ToolResultEntry("c1", "lookup", "y")),
                 entry(5, r.ToolResultEntry("c9", "ghost", "z")), entry(6, r.AssistantEntry("Done", "stop"))],
        submissions=[sub], live={"root": r.Live()}))
    assert check_invariants(store) == [
        "Tool call c1 (lookup) of assistant entry 2 in conversation 'root' has 2 results (seqs [3, 4])",
        "Tool call c2 (charge) of assistant entry 2 in conversation 'root' has no result",
        "The tool result at seq 5 of conversation 'root' answers call c9, which no assistant entry made",
    ]


async def test_a_tool_round_in_progress_is_not_missing_its_results():
    a = r.ToolCall("c1", "lookup", "{}")
    waiting = gen_task(state=r.Waiting(on=(2,)), checkpoint=ToolRound(2, (a,), (2,)))
    sub = r.Submission("s1", "root", "hi", seq=1, task_id=1)
    store = await memory_session(Batch(
        tasks=[waiting, tool_task(2, a, state=r.Running())],
        entries=[user(1), entry(2, r.AssistantEntry("", "tool_use", (a,)))],
        submissions=[sub], live={"root": r.Live(run=r.Run(1, ("s1",)))}))
    assert check_invariants(store) == []
    assert check_invariants(store, clean_close=True) == ["Task 2 (tool) is still running after a clean close"]
    assert check_invariants(store, quiescent=True) == [
        "Submission s1 is still queued after the harness settled (its run, task 1, is waiting)",
        "Task 2 (tool) is still running after the harness settled: it never finished",
    ]


async def test_attempts_past_the_retry_policy_and_a_double_charge_are_named():
    stopped = "The host stopped while the model was answering, on attempt 2"
    done = gen_task(state=r.Terminal(r.Done({"seq": 5})), checkpoint=Request(5))
    sub = r.Submission("s1", "root", "hi", seq=1, status=r.Answered(), task_id=1)
    store = await memory_session(Batch(
        tasks=[done],
        entries=[user(1), entry(2, r.AssistantEntry("a", "aborted", error=stopped, attempt=2, interrupted=True)),
                 entry(3, r.AssistantEntry("b", "aborted", error=stopped, attempt=2, interrupted=True)),
                 entry(4, r.AssistantEntry("c", "error", error="boom", attempt=1)),
                 entry(5, r.AssistantEntry("Hello", "stop", attempt=5))],
        submissions=[sub], live={"root": r.Live()}))
    policy = durable.Settings(retry=durable.RetryPolicy(max_retries=2))
    assert check_invariants(store, settings=policy) == [
        "Turn 1 of the run of task 1 has an answer of attempt 5, past max_retries + 1 = 3",
        "The attempt numbers of turn 1 of the run of task 1 go back: [2, 2, 1, 5]",
        "Attempt 2 of turn 1 of the run of task 1 was charged as interrupted 2 times (an interruption is charged once)",
        "Task 1 (generation) is at attempt 5, past max_retries + 1 = 3",
    ]


async def test_a_live_document_showing_an_ended_run_is_named():
    batch = answered_run()
    batch.live = {"root": r.Live(run=r.Run(1, ("s1",)))}
    store = await memory_session(batch)
    assert check_invariants(store) == [
        "The live document of conversation 'root' shows the run of task 1, which ended done: a UI would show it "
        "busy forever"
    ]


async def test_an_unsafe_tool_run_twice_and_a_tool_run_without_intent_are_named(tmp_path):
    a = r.ToolCall("c1", "charge", "{}")
    done = gen_task(state=r.Terminal(r.Done({"seq": 4})), checkpoint=Request(1))
    sub = r.Submission("s1", "root", "hi", seq=1, status=r.Answered(), task_id=1)
    store = await memory_session(Batch(
        tasks=[done, tool_task(2, a, state=r.Terminal(r.Done()))],
        entries=[user(1), entry(2, r.AssistantEntry("", "tool_use", (a,))), entry(3, r.ToolResultEntry("c1", "charge", "ok")),
                 entry(4, r.AssistantEntry("Done", "stop"))],
        submissions=[sub], live={"root": r.Live()}))
    log = ExecutionLog(tmp_path / "executions.jsonl")
    log.record("c1", "charge", "unsafe", 1)
    log.record("c1", "charge", "unsafe", 2)
    log.record("c7", "charge", "unsafe", 1)
    again = ExecutionLog(tmp_path / "executions.jsonl")  # what a later process reads back
    assert again.counts() == {"c1": 2, "c7": 1}
    assert check_invariants(store, executions=again) == [
        "Unsafe tool charge ran 2 times for call c1 (task 2, attempts [1, 2])",
        "A tool ran for call c7, but no tool task in the file holds that call (it ran without a committed intent)",
    ]


async def test_a_deferred_job_submitted_twice_and_left_open_is_named(tmp_path):
    store = await memory_session(answered_run())
    ledger = FauxJobLedger(tmp_path / "jobs.jsonl")
    step = {"type": "reply", "text": "x", "tool_calls": [], "stop_reason": "", "usage": None}
    ledger.record("submit", handle="job-a", key="g1-s1-a1", step=step, polls=1, poll_after=1.0)
    ledger.record("submit", handle="job-b", key="g1-s1-a1", step=step, polls=1, poll_after=1.0)
    ledger.record("fetch", handle="job-b", result="final")
    assert check_invariants(store, jobs=str(tmp_path / "jobs.jsonl")) == [
        "The deferred job of attempt g1-s1-a1 was submitted 2 times (job-a, job-b)",
        "Deferred job job-a (attempt g1-s1-a1) is still open at the provider, but its run (task 1) ended done",
    ]


async def test_a_damaged_file_fails_the_integrity_check(tmp_path):
    path = tmp_path / "s.sqlite"
    store = SQLiteStorage(path)
    await store.open()
    for i in range(40):  # enough rows for several pages
        batch = answered_run()
        batch.entries = [user(2 * i + 1, "x" * 500), entry(2 * i + 2, r.AssistantEntry("y" * 500, "stop"))]
        await store.commit(batch)
    await store.close()
    size = os.path.getsize(path)
    with open(path, "r+b") as f:  # scribble over the middle of the file, past the header page
        f.seek(size // 2)
        f.write(b"\x13" * 4096)
    found = check_invariants(path)
    assert found and any("integrity_check" in v or "cannot be read" in v or "does not load" in v for v in found), found


async def test_the_commit_history_shows_an_input_settled_twice():
    sub = r.Submission("s1", "root", "hi", seq=1, task_id=1)
    history = [Batch(submissions=[attrs.evolve(sub, status=r.Answered())]),
               Batch(submissions=[attrs.evolve(sub, status=r.Unanswered("aborted", "The run was aborted"))])]
    assert check_commit_history(history) == ["Submission s1 was settled 2 times (done, unanswered)"]


@pytest.mark.parametrize(("again", "found"), [
    ({}, ["Attempt 1 of turn 1 of task 1 was charged as interrupted by 2 commits"]),
    ({"output_retries": 1}, []),  # the answer was sent back for its schema: a new model turn
    ({"model": 1}, []),  # the run fell back to another member: its attempts start again
])
async def test_the_commit_history_counts_an_interrupted_attempt_charged_twice_within_one_model_turn(again, found):
    """Attempt numbers start again at 1 after a tool round, an answer sent back for not matching
    the output schema, and a fallback to another member; only a second charge in the same turn
    is a violation (the explorer found the last two reported before, at depth 2)."""
    from durable.tasks.generation.records import AttemptFailure, Retry, RunNotes
    from tests.storage.builders import task

    def charged(**notes: int) -> r.Task:
        retry = Retry(1, 5.0, AttemptFailure("cut off", "interrupted"), notes=RunNotes(**notes))
        return task(1, state=r.Sleeping(5.0), checkpoint=retry)

    between = task(1, state=r.Running(), checkpoint=Request(2))
    assert check_commit_history([Batch(tasks=[charged()]), Batch(tasks=[between]),
                                 Batch(tasks=[charged(**again)])]) == found


# --------------------------------------------------------------------------- the crashable harness


async def test_a_crashable_harness_dies_at_its_commit_and_the_file_reopens_as_after_a_kill(tmp_path):
    path = tmp_path / "s.sqlite"
    clock = FakeClock()
    model = by_input({"hi": [faux.reply("Hello there")]}, token_size=4)
    async with crashable_harness(path, model=model, settings=SETTINGS, clock=clock, crash_after=3) as h:
        sub = await h.root.submit("hi")
        await h.storage.crashed.wait()
    assert h.storage.commit_calls == 3
    assert len(h.storage.history) == 3 and h.storage.history[0].startswith("task 1 generation ")
    assert check_invariants(path, acknowledged=[sub.id]) == []
    reports = []
    async with crashable_harness(path, model=model, settings=SETTINGS, clock=clock, report=reports.append) as h:
        settled = await settle(h, clock)
        assert settled.quiescent
        assert await h.root.submission(sub.id).wait() == r.Answered("Hello there", 3)
    assert [x.reason for x in reports] == ["interrupted"]
    assert check_invariants(path, acknowledged=[sub.id], clean_close=True, quiescent=True) == []


async def test_a_crash_during_the_open_commit_leaves_a_dead_harness_and_a_reopenable_file(tmp_path):
    path = tmp_path / "s.sqlite"
    clock = FakeClock()
    model = by_input({"hi": [faux.hang("Hel")]})
    async with crashable_harness(path, model=model, settings=SETTINGS, clock=clock, crash_after=2) as h:  # the input, with the request; the partial
        await h.root.submit("hi")
        await h.storage.crashed.wait()
    # The next open charges the generation (commit 1) and dies right after it.
    async with crashable_harness(path, model=model, settings=SETTINGS, clock=clock, crash_after=1) as h:
        with pytest.raises(durable.HarnessClosed):
            await h.root.submit("again")
    async with crashable_harness(path, model=by_input(), settings=SETTINGS, clock=clock) as h:
        task = await h.task(1)
        # Charged once: the second open's commit made it pending, and a pending task was not running.
        assert (task.state, task.restarts) == (r.Pending(), 1)


async def test_crash_of_the_harness_in_the_block_writes_nothing_more(tmp_path):
    path = tmp_path / "s.sqlite"
    clock = FakeClock()
    async with crashable_harness(path, model=by_input({"hi": [faux.hang("Hel")]}), settings=SETTINGS,
                                 clock=clock) as h:
        await h.root.submit("hi")
        await settle(h, clock, stuck_after=0.05)  # the model hangs: active, never settles
        before = h.storage.commit_calls
        crash(h)
    assert h.storage.commit_calls == before
    assert "running/request" in describe_session(path)


async def test_settle_reports_a_harness_that_cannot_settle_instead_of_hanging(tmp_path):
    clock = FakeClock()
    async with crashable_harness(tmp_path / "s.sqlite", model=by_input({"hi": [faux.hang("Hel")]}),
                                 settings=SETTINGS, clock=clock) as h:
        await h.root.submit("hi")
        settled = await settle(h, clock, stuck_after=0.05)
        assert not settled.quiescent
        assert settled.stuck.startswith("the harness did not settle: task 1 (generation) is running")
        crash(h)


async def test_settle_fires_durable_timers_on_the_fake_clock_and_answers_client_tools(tmp_path):
    clock = FakeClock()
    model = by_input({"hi": [lambda req: faux.error("busy", kind="overloaded") if req.attempt < 3
                             else faux.reply("", tool_calls=[faux.call("ask")]), faux.reply("Thanks")]})
    ask = durable.define_tool("ask", "Ask the user", client=True)
    async with crashable_harness(tmp_path / "s.sqlite", model=model, tools=[ask], settings=SETTINGS,
                                 clock=clock) as h:
        sub = await h.root.submit("hi")
        start = clock.now()
        assert (await settle(h, clock, answer=lambda call: "yes")).quiescent
        assert await sub.wait() == r.Answered("Thanks", 4)
        assert clock.now() == start + 1.0 + 2.0  # the two backoffs, and not a second more
    assert [q.attempt for q in model.requests] == [1, 2, 3, 1]


# --------------------------------------------------------------------------- the explorer's own claims


async def test_the_explorer_reports_a_violation_with_the_point_and_a_one_call_reproduction():
    # A provider that cannot find jobs by key: a crash between its accepting a deferred job and
    # the commit of the job's handle makes the harness submit the job again (and say so).
    blind = scenarios.deferred_answer.variant("deferred_answer_without_find")
    blind = attrs.evolve(blind, setup=_without_find(blind.setup))
    exploration = await explore(blind, only=("before", 3))
    (result,) = exploration.results
    assert result.crashed and result.point == durable.testing.CrashPoint("before", 3)
    assert [v.split(": ", 1)[1] for v in result.violations][:1] == [
        f"The deferred job of attempt g1-s1-a1 was submitted 2 times ({', '.join(_handles(result))})"
    ]
    assert "reproduce: await explore(deferred_answer_without_find, only=('before', 3))" in exploration.report()
    assert any("submitted again" in getattr(x, "message", "") for x in result.reports)


def _without_find(setup):
    def make(clock):
        return attrs.evolve(setup(clock), findable_jobs=False)

    return make


def _handles(result):
    import re

    return re.findall(r"job-[0-9a-f]{12}", result.violations[0])[:2]


async def test_the_explorer_keeps_its_files_in_memory_when_the_system_has_room_there(tmp_path, monkeypatch):
    import importlib

    explorer = importlib.import_module("durable.testing.explore")

    memory = tmp_path / "shm"
    memory.mkdir()
    monkeypatch.setattr(explorer, "SHM", str(memory))
    made: list[str] = []
    real_replay = explorer.replay

    async def replay(scenario, points, path, **kw):
        made.append(os.path.dirname(os.path.dirname(path)))
        return await real_replay(scenario, points, path, **kw)

    monkeypatch.setattr(explorer, "replay", replay)
    assert explorer.scratch_dir() == str(memory)
    (await explore(scenarios.streamed_answer, only=("after", 1))).assert_ok()
    assert made == [str(memory)] * 2  # the run without a crash, then the point
    assert os.listdir(memory) == []  # removed afterwards
    made.clear()
    (await explore(scenarios.streamed_answer, only=("after", 1), directory=tmp_path)).assert_ok()
    assert made == [str(tmp_path)] * 2  # a directory given is used

    monkeypatch.setattr(explorer, "SHM_ROOM", 1 << 62)  # not that much room
    assert explorer.scratch_dir() is None
    monkeypatch.setattr(explorer, "SHM", str(tmp_path / "missing"))
    monkeypatch.setattr(explorer, "SHM_ROOM", 0)
    assert explorer.scratch_dir() is None
