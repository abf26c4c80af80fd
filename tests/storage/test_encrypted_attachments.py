"""Attachments in an encrypted session file (docs/spec.md §8): their bytes sealed with AES-GCM,
stored under a keyed id (not their sha256), read back whole; a key rotation killed by SIGKILL
while it seals them again opens with either key and, run again, finishes."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3

import anyio
import pytest

import durable
from durable.models import faux
from durable.storage import sealing
from durable.storage.sqlite.reader import SessionReader
from durable.testing.invariants import check_invariants

from .test_encryption import _run_rekey as run_rekey

pytestmark = pytest.mark.anyio

SECRET = b"zebra-mango-quartz"
SHARED = b"\x89PNG\r\n\x1a\n" + SECRET * 64 + b" shared"


def _own(i: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + SECRET * 64 + f" of conversation {i}".encode()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _raw(folder: str) -> bytes:
    files = [os.path.join(folder, f) for f in sorted(os.listdir(folder))]
    return b"".join(open(f, "rb").read() for f in files if os.path.isfile(f))


def _rows(path: str) -> list[tuple[str, str, int, int]]:
    """The attachments table as stored: key, media type, size, length of the stored bytes."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT sha256, media_type, size, length(data) FROM attachments ORDER BY sha256").fetchall()
    finally:
        conn.close()


async def _build(path: str, key: str, conversations: int) -> None:
    async with durable.open_harness(path, model=faux.FauxModel([faux.reply("seen")] * conversations),
                                    encryption_key=key) as h:
        for i in range(conversations):
            images = [durable.Image(_own(i))] + ([durable.Image(SHARED)] if i % 2 == 0 else [])
            assert await (await h.conversation(f"c{i}").submit([f"look {i}", *images])).answer() == "seen"


async def _read_all(path: str, key: str, conversations: int) -> dict[str, bytes]:
    storage = durable.SQLiteStorage(path, encryption_key=key)
    await storage.open()
    try:
        return await storage.get_attachments([_sha(SHARED), *(_sha(_own(i)) for i in range(conversations))])
    finally:
        await storage.close()


def _expected(conversations: int) -> dict[str, bytes]:
    return {_sha(SHARED): SHARED, **{_sha(_own(i)): _own(i) for i in range(conversations)}}


async def test_sealed_attachments_hold_neither_their_bytes_nor_their_hash(tmp_path) -> None:
    path = os.fspath(tmp_path / "s.sqlite")
    await _build(path, "k1", conversations=2)
    raw = _raw(os.fspath(tmp_path))
    assert SECRET not in raw and b"zebra" not in raw
    for data in (SHARED, _own(0), _own(1)):  # neither its sha256 as text nor as bytes
        assert _sha(data).encode() not in raw and hashlib.sha256(data).digest() not in raw
    meta_sealer = sealing.unlock(_meta(path), "k1", path)
    assert meta_sealer is not None
    # Each stored once, under its keyed id, sealed: its plain size plus the header, nonce and tag.
    assert _rows(path) == sorted((meta_sealer.attachment_id(_sha(d)), "image/png", len(d), len(d) + sealing.OVERHEAD)
                                 for d in (SHARED, _own(0), _own(1)))
    assert await _read_all(path, "k1", 2) == _expected(2)
    with SessionReader(path, key="k1"):
        assert check_invariants(path) == []  # every referenced attachment found under its id


def _meta(path: str) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT value FROM meta WHERE key = 'encryption'").fetchone()[0])
    finally:
        conn.close()


def _run_rekey(path: str, old: str, new: str, kill_after: int | None) -> list[str]:
    return run_rekey(path, old, new, kill_after, rows_per_commit=3)


async def test_a_rekey_killed_while_sealing_attachments_again_reads_everything_then_finishes(tmp_path) -> None:
    path = os.fspath(tmp_path / "s.sqlite")
    await _build(path, "old", conversations=6)
    old = sealing.unlock(_meta(path), "old", path)
    assert old is not None
    # A whole rotation on a copy says how many commits it takes; the attachments come last.
    os.mkdir(tmp_path / "copy")
    copy = os.fspath(tmp_path / "copy" / "s.sqlite")
    shutil.copy(path, copy)
    whole = await anyio.to_thread.run_sync(_run_rekey, copy, "old", "new", None)
    total, rows = whole.count("commit"), int(whole[-1].split()[1])
    left = rows - 3 * (total - 1)  # the rows of the last commit: attachments, which come last
    assert 1 <= left <= 3

    lines = await anyio.to_thread.run_sync(_run_rekey, path, "old", "new", total - 1)
    assert lines == ["rotating", *["commit"] * (total - 1)]
    both = sealing.unlock(_meta(path), "new", path)
    assert both is not None and len(both.keys) == 2
    keys = {key for key, *_ in _rows(path)}
    # 7 attachments (6 own, 1 shared): those of the last commit still under the old key's id,
    # the others moved to the new key's.
    old_ids = {old.attachment_id(_sha(d)) for d in _expected(6).values()}
    new_ids = {both.attachment_id(_sha(d)) for d in _expected(6).values()}
    assert len(keys) == 7 and len(keys & old_ids) == left and len(keys & new_ids) == 7 - left
    # Meanwhile either key reads every attachment, and the invariants hold.
    assert await _read_all(path, "new", 6) == _expected(6)
    assert await _read_all(path, "old", 6) == _expected(6)
    with SessionReader(path, key="new"):
        assert check_invariants(path) == []

    lines = await anyio.to_thread.run_sync(_run_rekey, path, "old", "new", None)
    assert lines == ["rotating", "commit", f"done {left}"]  # the rotation goes on: the last attachments
    assert {key for key, *_ in _rows(path)} == new_ids
    assert await _read_all(path, "new", 6) == _expected(6)
    with pytest.raises(durable.WrongKey, match="is encrypted with another key"):
        await _read_all(path, "old", 6)
    assert SECRET not in _raw(os.fspath(tmp_path))


async def test_a_plain_file_with_attachments_is_encrypted_by_a_rekey(tmp_path) -> None:
    path = os.fspath(tmp_path / "s.sqlite")
    async with durable.open_harness(path, model=faux.FauxModel([faux.reply("seen")])) as h:
        assert await (await h.root.submit(["look", durable.Image(SHARED)])).answer() == "seen"
    assert _rows(path) == [(_sha(SHARED), "image/png", len(SHARED), len(SHARED))]
    storage = durable.SQLiteStorage(path)
    await storage.open()
    assert await storage.rekey("now secret") == 6  # 2 entries, a task, an input, a document, an image
    await storage.close()
    sealer = sealing.unlock(_meta(path), "now secret", path)
    assert sealer is not None
    assert _rows(path) == [(sealer.attachment_id(_sha(SHARED)), "image/png", len(SHARED),
                            len(SHARED) + sealing.OVERHEAD)]
    assert SECRET not in _raw(os.fspath(tmp_path))
    storage = durable.SQLiteStorage(path, encryption_key="now secret")
    await storage.open()
    assert await storage.get_attachments([_sha(SHARED)]) == {_sha(SHARED): SHARED}
    await storage.close()


async def test_a_prune_of_an_encrypted_file_sweeps_by_keyed_id(tmp_path) -> None:
    path = os.fspath(tmp_path / "s.sqlite")
    await _build(path, "k", conversations=2)  # c0: its own image and the shared one; c1: its own
    async with durable.open_harness(path, model=faux.FauxModel([]), encryption_key="k") as h:
        report = await h.prune(ended_before=None, keep_last=1)  # c1 ended last: kept
    assert (report.conversations, report.attachments) == (("c0",), 2)  # c0's own image and the shared one
    sealer = sealing.unlock(_meta(path), "k", path)
    assert sealer is not None
    assert [key for key, *_ in _rows(path)] == [sealer.attachment_id(_sha(_own(1)))]
    with SessionReader(path, key="k"):
        assert check_invariants(path) == []
