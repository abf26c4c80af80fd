"""Encryption at rest (docs/spec.md §8): bodies sealed with AES-GCM under a per-file key; a wrong
or missing key is `WrongKey` and changes nothing; a key rotation killed by SIGKILL opens with
either key and finishes when run again."""

from __future__ import annotations

import glob
import json
import os
import signal
import sqlite3
import subprocess
import sys

import anyio
import pytest

import durable
from durable.models import faux
from durable.records import Answered
from durable.storage import sealing
from durable.storage.sqlite.reader import SessionReader
from durable.testing.invariants import check_invariants
from durable.testing.scripts import by_input

pytestmark = pytest.mark.anyio

SECRET = "zebra-mango-quartz"
CHILD = os.path.join(os.path.dirname(__file__), "rekey_child.py")


def _lookup() -> durable.Tool:
    async def lookup(args, api, ctx):
        return f"the archive says {args['topic']} is {SECRET}-result"

    schema = {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]}
    return durable.define_tool("lookup", "Looks a topic up", schema, execute=lookup)


def _model() -> faux.FauxModel:
    ask = faux.reply("", tool_calls=[faux.call("lookup", {"topic": SECRET + "-arg"})])
    return by_input({f"what is {SECRET}?": [ask, faux.reply(f"It is {SECRET}-answer " * 80)]},
                    default=faux.reply(f"noted {SECRET}"))


def _bytes(folder: str) -> dict[str, bytes]:
    return {os.path.basename(f): open(f, "rb").read() for f in sorted(glob.glob(os.path.join(folder, "*")))}


async def _build(path: str, key: str, conversations: int = 1) -> None:
    async with durable.open_harness(path, model=_model(), tools=[_lookup()], encryption_key=key) as h:
        for i in range(conversations):
            sub = await h.conversation(f"c{i}").submit(f"what is {SECRET}?")
            assert (await sub.answer()).startswith(f"It is {SECRET}-answer")


def _meta(path: str) -> dict:
    conn = sqlite3.connect(path)
    try:
        return json.loads(conn.execute("SELECT value FROM meta WHERE key = 'encryption'").fetchone()[0])
    finally:
        conn.close()


async def test_nothing_of_the_text_is_readable_in_the_raw_file(tmp_path) -> None:
    path = os.fspath(tmp_path / "s.sqlite")
    async with durable.open_harness(path, model=_model(), tools=[_lookup()], encryption_key="k1") as h:
        sub = await h.root.submit(f"what is {SECRET}?")
        assert await sub.wait() == Answered(f"It is {SECRET}-answer " * 80, 4)
        entries = await h.root.entries()
        assert [type(e.entry).__name__ for e in entries] == ["UserEntry", "AssistantEntry", "ToolResultEntry",
                                                             "AssistantEntry"]
        assert entries[2].entry.content == f"the archive says {SECRET}-arg is {SECRET}-result"  # type: ignore[union-attr]
        during = b"".join(_bytes(os.fspath(tmp_path)).values())
    after = b"".join(_bytes(os.fspath(tmp_path)).values())
    for raw in (during, after):
        assert SECRET.encode() not in raw  # the input, the tool's arguments and result, the answer
        assert b"zebra" not in raw
    assert _meta(path)["cipher"] == "AES-256-GCM"


async def test_a_wrong_or_missing_key_is_refused_and_changes_nothing(tmp_path) -> None:
    path = os.fspath(tmp_path / "s.sqlite")
    await _build(path, "right key")
    before = _bytes(os.fspath(tmp_path))
    meta = _meta(path)
    wrong_id = sealing.derive("wrong key", bytes.fromhex(meta["salt"]))[1]
    with pytest.raises(durable.WrongKey) as wrong:
        async with durable.open_harness(path, model=_model(), encryption_key="wrong key"):
            pass
    assert str(wrong.value) == (f"Session file {path} is encrypted with another key (key id {meta['key_id']}, "
                                f"this key's is {wrong_id}); nothing was changed")
    with pytest.raises(durable.WrongKey) as missing:
        async with durable.open_harness(path, model=_model()):
            pass
    assert str(missing.value) == (f"Session file {path} is encrypted: open it with its key (encryption_key=..., "
                                  f"or --key-file); nothing was changed")
    with pytest.raises(durable.WrongKey) as reader:
        SessionReader(path)
    assert str(reader.value) == str(missing.value)
    assert _bytes(os.fspath(tmp_path)) == before  # byte for byte, and no file added beside it
    async with durable.open_harness(path, model=_model(), encryption_key="right key") as h:
        assert await (await h.conversation("c0").submit("again")).answer() == f"noted {SECRET}"


def _run_rekey(path: str, old: str, new: str, kill_after: int | None, rows_per_commit: int = 5) -> list[str]:
    """Rotate the key in a child process, step by step; SIGKILL it right after its `kill_after`-th
    commit, before it goes on (None: let it finish)."""
    child = subprocess.Popen([sys.executable, CHILD, path, old, new, str(rows_per_commit), "step"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdin is not None
    lines: list[str] = []
    for raw in child.stdout:
        lines.append(raw.decode().strip())
        if kill_after is not None and lines.count("commit") == kill_after:
            child.send_signal(signal.SIGKILL)
            break
        if lines[-1] in ("rotating", "commit"):
            child.stdin.write(b"\n")
            child.stdin.flush()
    child.stdout.close()
    child.stdin.close()
    child.wait()
    return lines


def _key_ids(path: str) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        found = set()
        for table in ("tasks", "entries", "submissions", "documents", "texts"):
            found |= {body[5:21] for (body,) in conn.execute(f"SELECT body FROM {table}")}
        return found
    finally:
        conn.close()


async def _answers(path: str, key: str) -> list[str]:
    async with durable.open_harness(path, model=_model(), tools=[_lookup()], encryption_key=key) as h:
        return [(await h.conversation(f"c{i}").entries())[-1].entry.text for i in range(6)]  # type: ignore[union-attr]


async def test_a_rekey_cut_off_by_sigkill_opens_with_either_key_then_finishes(tmp_path) -> None:
    path = os.fspath(tmp_path / "s.sqlite")
    await _build(path, "old", conversations=6)
    old_id = _meta(path)["key_id"]
    expected = [f"It is {SECRET}-answer " * 80] * 6

    lines = await anyio.to_thread.run_sync(_run_rekey, path, "old", "new", 3)
    assert lines == ["rotating", "commit", "commit", "commit"]
    meta = _meta(path)
    assert meta["previous"]["key_id"] == old_id
    assert _key_ids(path) == {old_id, meta["key_id"]}  # rows of both keys
    # Meanwhile either key opens it, and the invariants hold.
    assert await _answers(path, "old") == expected
    assert await _answers(path, "new") == expected
    with SessionReader(path, key="new"):
        assert check_invariants(path) == []

    lines = await anyio.to_thread.run_sync(_run_rekey, path, "old", "new", None)
    assert lines[-1].startswith("done ") and "rotating" in lines
    meta = _meta(path)
    assert "previous" not in meta
    assert _key_ids(path) == {meta["key_id"]}
    assert await _answers(path, "new") == expected
    with pytest.raises(durable.WrongKey, match="is encrypted with another key"):
        await _answers(path, "old")


async def test_a_plain_file_is_encrypted_by_a_rekey(tmp_path) -> None:
    path = os.fspath(tmp_path / "s.sqlite")
    async with durable.open_harness(path, model=_model()) as h:
        assert await (await h.root.submit("hello")).answer() == f"noted {SECRET}"
    assert SECRET.encode() in open(path, "rb").read()
    storage = durable.SQLiteStorage(path)
    await storage.open()
    assert await storage.rekey("now secret", rows_per_commit=2) == 5  # 2 entries, a task, an input, a document
    await storage.close()
    assert SECRET.encode() not in b"".join(_bytes(os.fspath(tmp_path)).values())
    assert _key_ids(path) == {_meta(path)["key_id"]}
    async with durable.open_harness(path, model=_model(), encryption_key="now secret") as h:
        assert [e.entry.text for e in await h.root.entries()] == ["hello", f"noted {SECRET}"]  # type: ignore[union-attr]


async def test_without_the_extra_a_key_is_a_missing_extra(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers.aead", None)
    with pytest.raises(durable.MissingExtra) as missing:
        async with durable.open_harness(os.fspath(tmp_path / "s.sqlite"), model=_model(), encryption_key="k"):
            pass
    assert str(missing.value).startswith("Encryption at rest needs the cryptography package, which cannot be imported")
    assert str(missing.value).endswith('pip install "durable-harness[encryption]"')


async def test_a_plain_file_opened_with_a_key_is_refused_unchanged(tmp_path) -> None:
    path = os.fspath(tmp_path / "s.sqlite")
    async with durable.open_harness(path, model=_model()) as h:
        assert await (await h.root.submit("hello")).answer() == f"noted {SECRET}"
    before = _bytes(os.fspath(tmp_path))
    with pytest.raises(durable.WrongKey) as refused:
        async with durable.open_harness(path, model=_model(), encryption_key="k"):
            pass
    assert str(refused.value) == (f"Session file {path} is not encrypted: encrypt it with `durable rekey {path} "
                                  f"--new-key-file KEY` (or open it without a key); nothing was changed")
    assert _bytes(os.fspath(tmp_path)) == before


async def test_a_key_for_a_store_that_cannot_encrypt_is_refused_naming_it() -> None:
    storage = durable.MemoryStorage("plain")
    with pytest.raises(durable.EncryptionUnsupported) as refused:
        async with durable.open_harness(storage, model=_model(), encryption_key="k"):
            pass
    assert str(refused.value) == ("encryption_key is for a session file path: MemoryStorage <memory:plain> cannot "
                                  "encrypt (session files and PostgreSQL spaces can); nothing was opened")
    assert isinstance(refused.value, durable.WrongKey)  # code catching a key's errors catches it too
