"""A long reasoning stream is kept apart in pieces like a long answer (`durable.storage.texts`):
the live document's partial reasoning is blanked in its row, written by what it gained, and
joined back by every read, on every store; an aborted entry's partial reasoning is inline. (Its
write amplification is measured with the answer's, in test_long_texts.)"""

from __future__ import annotations

import os

import pytest

from durable.records import AssistantEntry, GenerationLive, Live, PartialMessage, Reasoning, StoredEntry
from durable.storage import Batch, SQLiteStorage
from durable.storage.rows import decode_rows
from durable.storage.sqlite.reader import SessionReader
from durable.storage.texts import LONG

from .test_long_texts import pieces, reopen_store

pytestmark = pytest.mark.anyio

THOUGHT = "".join(f"step {i:05d}: consider the weather\n" for i in range(9_000))[:300_000]
ANSWER = "".join(f"line {i:05d} of the answer\n" for i in range(2_000))[:40_000]


def partial(reasoning: str, text: str = "") -> Live:
    return Live(generation=GenerationLive(1, PartialMessage(text, reasoning=reasoning)))


async def test_a_growing_reasoning_reads_back_whole_and_is_dropped_with_the_partial(backend, store):
    for n in (500, LONG, 5_000, 40_000, 300_000):
        await store.commit(Batch(live={"root": partial(THOUGHT[:n])}, barrier=False))
        assert await store.get_live("root") == partial(THOUGHT[:n])
    await store.commit(Batch(live={"root": partial(THOUGHT, ANSWER)}, barrier=False))  # then the answer streams
    assert await store.get_live("root") == partial(THOUGHT, ANSWER)
    store, opened = await reopen_store(backend, store)
    assert opened.conversations["root"].live == partial(THOUGHT, ANSWER)
    entry = AssistantEntry(ANSWER, "aborted", reasoning=(Reasoning(THOUGHT, partial=True),))
    await store.commit(Batch(entries=[StoredEntry("root", 1, entry)], live={"root": Live()}))
    assert [e.entry for e in await store.get_entries("root")] == [entry]
    assert pieces(backend, store) == 0  # nothing apart once the live row has no long text
    await store.close()


async def test_the_checkers_rows_hold_the_reasoning_joined_back_and_the_row_holds_none_of_it(tmp_path):
    path = os.fspath(tmp_path / "session.db")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(live={"root": partial(THOUGHT, ANSWER)}))
    await store.close()
    with SessionReader(path) as reader:
        records = decode_rows(reader.rows(), path)
        assert reader.live_documents() == {"root": partial(THOUGHT, ANSWER)}
        body, texts = reader._all("SELECT body, texts FROM documents")[0]
    assert records.problems == [] and records.live["root"] == partial(THOUGHT, ANSWER)
    assert THOUGHT[:LONG] not in body and '"reasoning"' not in body  # blanked, hence left out of the row
    assert texts == '{"generation":1,"reasoning":2}'
