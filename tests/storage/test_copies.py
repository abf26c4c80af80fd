"""Entries copied into a new conversation (`Batch.copies`, a fork) on every store: the rows as
stored, in the same transaction as the batch's own rows; refused whole when the target has one."""

from __future__ import annotations

import pytest

from durable.errors import CommitFailed
from durable.records import Live, StoredEntry
from durable.storage import Batch, ConversationState, EntryCopy

from .builders import assistant, compaction, user

pytestmark = pytest.mark.anyio

FORKED = Live(forked_from="root", forked_at=3)


def moved(entries: list[StoredEntry], conversation_id: str) -> list[StoredEntry]:
    return [StoredEntry(conversation_id, e.seq, e.entry) for e in entries]


async def test_copied_entries_read_back_as_the_source_and_the_fork_reopens_with_its_state(backend, store):
    source = [user(1), assistant(2), compaction(3, 2), user(4)]
    await store.commit(Batch(entries=source[:2], live={"root": Live()}))
    # the batch's own entries are written before the copy: seq 3 is taken along
    await store.commit(Batch(entries=source[2:], copies=[EntryCopy("root", "fork", 3)], live={"fork": FORKED}))
    assert await store.get_entries("fork") == moved(source[:3], "fork")
    assert await store.get_entries("root") == source
    context = await store.get_context("fork", 2, 3)
    assert list(context.seqs) == [2]
    await store.close()
    again = backend.store()
    opened = await again.open()
    assert opened.conversations["fork"] == ConversationState(3, FORKED, moved(source[2:3], "fork")[0])
    await again.close()


async def test_a_copy_onto_a_conversation_with_entries_is_refused_whole(backend, store):
    await store.commit(Batch(entries=[user(1), assistant(2), user(1, conversation_id="taken")],
                             live={"root": Live(), "taken": Live()}))
    with pytest.raises(CommitFailed) as refused:
        await store.commit(Batch(copies=[EntryCopy("root", "taken", 2)], live={"taken": FORKED}))
    assert store.location in str(refused.value) and "UNIQUE" in str(refused.value)
    assert await store.get_entries("taken") == [user(1, conversation_id="taken")]
    assert await store.get_live("taken") == Live()
    await store.close()
