"""Long texts of live rows are written by what they gained (issue 25, item 1): a streamed partial
answer or tool output is kept apart in pieces (`durable.storage.texts`), its row holds the rest,
and every read joins it back. On every store (the conformance backends), and the SQLite file's
write amplification measured in WAL bytes."""

from __future__ import annotations

import os

import pytest

from durable.records import Done, GenerationLive, Live, PartialMessage, Running, Terminal, ToolSlot
from durable.storage import Batch, SQLiteStorage
from durable.storage.rows import decode_rows
from durable.storage.sqlite.reader import SessionReader
from durable.storage.texts import LONG, PIECE
from durable.tasks.tool import ToolProgress

from .builders import task

pytestmark = pytest.mark.anyio

ANSWER = "".join(f"line {i:05d} of a long answer\n" for i in range(11_500))[:300_000]


def partial(text: str, *, slot: str = "") -> Live:
    tools = (ToolSlot("call_2", "grep", 2, slot),) if slot else ()
    return Live(generation=GenerationLive(1, PartialMessage(text)), tools=tools)


def tool(output: str, *, ended: bool = False):
    return task(2, kind="tool", parent_id=1, state=Terminal(Done()) if ended else Running(),
                checkpoint=ToolProgress(output))


async def test_a_growing_answer_and_tool_output_read_back_whole_through_every_read(backend, store):
    for n in (200, 500, LONG, 5_000, 40_000, 300_000):  # below both thresholds, past the live one, at both, far past
        await store.commit(Batch(tasks=[tool(ANSWER[:n])], live={"root": partial(ANSWER[:n], slot=ANSWER[:n])},
                                 barrier=False))
        assert await store.get_live("root") == partial(ANSWER[:n], slot=ANSWER[:n])
        assert await store.get_task(2) == tool(ANSWER[:n])
        assert await store.find_tasks(kind="tool") == [tool(ANSWER[:n])]
    store, opened = await reopen_store(backend, store)
    assert opened.conversations["root"].live == partial(ANSWER, slot=ANSWER)
    assert opened.live_tasks == [tool(ANSWER)]
    await store.close()


async def test_a_text_that_starts_again_or_goes_replaces_every_piece(backend, store):
    await store.commit(Batch(tasks=[tool(ANSWER[:50_000])], live={"root": partial(ANSWER[:50_000])}))
    again = "another attempt: " + ANSWER[1000:4000]  # a new attempt's partial: not a continuation
    await store.commit(Batch(live={"root": partial(again)}))
    await store.commit(Batch(tasks=[tool(ANSWER[:60_000], ended=True)]))  # an ended task keeps it inline
    assert await store.get_live("root") == partial(again)
    assert await store.get_task(2) == tool(ANSWER[:60_000], ended=True)
    await store.commit(Batch(live={"root": Live()}))
    store, opened = await reopen_store(backend, store)
    assert opened.conversations["root"].live == Live()
    assert await store.get_task(2) == tool(ANSWER[:60_000], ended=True)
    assert pieces(backend, store) == 0  # nothing left apart once no live row has a long text
    await store.close()


async def test_a_long_text_with_surrogates_is_stored_as_utf_8_and_reads_back_joined(backend, store):
    """A model's encoder may split a character outside the BMP over two deltas (each a lone
    surrogate) or stream a lone one; pieces and the side file hold UTF-8, which cannot hold
    either. Before, the commit was refused ("surrogates not allowed") and the run ended
    `storage_error` though storage was fine. The pair is joined, the lone one is U+FFFD."""
    head = "x" * 300 + "Hel\ud83d"  # past the live threshold: kept apart, grown by appends
    await store.commit(Batch(tasks=[tool("y" * LONG + "\udc80")], live={"root": partial(head)}, barrier=False))
    await store.commit(Batch(live={"root": partial(head + "\ude00lo \udc80!")}, barrier=False))
    assert await store.get_live("root") == partial("x" * 300 + "Hel\U0001f600lo \ufffd!")
    store, opened = await reopen_store(backend, store)
    assert opened.conversations["root"].live == partial("x" * 300 + "Hel\U0001f600lo \ufffd!")
    assert opened.live_tasks == [tool("y" * LONG + "\ufffd")]
    await store.close()


async def reopen_store(backend, store):
    await store.close()
    again = backend.store()
    return again, await again.open()


def pieces(backend, store) -> int:
    """The pieces a store keeps apart, counted where it keeps them (SQLite: read from the file)."""
    inner = getattr(store, "_inner", store)
    if isinstance(inner, SQLiteStorage):
        with SessionReader(inner.path) as reader:
            return reader._all("SELECT count(*) FROM texts")[0][0]
    if hasattr(inner, "_pieces"):
        return len(inner._pieces)
    import psycopg

    with psycopg.connect(inner._link.dsn) as conn:
        return conn.execute("SELECT count(*) FROM durable.texts WHERE space = %s", (inner.space,)).fetchone()[0]


async def test_the_invariant_checkers_rows_hold_the_texts_joined_back(tmp_path):
    path = os.fspath(tmp_path / "session.db")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(tasks=[tool(ANSWER)], live={"root": partial(ANSWER, slot=ANSWER)}))
    await store.close()
    with SessionReader(path) as reader:
        records = decode_rows(reader.rows(), path)
        assert reader.live_documents() == {"root": partial(ANSWER, slot=ANSWER)}
        assert reader.tasks() == [tool(ANSWER)]
        stored = reader._all("SELECT body, texts FROM documents")[0]
    assert records.problems == [] and records.live["root"] == partial(ANSWER, slot=ANSWER)
    assert records.tasks[2] == tool(ANSWER)
    assert ANSWER[:LONG] not in stored[0] and stored[1] == '{"generation":2,"tool:2":3}'


def wal_bytes(path: str) -> int:
    return os.path.getsize(path + "-wal")


def thinking(text: str) -> Live:
    return Live(generation=GenerationLive(1, PartialMessage(reasoning=text)))


@pytest.mark.parametrize("grown", [partial, thinking], ids=["answer", "reasoning"])
async def test_a_300_kb_answer_flushed_a_kilobyte_at_a_time_writes_about_a_page_a_commit(tmp_path, monkeypatch,
                                                                                         grown):
    """Before, each flush wrote the whole partial so far (quadratic: ~45 MB of WAL for this one);
    now the last piece is rewritten and the live document's row is left alone: under two pages
    of WAL a commit, however long the answer (or the reasoning streamed before it)."""
    monkeypatch.setattr("durable.storage.sqlite.write.WAL_LIMIT", 1 << 40)  # no checkpoint: the WAL keeps all
    path = os.fspath(tmp_path / "session.db")
    store = SQLiteStorage(path)
    await store.open()
    await store.call_in_writer(lambda c: c.execute("PRAGMA wal_autocheckpoint = 0"))
    await store.commit(Batch(live={"root": grown(ANSWER[:2000])}))
    before = wal_bytes(path)
    steps = range(3000, 300_001, 1000)
    for n in steps:
        await store.commit(Batch(live={"root": grown(ANSWER[:n])}, barrier=False))
    per_commit = (wal_bytes(path) - before) / len(steps)
    frame = 4096 + 24
    # A page a commit; every fourth commit or so a new piece: a new page, the one before it, their
    # parent and the file's first page (its size): under two pages a commit in all.
    assert per_commit <= 2 * frame, per_commit
    assert await store.get_live("root") == grown(ANSWER)
    await store.close()
    assert PIECE < 4000  # a piece (ASCII) fits in a page
