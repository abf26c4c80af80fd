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
