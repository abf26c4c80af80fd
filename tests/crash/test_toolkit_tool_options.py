"""The invariant checker on approvals, retries and timeouts: each kind of violation is named; and
`settle` decides the calls that wait for approval as it is told."""

from __future__ import annotations

import pytest

import durable
from durable import records as r
from durable.models import faux
from durable.storage.protocol import Batch
from durable.tasks.generation.records import Request, ToolRound
from durable.tasks.tool import Approval, ToolInput, ToolProgress
from durable.testing import Approve, Deny, ExecutionLog, FakeClock, by_input, check_invariants, settle

from .test_toolkit import answered_run, entry, gen_task, memory_session, user

pytestmark = pytest.mark.anyio

T0 = 1_000_000.0
CALL = r.ToolCall("c1", "transfer", '{"amount": 5}')


def waiting_round(*, tool_state=None, live_approvals=None):
    tool = r.Task(2, "root", "tool", ToolInput(CALL), tool_state or r.Waiting(), Approval(T0), parent_id=1)
    gen = gen_task(state=r.Waiting(on=(2,)), checkpoint=ToolRound(2, (CALL,), (2,)))
    slots = (r.ApprovalSlot("c1", "transfer", '{"amount": 5}', 2, T0),) if live_approvals is None else live_approvals
    return Batch(tasks=[gen, tool], entries=[user(1), entry(2, r.AssistantEntry("", "tool_use", (CALL,)))],
                 submissions=[r.Submission("s1", "root", "hi", seq=1, task_id=1)],
                 live={"root": r.Live(run=r.Run(1, ("s1",)), approvals=slots)})


async def test_a_call_waiting_for_approval_as_the_live_document_shows_it_keeps_every_invariant():
    assert check_invariants(await memory_session(waiting_round())) == []


async def test_a_live_document_that_misses_shows_twice_or_misstates_an_approval_is_named():
    assert check_invariants(await memory_session(waiting_round(live_approvals=()))) == [
        "Tool call c1 (transfer, task 2) waits for approval, but the live document of conversation 'root' shows "
        "it 0 times"]
    slot = r.ApprovalSlot("c1", "transfer", '{"amount": 5}', 2, T0)
    assert check_invariants(await memory_session(waiting_round(live_approvals=(slot, slot)))) == [
        "Tool call c1 (transfer, task 2) waits for approval, but the live document of conversation 'root' shows "
        "it 2 times"]
    edited = r.ApprovalSlot("c1", "transfer", '{"amount": 500}', 2, T0)
    assert check_invariants(await memory_session(waiting_round(live_approvals=(edited,)))) == [
        f"The live document of conversation 'root' shows call c1 waiting for approval as {edited}, but its task "
        f"holds {slot}"]


async def test_an_approval_shown_for_a_call_that_no_longer_waits_is_named():
    batch = answered_run()
    batch.live = {"root": r.Live(approvals=(r.ApprovalSlot("c1", "transfer", "{}", 1, T0),))}
    assert check_invariants(await memory_session(batch)) == [
        "The live document of conversation 'root' shows call c1 (transfer) waiting for approval, but its task 1 "
        "is done, not waiting for a decision"]


async def test_a_call_asking_for_a_decision_while_not_waiting_is_named():
    store = await memory_session(waiting_round(tool_state=r.Pending()))
    assert "Task 2 (tool) asks for a decision but is pending, not waiting" in check_invariants(store)


async def test_a_denied_call_that_ran_and_a_tool_retried_past_its_retries_are_named(tmp_path):
    message = "The user denied tool transfer: no"
    denied = r.ToolResultEntry("c1", "transfer", message, True, (r.Diagnostic("error", "denied", message),))
    tool = r.Task(2, "root", "tool", ToolInput(CALL), r.Terminal(r.Failed(r.ErrorInfo(message,
                                                                                      r.ErrorDetail("denied")))),
                  ToolProgress(result=denied), parent_id=1)
    c2, c3 = r.ToolCall("c2", "weather", "{}"), r.ToolCall("c3", "weather", "{}")
    out = r.Diagnostic("error", "retries_exhausted", "out")
    again = r.Diagnostic("error", "retry", "again")
    done = gen_task(state=r.Terminal(r.Done({"seq": 8})), checkpoint=Request(1))
    store = await memory_session(Batch(
        tasks=[done, tool],
        entries=[user(1), entry(2, r.AssistantEntry("", "tool_use", (CALL,))), entry(3, denied),
                 entry(4, r.AssistantEntry("", "tool_use", (c2,))),
                 entry(5, r.ToolResultEntry("c2", "weather", "out", True, (out,))),
                 entry(6, r.AssistantEntry("", "tool_use", (c3,))),
                 entry(7, r.ToolResultEntry("c3", "weather", "again", True, (again,))),
                 entry(8, r.AssistantEntry("Done", "stop"))],
        submissions=[r.Submission("s1", "root", "hi", seq=1, status=r.Answered(), task_id=1)],
        live={"root": r.Live()}))
    log = ExecutionLog(tmp_path / "executions.jsonl")
    log.record("c1", "transfer", "unsafe", 1)
    assert check_invariants(store, executions=log) == [
        "Tool weather was out of retries at seq 5 of conversation 'root', yet the result at seq 7 asks for another",
        "Tool transfer ran for call c1 (task 2), which was denied",
    ]


async def test_a_timeout_before_the_deadline_is_named():
    message = "Tool slow timed out after 30 s"
    result = r.ToolResultEntry("c1", "slow", message, True, (r.Diagnostic("error", "timeout", message),))
    call = r.ToolCall("c1", "slow", "{}")
    tool = r.Task(2, "root", "tool", ToolInput(call, "safe", timeout=30.0),
                  r.Terminal(r.Failed(r.ErrorInfo(message, r.ErrorDetail("timeout")))),
                  ToolProgress(result=result, started_at=T0, ended_at=T0 + 10), parent_id=1)
    batch = answered_run()
    batch.tasks.append(tool)
    assert check_invariants(await memory_session(batch)) == [
        "Task 2 (tool) timed out 10 s after its start, before its timeout of 30 s"]


async def test_settle_approves_or_denies_the_calls_waiting_for_approval_as_told(tmp_path):
    ran = []

    async def transfer(amount: int) -> str:
        ran.append(amount)
        return "sent"

    tool = durable.define_tool("transfer", "Send", execute=transfer, approval=True)
    model = by_input({"pay": [faux.reply("", tool_calls=[faux.call("transfer", {"amount": 500}),
                                                          faux.call("transfer", {"amount": 7})]),
                              faux.reply("Done.")]})
    clock = FakeClock()

    def decide(slot):
        return Approve({"amount": 50}) if '"amount": 500' in slot.arguments else Deny("too small")

    async with durable.open_harness(tmp_path / "s.sqlite", model=model, tools=[tool], clock=clock) as h:
        sub = await h.root.submit("pay")
        settled = await settle(h, clock, decide=decide)
        assert settled.quiescent
        assert await sub.wait() == r.Answered("Done.", 5)
        results = [e.entry.content for e in await h.root.entries() if isinstance(e.entry, r.ToolResultEntry)]
    assert ran == [50]
    assert results == ["sent", "The user denied tool transfer: too small"]
