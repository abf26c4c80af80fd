"""A session file's inbox (`durable.storage.sqlite.inbox`): the decisions another process puts
there, refused when no call waits or one is already decided, read oldest first by the owner, and
refused with a clear error on a file whose owner made no inbox."""

from __future__ import annotations

import json
import sqlite3

import pytest

from durable.errors import ApprovalRejected, StorageError
from durable.records import ApprovalSlot, Live
from durable.storage import Batch, SQLiteStorage
from durable.storage.sqlite import inbox

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


async def test_a_decision_whose_commit_is_not_visible_yet_when_the_owner_looks_is_probed_again(tmp_path, monkeypatch):
    # A commit's frames change the WAL's time and size before the commit is fsynced and visible.
    # The stamp is held fixed (as if those frames were already written, long ago) while another
    # connection holds the WAL write lock: the owner's probe then finds nothing, and must probe
    # again at a later look, once the commit is visible, though the stamp did not change.
    import os

    import anyio

    from durable.storage.sqlite.lock import wal_write_locked

    path = str(tmp_path / "s.sqlite")
    store = await a_file(path)
    store.inbox_poll_seconds = 0.001
    monkeypatch.setattr(inbox, "stamp", lambda path: (1, 4096, 1, 8192))
    probes: list[bool] = []
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
        assert wal_write_locked(path) is False
        other.execute("BEGIN IMMEDIATE")  # the WAL write lock, held until COMMIT
        other.execute("INSERT INTO inbox (id, call_id, created_at, body) VALUES (?,?,?,?)",
                      ("dec_1", "call_1", 1.0, json.dumps({"call_id": "call_1", "approve": True})))
        assert wal_write_locked(path) is True
        assert os.path.exists(path + "-shm")
        with anyio.fail_after(60):  # a deadline, not a pause: it returns as soon as it sees the decision
            async with anyio.create_task_group() as tg:
                tg.start_soon(store.wait_inbox)
                await probed.wait()  # the look that saw the stamp, during the transaction
                other.execute("COMMIT")
        assert probes[0] is False and probes[-1] is True
        assert [d.call_id for d in await store.take_decisions(10)] == ["call_1"]
    finally:
        other.close()
        await store.close()


async def test_the_first_look_at_the_inbox_is_the_opens_and_adds_no_read_beside_the_first_turn(tmp_path, monkeypatch):
    # The open looks at the inbox (on the writer thread, in its own job), so the watcher a harness
    # starts with its first turn queues no read among that turn's commits; a decision already
    # there at the open is found at once, without a poll.
    import anyio

    path = str(tmp_path / "s.sqlite")
    await (await a_file(path)).close()  # a file with calls waiting for a decision
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
