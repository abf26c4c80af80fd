"""An open of a file whose WAL is empty (closed cleanly) begins the WAL while the writer
has nothing else to do (`SQLiteWrites.start_wal`): SQLite syncs a new WAL's header and folder
before its first frame, and the first commit somebody waits for should not pay for that. The
commit it makes counts the opens (`meta.opens`) and is not one of the store's `commits`."""

from __future__ import annotations

import os
import sqlite3
import threading

import anyio
import pytest

from durable.records import GenerationLive, Live, PartialMessage
from durable.storage import Batch, SQLiteStorage

pytestmark = pytest.mark.anyio


def wal_size(path: str) -> int:
    try:
        return os.path.getsize(path + "-wal")
    except FileNotFoundError:
        return 0


def opens(path: str) -> list[tuple[str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT value FROM meta WHERE key = 'opens'").fetchall()
    finally:
        conn.close()


def opened(path: str, **kw: object) -> tuple[SQLiteStorage, threading.Event]:
    """A store on `path` and an event set once its writer ran `start_wal` (queued by the open
    for when the writer is idle)."""
    store = SQLiteStorage(path, **kw)  # type: ignore[arg-type]
    ran = threading.Event()
    start_wal = store._writes.start_wal

    def started() -> None:
        try:
            start_wal()
        finally:
            ran.set()

    store._writes.start_wal = started  # type: ignore[method-assign]
    return store, ran


async def idle(ran: threading.Event) -> None:
    await anyio.to_thread.run_sync(ran.wait)


async def created(path: str, **kw: object) -> None:
    """A new session file (its creation writes the WAL), closed cleanly (the WAL removed)."""
    store = SQLiteStorage(path, **kw)  # type: ignore[arg-type]
    await store.open()
    await store.close()
    assert wal_size(path) == 0 and opens(path) == []


async def test_each_open_of_a_cleanly_closed_file_begins_its_wal_before_the_first_commit(tmp_path):
    path = os.fspath(tmp_path / "session.db")
    await created(path)
    for n in (1, 2, 3):
        store, ran = opened(path)
        await store.open()
        try:
            await idle(ran)
            assert wal_size(path) > 0  # begun, with no commit of the caller's
            assert store._writes.commits == 0
            await store.commit(Batch(live={"root": Live(generation=GenerationLive(1, PartialMessage(str(n))))},
                                     barrier=True))
            assert store._writes.commits == 1 and store.barriers == 1
        finally:
            await store.close()
        assert wal_size(path) == 0  # checkpointed and removed by the clean close
        assert opens(path) == [(str(n),)]


async def test_a_file_whose_every_commit_is_synced_gets_no_extra_commit_at_open(tmp_path):
    path = os.fspath(tmp_path / "session.db")
    await created(path, synchronous="FULL")
    store, ran = opened(path, synchronous="FULL")
    await store.open()
    try:
        await idle(ran)
        assert wal_size(path) == 0
    finally:
        await store.close()
    assert opens(path) == []


async def test_a_wal_left_by_a_crash_is_not_begun_again(tmp_path):
    path = os.fspath(tmp_path / "session.db")
    await created(path)
    store, ran = opened(path)
    await store.open()
    await idle(ran)
    await store.commit(Batch(live={"root": Live(generation=GenerationLive(1, PartialMessage("kept")))}, barrier=True))
    size = wal_size(path)
    # As a crash leaves it: the WAL and its commits in place (the connection is closed only
    # after the next open: a close would checkpoint the WAL).
    left, store._writes.conn = store._writes.conn, None
    store._writes.lock.release()
    store._queue.put(None)  # the writer thread ends, closing nothing
    store2, ran2 = opened(path)
    await store2.open()
    try:
        await idle(ran2)
        assert wal_size(path) == size
        assert (await store2.get_live("root")).generation.message.text == "kept"
    finally:
        await store2.close()
        assert left is not None
        left.close()
    assert opens(path) == [("1",)]
