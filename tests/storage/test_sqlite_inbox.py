"""A session file's inbox (`durable.storage.sqlite.inbox`): the decisions another process puts
there, refused when no call waits or one is already decided, read oldest first by the owner, and
refused with a clear error on a file whose owner made no inbox. The owner's looks (the open's and
its watcher's) probe the WAL write lock on the writer thread's connection, never /proc/locks."""

from __future__ import annotations

import json
import sqlite3

import pytest

from durable.errors import ApprovalRejected, StorageError
from durable.records import ApprovalSlot, Live
from durable.storage import Batch, SQLiteStorage
from durable.storage.sqlite import inbox, lock

pytestmark = pytest.mark.anyio

WAITING = {"root": Live(approvals=(ApprovalSlot("call_1", "save_note", '{"text": "a"}', 3, 1.0),
                                   ApprovalSlot("call_2", "save_note", '{"text": "b"}', 4, 1.0)))}


async def a_file(path) -> SQLiteStorage:
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(live=WAITING))
    return store


async def test_decisions_are_taken_oldest_first_and_deleted_by_the_commit_applying_them(tmp_path):
    path = str(tmp_path / "s.sqlite")
    store = await a_file(path)
    try:
        assert await store.take_decisions(10) == []
        first = inbox.put_decision(path, "call_1", approve=True, arguments='{"text": "x"}')
        second = inbox.put_decision(path, "call_2", approve=False, reason="no")
        await store.wait_inbox()  # returns: there is one
        taken = await store.take_decisions(10)
        assert [(d.id, d.call_id, d.approve, d.arguments, d.reason) for d in taken] == [
            (first, "call_1", True, '{"text": "x"}', ""), (second, "call_2", False, None, "no")]
        assert await store.take_inbox(10) == []  # a file's inbox holds decisions only
        await store.commit(Batch(inbox=[first]))
        assert [d.id for d in await store.take_decisions(10)] == [second]
    finally:
        await store.close()


async def test_a_decision_is_refused_for_a_call_not_waiting_or_already_decided(tmp_path):
    path = str(tmp_path / "s.sqlite")
    store = await a_file(path)
    await store.close()
    with pytest.raises(ApprovalRejected) as unknown:
        inbox.put_decision(path, "nope", approve=True)
    assert str(unknown.value) == f"No tool call nope waits for a decision in {path}; nothing was decided"
    inbox.put_decision(path, "call_1", approve=True)
    with pytest.raises(ApprovalRejected) as twice:
        inbox.put_decision(path, "call_1", approve=False)
    assert str(twice.value) == (f"Tool call call_1 in {path} was already decided (another decision is in its "
                                "inbox); nothing was decided")
    conn = sqlite3.connect(path)
    assert [json.loads(b) for (b,) in conn.execute("SELECT body FROM inbox")] == [
        {"call_id": "call_1", "approve": True, "arguments": None, "reason": ""}]
    conn.close()


async def test_a_file_without_an_inbox_is_refused_naming_it(tmp_path):
    path = str(tmp_path / "s.sqlite")
    store = await a_file(path)
    await store.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE inbox")  # as an owner of an older durable left it
    conn.close()
    with pytest.raises(StorageError) as refused:
        inbox.put_decision(path, "call_1", approve=True)
    assert str(refused.value) == (f"Session file {path} has no inbox: its owner must run a durable that reads one "
                                  "to take decisions from the console")


@pytest.fixture
def no_proc_locks(monkeypatch):
    """/proc/locks and its readers raise: what uses them fails the test."""
    import builtins

    real_open = builtins.open

    def refused(*args, **kwargs):
        raise AssertionError("/proc/locks was read")

    def guarded_open(file, *args, **kwargs):
        if str(file) == "/proc/locks":
            refused()
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(lock, "wal_write_locked", refused)
    monkeypatch.setattr(lock, "_proc_locks_holder", refused)


async def test_a_decision_whose_commit_is_not_visible_yet_when_the_owner_looks_is_probed_again(tmp_path, monkeypatch,
                                                                                               no_proc_locks):
    # A commit's frames change the WAL's time and size before the commit is fsynced and visible.
    # The stamp is held fixed (as if those frames were already written, long ago) while another
    # connection holds the WAL write lock: the owner's probe then finds nothing, and must probe
    # again at a later look, once the commit is visible, though the stamp did not change.
    import os

    import anyio

    path = str(tmp_path / "s.sqlite")
    store = await a_file(path)
    store.inbox_poll_seconds = 0.001
    monkeypatch.setattr(inbox, "stamp", lambda path: (1, 4096, 1, 8192))
    probes: list[tuple[tuple[int, ...] | None, bool]] = []
    probed = anyio.Event()
    read = store._read

    async def probe(table, fn):  # the owner's probe of its inbox, on its writer thread
        found = await read(table, fn)
        probes.append(found)
        probed.set()
        return found

    monkeypatch.setattr(store, "_read", probe)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        assert await store.call_in_writer(inbox.write_locked) is False
        other.execute("BEGIN IMMEDIATE")  # the WAL write lock, held until COMMIT
        other.execute("INSERT INTO inbox (id, call_id, created_at, body) VALUES (?,?,?,?)",
                      ("dec_1", "call_1", 1.0, json.dumps({"call_id": "call_1", "approve": True})))
        assert await store.call_in_writer(inbox.write_locked) is True
        assert os.path.exists(path + "-shm")
        with anyio.fail_after(60):  # a deadline, not a pause: it returns as soon as it sees the decision
            async with anyio.create_task_group() as tg:
                tg.start_soon(store.wait_inbox)
                await probed.wait()  # the look that saw the stamp, during the transaction
                other.execute("COMMIT")
        assert probes[0] == (None, False)  # busy: not seen, and the decision not visible yet
        assert probes[-1] == ((1, 4096, 1, 8192), True)
        assert [d.call_id for d in await store.take_decisions(10)] == ["call_1"]
    finally:
        other.close()
        await store.close()


async def test_the_first_look_at_the_inbox_is_the_opens_and_adds_no_read_beside_the_first_turn(tmp_path, monkeypatch,
                                                                                               no_proc_locks):
    # The open looks at the inbox (on the writer thread, in its own job), so the watcher a harness
    # starts with its first turn queues no read among that turn's commits; a decision already
    # there at the open is found at once, without a poll.
    import anyio

    path = str(tmp_path / "s.sqlite")
    await (await a_file(path)).close()  # a file with calls waiting for a decision
    # As if the file last changed long ago: the looks probe the write lock (a file changed within
    # the last 50 ms is looked at again anyway).
    monkeypatch.setattr(inbox, "stamp", lambda path: (1, 4096, 1, 8192))
    reads: list[str] = []

    async def opened() -> SQLiteStorage:
        store = SQLiteStorage(path, inbox_poll_seconds=3600)  # the next look an hour away
        await store.open()
        read = store._read

        async def counted(table, fn):
            reads.append(table)
            return await read(table, fn)

        monkeypatch.setattr(store, "_read", counted)
        return store

    store = await opened()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(store.wait_inbox)
            await anyio.wait_all_tasks_blocked()  # the watcher sleeps until its next look
            tg.cancel_scope.cancel()
        assert reads == []
    finally:
        await store.close()

    inbox.put_decision(path, "call_1", approve=True)
    store = await opened()
    try:
        with anyio.fail_after(60):  # a deadline, not a pause: the open's look found it
            await store.wait_inbox()
        assert reads == []
        assert [d.call_id for d in await store.take_decisions(10)] == ["call_1"]
        assert reads == ["inbox"]
    finally:
        await store.close()


async def test_the_probe_says_whether_another_connection_holds_the_write_lock_and_leaves_the_connection_as_it_was(
        tmp_path, no_proc_locks):
    path = str(tmp_path / "s.sqlite")
    store = await a_file(path)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def probe(conn: sqlite3.Connection) -> tuple[bool, bool, int]:
        return inbox.write_locked(conn), conn.in_transaction, conn.execute("PRAGMA busy_timeout").fetchone()[0]

    try:
        assert await store.call_in_writer(probe) == (False, False, 5000)  # not busy: rolled back at once
        other.execute("BEGIN")
        other.execute("SELECT count(*) FROM inbox").fetchone()  # a reader does not hold the write lock
        assert await store.call_in_writer(probe) == (False, False, 5000)
        other.execute("COMMIT")
        other.execute("BEGIN IMMEDIATE")
        assert await store.call_in_writer(probe) == (True, False, 5000)  # busy: held by the other connection
        other.execute("ROLLBACK")
        assert await store.call_in_writer(probe) == (False, False, 5000)
        await store.commit(Batch(inbox=[]))  # the owner still commits after its probes
    finally:
        other.close()
        await store.close()


async def test_a_look_counts_a_stamp_as_seen_only_when_no_writer_holds_the_lock_and_the_file_did_not_just_change(
        tmp_path, no_proc_locks):
    path = str(tmp_path / "s.sqlite")
    store = await a_file(path)
    inbox.put_decision(path, "call_1", approve=True)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    old = (1, 4096, 1, 8192)  # as if the file and its WAL last changed long ago
    try:
        assert await store.call_in_writer(lambda c: inbox.first_look(c, path, old)) == (old, True)
        now = inbox.stamp(path)  # the decision was just put: the file changed within the last 50 ms
        assert await store.call_in_writer(lambda c: inbox.first_look(c, path, now)) == (None, True)
        other.execute("BEGIN IMMEDIATE")
        assert await store.call_in_writer(lambda c: inbox.first_look(c, path, old)) == (None, True)
        other.execute("DELETE FROM inbox")  # not committed: the look still sees the decision
        assert await store.call_in_writer(lambda c: inbox.first_look(c, path, old)) == (None, True)
        other.execute("COMMIT")
        assert await store.call_in_writer(lambda c: inbox.first_look(c, path, old)) == (old, False)
    finally:
        other.close()
        await store.close()
