"""`durable inspect` shows sub-agents: the parent's waiting call (phase `subagent`, its child
conversation), the child conversation with the call that started it, and the child's own work."""

from __future__ import annotations

import anyio

import durable
from durable.models import FauxModel, faux

from .conftest import inspect_json, run_durable

T0 = 1_000_000.0


def make_session(path) -> None:
    async def transfer(to: str) -> str:
        return f"sent to {to}"

    tool = durable.define_tool("transfer", "Send money", execute=transfer, approval=True)
    child = FauxModel([faux.reply("", tool_calls=[faux.call("transfer", {"to": "bob"}, id="t1")])], name="child")
    helper = durable.subagent("helper", "Pays people", tools=[tool], model=child)
    model = FauxModel([faux.reply("Asking.", tool_calls=[faux.call("helper", {"task": "pay bob"}, id="c1")])])

    async def main() -> None:
        async with durable.open_harness(path, model=model, tools=[helper], clock=durable.FakeClock(T0)) as h:
            await h.root.submit("pay")
            async for live in h.conversation("root/helper-2").follow():
                if live.approvals:  # the child waits for a decision, its parent's call for the child
                    break

    anyio.run(main, backend="trio")


def test_inspect_shows_a_waiting_subagent_call_and_its_child_conversation(tmp_path):
    path = tmp_path / "s.sqlite"
    make_session(path)
    data = inspect_json(path)
    tasks = {t["id"]: t for t in data["tasks"]}
    assert (tasks[2]["state"], tasks[2]["phase"], tasks[2]["conversation_id"]) == ("waiting", "subagent", "root")
    assert tasks[2]["tool"]["subagent"] == {"conversation": "root/helper-2", "input": "subagent-2", "since": T0}
    assert (tasks[3]["kind"], tasks[3]["conversation_id"]) == ("generation", "root/helper-2")
    assert data["live"]["root"]["tools"] == [{"call_id": "c1", "name": "helper", "task_id": 2, "output": "",
                                              "status": "waiting", "conversation": "root/helper-2"}]
    assert data["live"]["root/helper-2"]["parent"] == {"conversation_id": "root", "task_id": 2, "call_id": "c1",
                                                       "agent": "helper", "depth": 1}
    text = run_durable("inspect", str(path)).stdout
    flat = " ".join(text.split())
    assert "tool helper waiting -> conversation 'root/helper-2'" in flat, text
    assert "sub-agent helper of conversation 'root' (call c1, task 2, depth 1)" in flat, text
    assert "call t1 waits for approval: transfer" in flat, text
