"""The console on an encrypted session file (`durable console PATH --key-file KEY`): refused without
its key or with another (one line naming the file, and the key file), shown with it as a plain
file is, and a decision from the page is put in the inbox sealed (its edited arguments are a
tool's arguments), then applied once by the owner."""

from __future__ import annotations

import sqlite3

import pytest
from starlette.testclient import TestClient

import durable
from durable.console import files_app
from durable.models import FauxModel, faux

from .test_console_http import TOKEN, inbox_count, model, note_tool, page_tool, rows_but_inbox

KEY = "the console's key"


async def encrypted_waiting_file(path) -> None:
    """An encrypted session file whose call `call_note` waits for approval, closed."""
    async with durable.open_harness(path, model=model(), tools=[note_tool([]), page_tool()],
                                    encryption_key=KEY) as h:
        await h.root.submit("Save a note")
        async for live in h.root.follow():
            if live.approvals:
                break


async def owner_applies(path, key: str) -> list[str]:
    """Open the file as its owner with `key` until the run the decision resumed ended; the notes
    its save_note tool saved."""
    runs: list[str] = []
    async with durable.open_harness(path, model=FauxModel([faux.reply("Saved.")]),
                                    tools=[note_tool(runs), page_tool()], encryption_key=key) as h:
        await h.resume()
        async for live in h.root.follow():
            if live.run is None and not live.approvals:
                break
    return runs


def inbox_bodies(path) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [body for (body,) in conn.execute("SELECT body FROM inbox")]
    finally:
        conn.close()


@pytest.mark.anyio
async def test_the_console_shows_an_encrypted_file_with_its_key_and_seals_its_decisions(tmp_path):
    path = tmp_path / "s.sqlite"
    await encrypted_waiting_file(path)
    before = rows_but_inbox(path)
    with pytest.raises(durable.WrongKey) as missing:
        files_app([str(path)], token=TOKEN)
    assert str(missing.value) == (f"Session file {path} is encrypted: open it with its key (encryption_key=..., "
                                  f"or --key-file); nothing was changed")

    client = TestClient(files_app([str(path)], token=TOKEN, key=KEY))
    client.get(f"/?token={TOKEN}")
    state = client.get("/api/sessions/0").json()
    assert state["conversations"] == [{"id": "root", "state": "waiting for approval", "entries": 2}]
    assert [(a["call_id"], a["tool"], a["arguments"]) for a in state["approvals"]] == [
        ("call_note", "save_note", '{"text": "draft"}')]
    assert [(t["id"], t["describe"], t["state"]) for t in state["tasks"]] == [
        (1, "generation", "waiting"), (2, "tool fetch_page, safe", "terminal"),
        (3, "tool save_note, unsafe, waiting for approval", "waiting")]
    entries = client.get("/api/sessions/0/entries?conversation=root&after=0").json()
    assert [(e["seq"], e["type"]) for e in entries] == [(1, "user"), (2, "assistant")]

    decision = {"call_id": "call_note", "approve": True, "arguments": '{"text": "edited secret"}'}
    sent = client.post("/api/sessions/0/decisions", json=decision, headers={"X-Durable-Token": TOKEN})
    assert (sent.status_code, sent.json()) == (200, {"ok": True, "call_id": "call_note", "approve": True})
    [body] = inbox_bodies(path)
    assert body.startswith("enc1:") and "secret" not in body and "call_note" not in body
    assert rows_but_inbox(path) == before

    assert await owner_applies(path, KEY) == ["edited secret"]
    assert inbox_count(path) == 0


@pytest.mark.anyio
async def test_the_command_names_the_file_and_the_key_file_when_the_key_is_missing_or_wrong(tmp_path):
    from click.testing import CliRunner

    from durable.cli.command import cli

    path = tmp_path / "s.sqlite"
    await encrypted_waiting_file(path)
    missing = CliRunner().invoke(cli, ["console", str(path), "--port", "0"])
    assert (missing.exit_code, missing.output) == (2, (
        f"durable: error: Session file {path} is encrypted: open it with its key (encryption_key=..., or "
        "--key-file); nothing was changed\n"))
    wrong_key = tmp_path / "wrong.key"
    wrong_key.write_text("another key\n")
    wrong = CliRunner().invoke(cli, ["console", str(path), "--port", "0", "--key-file", str(wrong_key)])
    assert wrong.exit_code == 2
    assert wrong.output.startswith(f"durable: error: Session file {path} is encrypted with another key")
    assert wrong.output.endswith(f"; nothing was changed (the key given: --key-file {wrong_key})\n")


@pytest.mark.anyio
async def test_a_key_rotation_seals_a_waiting_decision_again_and_the_owner_applies_it(tmp_path):
    from durable.storage.sqlite.store import SQLiteStorage

    path = tmp_path / "s.sqlite"
    await encrypted_waiting_file(path)
    client = TestClient(files_app([str(path)], token=TOKEN, key=KEY))
    client.get(f"/?token={TOKEN}")
    decision = {"call_id": "call_note", "approve": True, "arguments": '{"text": "rotated"}'}
    assert client.post("/api/sessions/0/decisions", json=decision,
                       headers={"X-Durable-Token": TOKEN}).status_code == 200
    [before] = inbox_bodies(path)

    storage = SQLiteStorage(str(path), encryption_key=KEY)
    await storage.open()
    try:
        assert await storage.rekey("the new key") > 0
    finally:
        await storage.close()
    [after] = inbox_bodies(path)
    head = len("enc1:") + 17  # the prefix, the key id and its colon
    assert after.startswith("enc1:") and after[head - 1] == ":" and after[:head] != before[:head]  # the new key's id

    assert await owner_applies(path, "the new key") == ["rotated"]
    assert inbox_count(path) == 0
