"""Tool approval from another process (`durable.remote`): a decision goes through the space's
inbox and the owner applies it as `Harness.approve` / `Harness.deny`, exactly once (its inbox row
deleted by the deciding commit): into an owned space, into a space nobody owns (applied by the
next owner), after an owner crashed between taking it and applying it, and after an owner process
SIGKILLed just before or just after the deciding commit (the tool runs once, with the edited
arguments); one the owner refuses is reported and dropped; an unknown call is refused at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid

import anyio
import psycopg
import pytest

import durable
from durable import open_harness
from durable.engine.reports import ErrorReport
from durable.errors import ApprovalRejected, EditRejected
from durable.models import faux
from durable.records import Answered, ApprovalSlot, ToolResultEntry
from durable.remote import RemoteSpace
from durable.settings import Settings
from durable.storage import PostgresStorage
from durable.storage.postgres.decisions import put_decision
from durable.testing.scripts import by_input

from .pg_remote_child import transfer_tool
from .test_postgres_remote import inbox_rows, lease_expired

NO_CHECK = Settings(check_integrity=False)
HERE = os.path.dirname(__file__)

pytestmark = pytest.mark.anyio


def new_space() -> str:
    return f"approval-{uuid.uuid4().hex[:10]}"


def world(ran: list):
    """A tool that always asks, and a model that calls it once (by_input: a fresh call id)."""
    async def transfer(to: str, amount: int) -> str:
        ran.append({"to": to, "amount": amount})
        return f"sent {amount} to {to}"

    tool = durable.define_tool("transfer", "Send money", execute=transfer, approval=True)
    model = by_input({"pay bob": [faux.reply("", tool_calls=[faux.call("transfer", {"to": "bob", "amount": 500})]),
                                  faux.reply("Done.")]})
    return model, [tool]


async def waiting_call(remote: RemoteSpace) -> ApprovalSlot:
    with anyio.fail_after(10):
        async for live in remote.follow():
            if live.approvals:
                return live.approvals[0]
    raise AssertionError("unreachable")


async def waiting_in_a_space_nobody_owns(dsn: str):
    """A space whose call to `transfer` waits for a decision, its owner closed: (space, what ran,
    model, tools, the input's id, the call's id)."""
    space, ran = new_space(), []
    model, tools = world(ran)
    async with open_harness(PostgresStorage(dsn, space), model=model, tools=tools, settings=NO_CHECK) as h:
        sid = (await h.root.submit("pay bob")).id
        async with RemoteSpace(dsn, space, poll_seconds=0.02) as remote:
            c1 = (await waiting_call(remote)).call_id
    return space, ran, model, tools, sid, c1


@pytest.mark.parametrize("decision", ["approve", "deny"])
async def test_a_remote_decision_into_an_owned_space_is_applied_once_by_the_owner(postgres_dsn, decision):
    space, ran = new_space(), []
    model, tools = world(ran)
    async with open_harness(PostgresStorage(postgres_dsn, space), model=model, tools=tools, settings=NO_CHECK) as h, \
            RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        sid = (await h.root.submit("pay bob")).id
        slot = await waiting_call(remote)
        c1 = slot.call_id
        assert (slot.tool, json.loads(slot.arguments)) == ("transfer", {"to": "bob", "amount": 500})
        if decision == "approve":
            await remote.approve(c1, {"to": "bob", "amount": 50})
        else:
            await remote.deny(c1, "not bob")
        with anyio.fail_after(10):
            assert await remote.wait(sid) == Answered("Done.", 4)
        result = (await h.root.entries())[2].entry
        assert inbox_rows(postgres_dsn, space) == 0
        with pytest.raises(ApprovalRejected) as late:  # decided: no longer waiting in the live document
            await remote.approve(c1)
        assert str(late.value) == f"No tool call {c1} waits for a decision in {remote.location}; nothing was decided"
    if decision == "approve":
        assert ran == [{"to": "bob", "amount": 50}]
        assert result == ToolResultEntry(c1, "transfer", "sent 50 to bob")
    else:
        assert ran == []
        assert result.content == "The user denied tool transfer: not bob"


async def test_a_remote_decision_into_a_space_nobody_owns_is_applied_by_the_next_owner(postgres_dsn):
    space, ran, model, tools, sid, c1 = await waiting_in_a_space_nobody_owns(postgres_dsn)
    # The owner closed; the decision waits in the inbox, committed.
    async with RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        await remote.approve(c1, {"to": "bob", "amount": 7})
        assert inbox_rows(postgres_dsn, space) == 1
        async with open_harness(PostgresStorage(postgres_dsn, space), model=model, tools=tools,
                                settings=NO_CHECK) as h:
            await h.resume()
            with anyio.fail_after(10):
                assert await remote.wait(sid) == Answered("Done.", 4)
    assert ran == [{"to": "bob", "amount": 7}]
    assert inbox_rows(postgres_dsn, space) == 0


async def test_a_second_remote_decision_on_a_call_already_decided_in_the_inbox_is_refused_at_once(postgres_dsn):
    """Two deciders (two clients, or a client and the console) on one waiting call: the first
    decision waits in the inbox (nobody owns the space), the second is refused at once, naming
    the call and its tool, and only the first is applied."""
    space, ran, model, tools, sid, c1 = await waiting_in_a_space_nobody_owns(postgres_dsn)
    async with RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as first, \
            RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as second:
        await first.deny(c1, "not today")
        with pytest.raises(ApprovalRejected) as refused:
            await second.approve(c1, {"to": "bob", "amount": 1})
        assert str(refused.value) == (f"Tool call {c1} in {second.location} was already decided (another decision "
                                      "is in its inbox); nothing was decided")
        assert (refused.value.call_id, refused.value.tool) == (c1, "transfer")
        assert inbox_rows(postgres_dsn, space) == 1
        async with open_harness(PostgresStorage(postgres_dsn, space), model=model, tools=tools,
                                settings=NO_CHECK) as h:
            await h.resume()
            with anyio.fail_after(10):
                assert await first.wait(sid) == Answered("Done.", 4)
            result = (await h.root.entries())[2].entry
    assert ran == []
    assert result.content == "The user denied tool transfer: not today"


async def test_a_decision_taken_by_an_owner_that_died_before_applying_it_is_applied_once_by_the_next(postgres_dsn):
    space, ran, model, tools, sid, c1 = await waiting_in_a_space_nobody_owns(postgres_dsn)
    async with RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        await remote.approve(c1)
        crashed = PostgresStorage(postgres_dsn, space, lease_seconds=0.5)
        await crashed.open()
        [taken] = await crashed.take_decisions(10)
        assert (taken.call_id, taken.approve, taken.arguments) == (c1, True, None)
        await crashed._stop(release=False)  # killed: the lease runs out
        await lease_expired(postgres_dsn, space)
        async with open_harness(PostgresStorage(postgres_dsn, space), model=model, tools=tools,
                                settings=NO_CHECK) as h:
            await h.resume()
            with anyio.fail_after(10):
                assert await remote.wait(sid) == Answered("Done.", 4)
            assert await h.storage.take_decisions(10) == []  # type: ignore[attr-defined]
    assert ran == [{"to": "bob", "amount": 500}]


async def test_edited_arguments_against_the_schema_are_refused_by_the_remote_space_before_anything_is_decided(
        postgres_dsn):
    space, ran = new_space(), []
    model, tools = world(ran)
    async with open_harness(PostgresStorage(postgres_dsn, space), model=model, tools=tools, settings=NO_CHECK) as h, \
            RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        sid = (await h.root.submit("pay bob")).id
        c1 = (await waiting_call(remote)).call_id
        with pytest.raises(EditRejected) as refused:
            await remote.approve(c1, {"to": "bob", "amount": "lots"})
        assert str(refused.value) == (f"Tool call {c1} (transfer) was not approved: Tool transfer: invalid arguments: "
                                      f"$.amount: 'lots' is not of type 'integer' (keyword: type)")
        assert (refused.value.call_id, refused.value.tool) == (c1, "transfer")
        assert inbox_rows(postgres_dsn, space) == 0  # nothing put
        assert [s.call_id for s in h.root.live().approvals] == [c1]
        await remote.approve(c1, {"to": "bob", "amount": 20})  # the call still waits: a valid edit is taken
        assert await remote.wait(sid) == Answered("Done.", 4)
    assert ran == [{"to": "bob", "amount": 20}]


async def test_a_remote_decision_the_owner_refuses_is_reported_and_dropped_and_the_call_still_waits(postgres_dsn):
    """A decision whose edit the owner's schema check refuses (put by a decider that did not check
    it: here straight into the inbox, as a durable older than the check would)."""
    space, ran, reports = new_space(), [], []
    model, tools = world(ran)
    async with open_harness(PostgresStorage(postgres_dsn, space), model=model, tools=tools, settings=NO_CHECK,
                            report=reports.append) as h, \
            RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        await h.root.submit("pay bob")
        c1 = (await waiting_call(remote)).call_id
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            put_decision(conn, space, remote.location, "dec_unchecked", {
                "call_id": c1, "approve": True, "arguments": json.dumps({"to": "bob", "amount": "lots"}),
                "reason": ""})
        with anyio.fail_after(10):
            while inbox_rows(postgres_dsn, space):
                await anyio.sleep(0.02)
        refused = [x for x in reports if isinstance(x, ErrorReport)]
        assert [x.message for x in refused] == [
            f"A decision from the inbox of {h.storage.location} was not applied: Tool call {c1} (transfer) was not "
            f"approved: Tool transfer: invalid arguments: $.amount: 'lots' is not of type 'integer' (keyword: type)"]
        assert [s.call_id for s in h.root.live().approvals] == [c1]  # nothing changed
        with pytest.raises(ApprovalRejected, match="No tool call c9 waits for a decision"):
            await remote.deny("c9", "unknown")
        with pytest.raises(ApprovalRejected, match="not a JSON object"):
            await remote.approve(c1, {"to": object()})
    assert ran == []
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM durable.inbox WHERE space = %s", (space,)).fetchone()[0] == 0


@pytest.mark.parametrize("point", ["before_commit", "after_commit"])
async def test_an_owner_killed_around_the_commit_applying_a_remote_approval_runs_the_tool_once(postgres_dsn, tmp_path,
                                                                                              point):
    space, log = new_space(), tmp_path / "executions.jsonl"
    child = subprocess.Popen([sys.executable, os.path.join(HERE, "pg_remote_child.py"), "approval-owner",
                              postgres_dsn, space, point, str(log)], stdout=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True)
    try:
        assert child.stdout is not None
        with anyio.fail_after(30):
            assert await anyio.to_thread.run_sync(child.stdout.readline) == "waiting c1\n"
            async with RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
                await remote.approve("c1", {"to": "bob", "amount": 50})
                assert await anyio.to_thread.run_sync(child.stdout.readline) == f"dying {point}\n"
                assert await anyio.to_thread.run_sync(child.wait) == -signal.SIGKILL
                assert inbox_rows(postgres_dsn, space) == (1 if point == "before_commit" else 0)
                await lease_expired(postgres_dsn, space)
                tools = [transfer_tool(str(log))]  # the same tool, in this process
                async with open_harness(PostgresStorage(postgres_dsn, space), model=by_input(default=faux.reply(
                        "Done.")), tools=tools, settings=NO_CHECK) as h:
                    await h.resume()
                    sid = (await h.tasks(kind="generation"))[0].input.submission_ids[0]
                    status = await h.root.submission(sid).wait()
                    entries = [e.entry for e in await h.root.entries()]
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
    assert status == Answered("Done.", 4)
    assert entries[2] == ToolResultEntry("c1", "transfer", "sent 50 to bob")
    assert [{k: v for k, v in json.loads(line).items() if k != "pid"} for line in log.read_text().splitlines()] == [
        {"to": "bob", "amount": 50}]  # exactly once, with the edited arguments, by the second owner
    assert inbox_rows(postgres_dsn, space) == 0
