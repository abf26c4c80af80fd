"""A decision left in a session file's inbox across a SIGKILL of its owner is applied exactly once
by the next owner: the console commits it (200) while the owner does not look at its inbox; the
owner is killed; the next owner applies it in the commit that consumes its row, and the tool runs
once, with the edited arguments (its side file); a third owner finds nothing left to apply."""

from __future__ import annotations

import sqlite3

from starlette.testclient import TestClient

from durable.console import files_app

from .conftest import TOKEN


def inbox(path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT call_id, body FROM inbox").fetchall()
    finally:
        conn.close()


def test_a_decision_in_the_inbox_across_an_owner_sigkill_is_applied_once_by_the_next(agent, tmp_path):
    path, runs = tmp_path / "held.sqlite", tmp_path / "held.sqlite.runs"
    first = agent("approve-held", path)
    first.expect("waiting")
    client = TestClient(files_app([str(path)], token=TOKEN), cookies={"durable_console": TOKEN})
    sent = client.post("/api/sessions/0/decisions", headers={"X-Durable-Token": TOKEN},
                       json={"call_id": "call_note", "approve": True, "arguments": '{"text": "edited"}'})
    assert (sent.status_code, sent.json()) == (200, {"ok": True, "call_id": "call_note", "approve": True})
    assert inbox(path) == [("call_note", '{"call_id": "call_note", "approve": true, "arguments": '
                                         '"{\\"text\\": \\"edited\\"}", "reason": ""}')]
    first.kill()  # SIGKILL, the decision still in the inbox
    assert not runs.exists() and len(inbox(path)) == 1

    second = agent("decided", path)
    second.expect("settled")
    assert runs.read_text() == "edited\n"
    assert inbox(path) == []
    state = client.get("/api/sessions/0").json()
    assert (state["approvals"], state["conversations"]) == ([], [{"id": "root", "state": "idle", "entries": 5}])
    entries = client.get("/api/sessions/0/entries?conversation=root&after=0").json()
    assert [(e["type"], e.get("content", e.get("text"))) for e in entries][-2:] == [
        ("tool_result", "saved edited"), ("assistant", "Saved.")]
    second.kill()

    third = agent("decided", path)  # nothing left to apply: the tool does not run again
    third.expect("settled")
    assert runs.read_text() == "edited\n"
