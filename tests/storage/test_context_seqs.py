"""The seqs of a context read from a store are held without an int object each (issue 29): a
context is read on every turn of a conversation whose context was dropped while idle, and a list
of ints as long as the conversation, held for the turn, made the resident set grow with the length
of the conversations run. Contiguous seqs come back as a `range`; seqs with gaps (rows in no
context) as machine integers; the same seqs either way. And the SQLite store hands its bodies
joined, none split into a text per entry until the engine reads it (looking whether the file is
encrypted split the first 512 of them on every read)."""

from __future__ import annotations

from array import array

import pytest

from durable import codec
from durable.records import AssistantEntry, Entry, Live, StoredEntry
from durable.storage import Batch, MemoryStorage, SQLiteStorage
from durable.storage.joined import JoinedTexts

from .builders import assistant, user

pytestmark = pytest.mark.anyio

TURNS = 300  # 600 seqs: more than one chunk of the SQLite store's read (512), less than it streams from


def history(gaps: bool) -> Batch:
    entries: list[StoredEntry] = []
    for turn in range(TURNS):
        seq = len(entries) + 1
        entries.append(user(seq, f"question {turn}"))
        if gaps and turn % 7 == 0:  # an aborted answer: in no context
            entries.append(StoredEntry("root", seq + 1, AssistantEntry("half an answer", "aborted")))
        entries.append(assistant(len(entries) + 1, f"answer {turn}"))
    return Batch(entries=entries, live={"root": Live()})


@pytest.fixture(params=["sqlite", "memory"])
async def store(request, tmp_path):
    s = SQLiteStorage(str(tmp_path / "s.sqlite")) if request.param == "sqlite" else MemoryStorage()
    await s.open()
    yield s
    await s.close()


async def test_contiguous_seqs_come_back_as_a_range(store):
    await store.commit(history(gaps=False))
    raw = await store.get_context("root", 1, 2 * TURNS)
    assert raw.seqs == range(1, 2 * TURNS + 1)
    raw = await store.get_context("root", 5, 2 * TURNS)  # after a compaction's first kept seq
    assert raw.seqs == range(5, 2 * TURNS + 1)


async def test_seqs_with_gaps_come_back_as_machine_integers(store):
    batch = history(gaps=True)
    await store.commit(batch)
    last = batch.entries[-1].seq
    raw = await store.get_context("root", 1, last)
    expected = [e.seq for e in batch.entries if getattr(e.entry, "stop_reason", None) != "aborted"]
    assert isinstance(raw.seqs, array)
    assert list(raw.seqs) == expected
    assert len(raw.bodies) == len(expected)


async def test_a_context_read_from_a_plain_file_stays_joined_until_an_entry_is_read(tmp_path):
    store = SQLiteStorage(str(tmp_path / "s.sqlite"))
    await store.open()
    try:
        batch = history(gaps=False)
        await store.commit(batch)
        raw = await store.get_context("root", 1, 2 * TURNS)
        assert isinstance(raw.bodies, JoinedTexts)
        assert raw.bodies._split == [None, None]  # two chunks, neither split
        assert raw.bodies[0] == codec.dumps(batch.entries[0].entry, Entry)
        assert raw.bodies._split[1] is None  # reading the first splits only its chunk
    finally:
        await store.close()
