"""`durable inspect` shows calls waiting for approval (live document and task rows), approved
arguments, tool timeouts, and the new ending reasons (denied, timeout)."""

from __future__ import annotations

import anyio

import durable
from durable.models import FauxModel, faux

from .conftest import inspect_json, run_durable

T0 = 1_000_000.0


def make_session(path) -> None:
    async def transfer(to: str, amount: int) -> str:
        return f"sent {amount} to {to}"

    tool = durable.define_tool("transfer", "Send money", execute=transfer, approval=True, timeout=30)
    calls = [faux.call("transfer", {"to": "bob", "amount": 500}, id="c1"),
             faux.call("transfer", {"to": "ann", "amount": 5}, id="c2"),
             faux.call("transfer", {"to": "eve", "amount": 7}, id="c3")]
    model = FauxModel([faux.reply("Sending.", tool_calls=calls), faux.reply("ok")])

    async def main() -> None:
        async with durable.open_harness(path, model=model, tools=[tool], clock=durable.FakeClock(T0)) as h:
            await h.root.submit("pay")
            async for live in h.root.follow():
                if len(live.approvals) == 3:
                    break
            await h.deny("c2", "not ann")
            await h.approve("c3", {"to": "eve", "amount": 8})
            await h.wait_for_task(4)

    anyio.run(main, backend="trio")


def test_inspect_shows_waiting_approvals_approved_arguments_and_denials(tmp_path):
    path = tmp_path / "s.sqlite"
    make_session(path)
    data = inspect_json(path)
    tasks = {t["id"]: t for t in data["tasks"]}
    assert tasks[2]["phase"] == "approval" and tasks[2]["state"] == "waiting"
    assert tasks[2]["tool"]["approval"] == {"since": T0, "deadline": None}
    assert tasks[3]["error"] == {"message": "The user denied tool transfer: not ann", "reason": "denied"}
    assert tasks[4]["tool"]["approved_arguments"] == '{"to": "eve", "amount": 8}'
    assert tasks[4]["tool"]["timeout"] == 30.0
    text = run_durable("inspect", str(path)).stdout
    flat = " ".join(text.split())
    assert ('call c1 waits for approval: transfer({"to": "bob", "amount": 500}), no deadline' in flat), text
    assert "transfer (unsafe), timeout 30 s, waits for approval (no deadline)" in flat, text
    assert "failed (denied)" in flat and "The user denied tool transfer: not ann" in flat, text
    assert 'approved: {"to": "eve", "amount": 8}' in flat, text
    assert data["live"]["root"]["approvals"] == [{"call_id": "c1", "tool": "transfer",
                                                  "arguments": '{"to": "bob", "amount": 500}', "task_id": 2,
                                                  "since": T0, "deadline": None,
                                                  # the tool's schema, kept with the waiting call
                                                  "parameters": '{"additionalProperties": false, "properties": '
                                                                '{"amount": {"type": "integer"}, "to": {"type": '
                                                                '"string"}}, "required": ["to", "amount"], '
                                                                '"type": "object"}'}]
