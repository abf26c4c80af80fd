"""An approval pending across three SIGKILLed processes, decided in a fourth: approved with edited
arguments, the tool executes exactly once with them; denied, the model reads why; aborted, the
call is answered as aborted. Real processes, killed with SIGKILL once they printed what they
saw; the tool's executions go to a side file (one O_APPEND write each)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.tasks.generation.records import CALL_ABORTED, RUN_ABORTED
from durable.tasks.tool import Approval

from .test_approval import TRANSFER_SCHEMA
from tests.children import first_line_then_kill

from .conftest import settings

pytestmark = pytest.mark.anyio

ARGS = {"to": "bob", "amount": 500}

CHILD = """
import json, os, sys, anyio, durable
from durable.models import FauxModel, faux

path, log, first = sys.argv[1], sys.argv[2], sys.argv[3] == "first"

async def transfer(to: str, amount: int) -> str:
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, (json.dumps({"to": to, "amount": amount, "pid": os.getpid()}) + "\\n").encode())
    os.close(fd)
    return f"sent {amount} to {to}"

tool = durable.define_tool("transfer", "Send money", execute=transfer, approval=True)
steps = [faux.reply("Sending.", tool_calls=[faux.call("transfer", ARGS, id="c1")])] if first else []

async def main():
    async with durable.open_harness(path, model=FauxModel(steps), tools=[tool]) as h:
        if first:
            await h.root.submit("pay bob")
        else:
            await h.resume()
        async for live in h.root.follow():
            if live.approvals:
                task = await h.task(live.approvals[0].task_id)
                slot = live.approvals[0]
                print(json.dumps({"call_id": slot.call_id, "tool": slot.tool, "arguments": slot.arguments,
                                  "task_id": slot.task_id, "since": slot.since, "restarts": task.restarts,
                                  "state": type(task.state).__name__}), flush=True)
                await anyio.sleep_forever()

anyio.run(main, backend="trio")
""".replace("ARGS", repr(ARGS))


def run_until_waiting_then_kill(path: Path, log: Path, role: str) -> dict:
    return json.loads(first_line_then_kill(CHILD, str(path), str(log), role))


def executions(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize("decision", ["approve", "deny", "abort"])
async def test_an_approval_pending_across_three_sigkilled_processes_is_decided_in_a_fourth(tmp_path, decision):
    path, log = tmp_path / "s.sqlite", tmp_path / "executions.jsonl"
    seen = [run_until_waiting_then_kill(path, log, "first")]
    for _ in range(2):
        seen.append(run_until_waiting_then_kill(path, log, "again"))
    since = seen[0]["since"]
    assert seen == [{"call_id": "c1", "tool": "transfer", "arguments": json.dumps(ARGS), "task_id": 2,
                     "since": since, "restarts": 0, "state": "Waiting"}] * 3  # never charged, never moved
    assert executions(log) == []

    async def transfer(to: str, amount: int) -> str:  # the fourth process's tool: the same side file
        with open(log, "a") as f:
            f.write(json.dumps({"to": to, "amount": amount, "pid": os.getpid()}) + "\n")
        return f"sent {amount} to {to}"

    tool = durable.define_tool("transfer", "Send money", execute=transfer, approval=True)
    reports: list = []
    model = FauxModel([faux.reply("Done.")])
    async with durable.open_harness(path, model=model, tools=[tool], settings=settings(),
                                    report=reports.append) as h:
        assert h.root.live().approvals == (r.ApprovalSlot("c1", "transfer", json.dumps(ARGS), 2, since, None,
                                                                TRANSFER_SCHEMA),)
        task = await h.task(2)
        assert (task.state, task.restarts, task.checkpoint) == (r.Waiting(), 0, Approval(since, None, TRANSFER_SCHEMA))
        sid = (await h.tasks(kind="generation"))[0].input.submission_ids[0]
        if decision == "approve":
            await h.approve("c1", {"to": "bob", "amount": 50})
        elif decision == "deny":
            await h.deny("c1", "not today")
        else:
            await h.root.abort()
        status = await h.root.submission(sid).wait()
        assert h.root.live().approvals == ()
    entries = [e.entry for e in await _entries(path)]
    if decision == "abort":
        assert status == r.Unanswered("aborted", RUN_ABORTED)
        assert [type(e).__name__ for e in entries] == ["UserEntry", "AssistantEntry", "ToolResultEntry"]
        assert entries[2] == r.ToolResultEntry("c1", "transfer", CALL_ABORTED, True,
                                               (r.Diagnostic("error", "aborted", CALL_ABORTED),))
        assert model.requests == []
    else:
        assert status == r.Answered("Done.", 4)
        result = (r.ToolResultEntry("c1", "transfer", "sent 50 to bob") if decision == "approve" else
                  r.ToolResultEntry("c1", "transfer", "The user denied tool transfer: not today", True,
                                    (r.Diagnostic("error", "denied", "The user denied tool transfer: not today"),)))
        assert entries[2] == result
        assert model.requests[0].messages[-1] == result  # what the model read
    # Exactly once, with the edited arguments, by the fourth process; none of the killed ones ran it.
    assert executions(log) == ([{"to": "bob", "amount": 50, "pid": os.getpid()}] if decision == "approve" else [])
    assert reports == []  # nothing was cut off, nothing charged


async def _entries(path: Path) -> list[r.StoredEntry]:
    store = durable.SQLiteStorage(path)
    await store.open()
    try:
        return await store.get_entries("root")
    finally:
        await store.close()
