"""Tool approval (docs/spec.md §8): a call that needs a person's decision waits committed, never
charged, shown in `live.approvals`; the decision is committed before the tool runs; a denial
reaches the model; an abort answers it; deciding what cannot be decided changes nothing."""

from __future__ import annotations

import json

import attrs

import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.tasks.generation.records import CALL_ABORTED, CALL_INTERRUPTED
from durable.tasks.tool import (
    DECISION_ENDED,
    DECISION_INVALID,
    DECISION_NOT_ASKED,
    DECISION_TWICE,
    DECISION_UNKNOWN,
    TOOL_DENIED,
    TOOL_DENIED_WITHOUT_REASON,
    TOOL_NOT_DECIDED,
    Approval,
    ToolProgress,
)
from durable.testing import crash

from .conftest import settings, until_live

pytestmark = pytest.mark.anyio

T0 = 1_000_000.0
TRANSFER_ARGS = '{"to": "bob", "amount": 500}'
# The tool's schema, kept with the waiting call (what a console without the tool checks an edit against).
TRANSFER_SCHEMA = ('{"additionalProperties": false, "properties": {"amount": {"type": "integer"}, "to": {"type": '
                   '"string"}}, "required": ["to", "amount"], "type": "object"}')


def transfer_tool(executions, **options):
    """A tool that moves money: every execution is recorded with its arguments."""

    async def transfer(to: str, amount: int) -> str:
        executions.append({"to": to, "amount": amount})
        return f"sent {amount} to {to}"

    return durable.define_tool("transfer", "Send money", execute=transfer, **{"approval": True, **options})


def calls_transfer(then="Done.", arguments=None):
    args = {"to": "bob", "amount": 500} if arguments is None else arguments
    return FauxModel([faux.reply("Sending.", tool_calls=[faux.call("transfer", args, id="c1")]), faux.reply(then)])


def waiting(live):
    return bool(live.approvals)


async def test_an_approved_call_runs_once_with_the_edited_arguments_after_the_decision_is_committed(host):
    executions = []
    model = calls_transfer("Sent 50 to bob.")
    async with host.open(model, settings=settings(), tools=[transfer_tool(executions)]) as h:
        sub = await h.root.submit("pay bob")
        live = await until_live(h, waiting)
        assert live.approvals == (r.ApprovalSlot("c1", "transfer", TRANSFER_ARGS, 2, T0, None, TRANSFER_SCHEMA),)
        assert live.tools == (r.ToolSlot("c1", "transfer", 2, status="waiting"),)
        task = await h.task(2)
        assert (task.state, task.checkpoint) == (r.Waiting(), Approval(T0, None, TRANSFER_SCHEMA))
        assert h.wake() == durable.Wake(False, None)  # nothing runs, no timer: it waits for a person
        assert executions == []
        await h.approve("c1", {"to": "bob", "amount": 50})
        approved = await h.task(2)  # committed before the tool runs
        assert approved.checkpoint is not None and approved.checkpoint.arguments == '{"to": "bob", "amount": 50}'
        assert await sub.wait() == r.Answered("Sent 50 to bob.", 4)
        assert attrs.evolve(h.root.live(), usage=r.EMPTY_USAGE) == r.Live()  # settled, the usage aside
    assert executions == [{"to": "bob", "amount": 50}]
    assert model.requests[1].messages[-1] == r.ToolResultEntry("c1", "transfer", "sent 50 to bob")
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result", "assistant:stop"]


async def test_approved_as_the_model_asked_it_runs_with_the_models_arguments(host):
    executions = []
    async with host.open(calls_transfer(), settings=settings(), tools=[transfer_tool(executions)]) as h:
        sub = await h.root.submit("pay bob")
        await until_live(h, waiting)
        await h.approve("c1")
        assert await sub.wait() == r.Answered("Done.", 4)
        task = await h.task(2)
        assert task.checkpoint.arguments == TRANSFER_ARGS
    assert executions == [{"to": "bob", "amount": 500}]


async def test_a_denial_reaches_the_model_and_the_run_continues(host):
    executions = []
    model = calls_transfer("I did not send it.")
    async with host.open(model, settings=settings(), tools=[transfer_tool(executions)]) as h:
        sub = await h.root.submit("pay bob")
        await until_live(h, waiting)
        await h.deny("c1", "too much money")
        assert await sub.wait() == r.Answered("I did not send it.", 4)
        message = TOOL_DENIED.format(tool="transfer", reason="too much money")
        assert message == "The user denied tool transfer: too much money"
        task = await h.task(2)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(message, r.ErrorDetail("denied"))))
        assert attrs.evolve(h.root.live(), usage=r.EMPTY_USAGE) == r.Live()  # settled, the usage aside
    assert executions == []
    assert model.requests[1].messages[-1] == r.ToolResultEntry(
        "c1", "transfer", message, True, (r.Diagnostic("error", "denied", message),))
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "assistant:stop"]


async def test_a_denial_without_a_reason_says_the_user_denied_the_tool(host):
    model = calls_transfer("OK.")
    async with host.open(model, settings=settings(), tools=[transfer_tool([])]) as h:
        sub = await h.root.submit("pay bob")
        await until_live(h, waiting)
        await h.deny("c1")
        await sub.wait()
    assert model.requests[1].messages[-1].content == TOOL_DENIED_WITHOUT_REASON.format(tool="transfer")
    assert model.requests[1].messages[-1].content == "The user denied tool transfer"


@pytest.mark.parametrize("how", ["abort", "interrupt"])
async def test_an_abort_or_an_interrupt_answers_a_pending_approval_and_clears_it(host, how):
    executions = []
    model = FauxModel([faux.reply("Sending.", tool_calls=[faux.call("transfer", {"to": "bob", "amount": 5},
                                                                     id="c1")]),
                       faux.reply("Something else.")])
    async with host.open(model, settings=settings(), tools=[transfer_tool(executions)]) as h:
        sub = await h.root.submit("pay bob")
        await until_live(h, waiting)
        if how == "abort":
            await h.root.abort()
            status = await sub.wait()
            assert status == r.Unanswered("aborted", "The run was aborted")
            assert attrs.evolve(h.root.live(), usage=r.EMPTY_USAGE) == r.Live(run_failure=r.RunFailure(1, (sub.id,), "aborted", "The run was aborted",
                                                                    "pay bob"))
        else:
            second = await h.root.submit("never mind", when_busy="interrupt")
            assert await second.wait() == r.Answered("Something else.", 5)
            assert attrs.evolve(h.root.live(), usage=r.EMPTY_USAGE) == r.Live()  # settled, the usage aside
        task = await h.task(2)
        assert task.state == r.Terminal(r.Aborted())
        with pytest.raises(durable.ApprovalRejected) as late:
            await h.approve("c1")
        assert str(late.value) == DECISION_ENDED.format(call_id="c1", tool="transfer")
    text = CALL_ABORTED if how == "abort" else CALL_INTERRUPTED
    entries = await host.entries()
    assert entries[2] == r.ToolResultEntry("c1", "transfer", text, True, (r.Diagnostic("error", "aborted" if how ==
                                                                                       "abort" else "interrupted",
                                                                                       text),))
    assert executions == []


async def test_deciding_twice_an_unknown_call_or_invalid_arguments_is_a_clear_error_that_changes_nothing(host):
    executions = []
    lookup = durable.define_tool("lookup", "Look up", replay="safe", execute=_hang)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("transfer", {"to": "bob", "amount": 500}, id="c1"),
                                                  faux.call("lookup", {}, id="c2")])])
    async with host.open(model, settings=settings(), tools=[transfer_tool(executions), lookup]) as h:
        await h.root.submit("pay bob")
        before = await until_live(h, lambda live: waiting(live) and live.tools[1].status == "running")
        task_before = await h.task(2)
        with pytest.raises(durable.ApprovalRejected) as unknown:
            await h.approve("c9")
        assert str(unknown.value) == DECISION_UNKNOWN.format(call_id="c9")
        assert (unknown.value.call_id, unknown.value.tool) == ("c9", None)
        with pytest.raises(durable.ApprovalRejected) as not_asked:
            await h.deny("c2", "no")
        assert str(not_asked.value) == DECISION_NOT_ASKED.format(call_id="c2", tool="lookup")
        with pytest.raises(durable.ApprovalRejected) as invalid:
            await h.approve("c1", {"to": "bob", "amount": "fifty"})
        assert str(invalid.value) == DECISION_INVALID.format(
            call_id="c1", tool="transfer", why="Tool transfer: invalid arguments: $.amount: 'fifty' is not of type "
                                               "'integer' (keyword: type)")
        with pytest.raises(durable.ApprovalRejected, match="not a JSON object"):
            await h.approve("c1", {"to": object()})
        assert h.root.live() == before  # nothing changed
        assert await h.task(2) == task_before
        await h.approve("c1", {"to": "bob", "amount": 5})
        with pytest.raises(durable.ApprovalRejected) as twice:
            await h.deny("c1", "changed my mind")
        assert str(twice.value) == DECISION_TWICE.format(call_id="c1", tool="transfer", how="approved")
        assert str(twice.value) == "Tool call c1 (transfer) was already approved; a call is decided once"
    assert executions == [{"to": "bob", "amount": 5}]


async def test_a_denied_call_cannot_be_decided_again(host):
    async with host.open(calls_transfer(), settings=settings(), tools=[transfer_tool([])]) as h:
        sub = await h.root.submit("pay bob")
        await until_live(h, waiting)
        await h.deny("c1", "no")
        await sub.wait()
        with pytest.raises(durable.ApprovalRejected) as again:
            await h.approve("c1")
        assert str(again.value) == "Tool call c1 (transfer) was already denied; a call is decided once"


async def _hang(args, api, ctx):
    import anyio

    await anyio.sleep_forever()


async def test_a_pending_approval_survives_crashes_uncharged_and_runs_once_approved(host):
    executions = []
    tools = [transfer_tool(executions)]
    async with host.open(calls_transfer("Sent."), settings=settings(), tools=tools) as h:
        sub = await h.root.submit("pay bob")
        await until_live(h, waiting)
        crash(h)
    for _ in range(3):
        async with host.open(FauxModel([]), settings=settings(restart_limit=1), tools=tools) as h:
            await h.resume()
            task = await h.task(2)
            assert (task.state, task.restarts, task.checkpoint) == (r.Waiting(), 0,
                                                                    Approval(T0, None, TRANSFER_SCHEMA))
            assert h.root.live().approvals == (r.ApprovalSlot("c1", "transfer", TRANSFER_ARGS, 2, T0, None,
                                                              TRANSFER_SCHEMA),)
            crash(h)
    model = FauxModel([faux.reply("Sent.")])
    async with host.open(model, settings=settings(), tools=tools) as h:
        await h.approve("c1")
        assert await h.root.submission(sub.id).wait() == r.Answered("Sent.", 4)
    assert executions == [{"to": "bob", "amount": 500}]
    assert host.reports == []  # nothing was charged, nothing was interrupted


async def test_with_an_approval_timeout_the_call_is_denied_at_its_deadline_across_a_restart(host):
    st = settings(approval_timeout=60.0)
    executions = []
    async with host.open(calls_transfer("Not sent."), settings=st, tools=[transfer_tool(executions)]) as h:
        sub = await h.root.submit("pay bob")
        live = await until_live(h, waiting)
        assert live.approvals == (r.ApprovalSlot("c1", "transfer", TRANSFER_ARGS, 2, T0, T0 + 60.0, TRANSFER_SCHEMA),)
        assert h.wake() == durable.Wake(False, T0 + 60.0)
        await host.clock.wait_for_timer("approval:2")
        host.clock.advance(30.0)
        crash(h)
    model = FauxModel([faux.reply("Not sent.")])
    # The deadline was committed with the wait: a harness without the setting keeps it.
    async with host.open(model, settings=settings(), tools=[transfer_tool(executions)]) as h:
        await h.resume()
        assert await host.clock.wait_for_timer("approval:2") == T0 + 60.0
        host.clock.advance(30.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("Not sent.", 4)
        message = TOOL_NOT_DECIDED.format(tool="transfer", seconds=60.0)
        assert message == "Tool transfer was denied: no decision within 60 s"
        task = await h.task(2)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(message, r.ErrorDetail("denied"))))
        with pytest.raises(durable.ApprovalRejected, match="was already denied"):
            await h.approve("c1")
    assert executions == []
    assert model.requests[0].messages[-1] == r.ToolResultEntry(
        "c1", "transfer", message, True, (r.Diagnostic("error", "approval_timeout", message),))
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "assistant:stop"]


async def test_an_approval_check_asks_only_for_the_calls_it_picks(host):
    executions = []
    seen = []

    async def big(args, ctx):
        seen.append((args, ctx.call_id))
        return args["amount"] > 100

    model = FauxModel([faux.reply("", tool_calls=[faux.call("transfer", {"to": "ann", "amount": 5}, id="c1"),
                                                  faux.call("transfer", {"to": "bob", "amount": 500}, id="c2")]),
                       faux.reply("Both sent.")])
    async with host.open(model, settings=settings(), tools=[transfer_tool(executions, approval=big)]) as h:
        sub = await h.root.submit("pay")
        live = await until_live(h, lambda live: waiting(live) and live.tools[0].status == "done")
        assert live.approvals == (r.ApprovalSlot("c2", "transfer", '{"to": "bob", "amount": 500}', 3, T0, None,
                                                   TRANSFER_SCHEMA),)
        assert executions == [{"to": "ann", "amount": 5}]
        await h.approve("c2")
        assert await sub.wait() == r.Answered("Both sent.", 5)
    assert executions == [{"to": "ann", "amount": 5}, {"to": "bob", "amount": 500}]
    assert sorted(seen, key=lambda s: s[1]) == [({"to": "ann", "amount": 5}, "c1"),
                                                ({"to": "bob", "amount": 500}, "c2")]


async def test_an_approval_check_that_raises_gives_the_call_an_error_result_naming_the_tool(host):
    def broken(args, ctx):
        raise ValueError("no policy loaded")

    model = calls_transfer("The check failed.")
    executions = []
    async with host.open(model, settings=settings(), tools=[transfer_tool(executions, approval=broken)]) as h:
        sub = await h.root.submit("pay bob")
        assert await sub.wait() == r.Answered("The check failed.", 4)
    message = "Tool transfer could not run: its approval check raised ValueError: no policy loaded"
    assert model.requests[1].messages[-1] == r.ToolResultEntry(
        "c1", "transfer", message, True, (r.Diagnostic("error", "approval_error", message),))
    assert executions == []


def test_a_client_tool_takes_no_approval_and_no_timeout():
    with pytest.raises(durable.ToolDefinitionError, match="a client tool is run by the host, which decides itself"):
        durable.define_tool("pick", "Pick", client=True, approval=True)
    with pytest.raises(durable.ToolDefinitionError, match="a client tool takes no timeout"):
        durable.define_tool("pick", "Pick", client=True, timeout=5)
    with pytest.raises(durable.ToolDefinitionError, match="approval must be True, False or a callable"):
        durable.define_tool("t", "T", execute=_hang, approval="yes")


def test_the_sync_facade_approves_and_denies(tmp_path):
    import durable.sync

    executions = []
    model = FauxModel([faux.reply("", tool_calls=[faux.call("transfer", {"to": "bob", "amount": 500}, id="c1")]),
                       faux.reply("Round two.", tool_calls=[faux.call("transfer", {"to": "eve", "amount": 9},
                                                                      id="c2")]),
                       faux.reply("Done.")])
    with durable.sync.open_harness(tmp_path / "s.sqlite", model=model, settings=settings(),
                                   tools=[transfer_tool(executions)]) as h:
        sub = h.root.submit("pay")
        for live in h.root.follow():
            if live.approvals:
                break
        h.approve("c1", {"to": "bob", "amount": 1})
        for live in h.root.follow():
            if live.approvals and live.approvals[0].call_id == "c2":
                break
        h.deny("c2", "not eve")
        with pytest.raises(durable.ApprovalRejected):
            h.deny("c2", "again")
        assert sub.answer() == "Done."
        entries = [e.entry for e in h.root.entries()]
    assert executions == [{"to": "bob", "amount": 1}]
    assert entries[4].content == "The user denied tool transfer: not eve"


async def test_the_approval_is_shown_by_the_tool_kind_views(host):
    from durable.tasks import ToolKind

    async with host.open(calls_transfer(), settings=settings(), tools=[transfer_tool([])]) as h:
        await h.root.submit("pay bob")
        await until_live(h, waiting)
        task = await h.task(2)
        assert ToolKind.describe(task) == "tool transfer, unsafe, waiting for approval"
        assert ToolKind.phase_label(task) == "approval"
        assert ToolKind.details(task) == {"tool": {"name": "transfer", "call_id": "c1", "replay": "unsafe",
                                                   "client": False, "approval": {"since": T0, "deadline": None}}}
        assert ToolKind.check(task) == []
        await h.approve("c1", {"to": "bob", "amount": 2})
        approved = await h.task(2)
        assert json.loads(ToolKind.details(approved)["tool"]["approved_arguments"]) == {"to": "bob", "amount": 2}
        assert isinstance(approved.checkpoint, ToolProgress)


async def test_a_decision_the_store_refuses_changes_nothing_and_the_call_keeps_its_deadline(host):
    from .test_faults import noise, page_count, set_page_limit

    executions = []
    st = settings(approval_timeout=60.0)
    async with host.open(calls_transfer("Not sent."), settings=st, tools=[transfer_tool(executions)]) as h:
        sub = await h.root.submit("pay bob")
        before = await until_live(h, waiting)
        await host.clock.wait_for_timer("approval:2")
        task = await h.task(2)
        await set_page_limit(h, await page_count(h))
        with pytest.raises(durable.DiskFull):
            await h.approve("c1", {"to": noise(200_000), "amount": 1})
        assert (h.root.live(), await h.task(2)) == (before, task)  # nothing changed
        await set_page_limit(h, 1_000_000)
        assert await host.clock.wait_for_timer("approval:2") == T0 + 60.0  # its timer is back
        host.clock.advance(60.0)
        assert await sub.wait() == r.Answered("Not sent.", 4)
    assert executions == []
    assert (await host.entries())[2].content == "Tool transfer was denied: no decision within 60 s"
