"""Long texts of live rows are written by what they gained (issue 25, item 1): a streamed partial
answer or tool output is kept apart in pieces (`durable.storage.texts`), its row holds the rest,
and every read joins it back; a running tool's output, its task's and its slot's, is one stream.
On every store (the conformance backends), and the SQLite file's write amplification measured in
WAL bytes."""

from __future__ import annotations

import os
import random
import sqlite3

import pytest

from durable.records import Done, GenerationLive, Live, PartialMessage, Running, Terminal, ToolSlot
from durable.storage import Batch, SQLiteStorage
from durable.storage.held import HeldTexts
from durable.storage.rows import decode_rows
from durable.storage.sqlite.reader import SessionReader
from durable.storage.texts import LONG, PIECE, SHIFT, column, streams_of
from durable.tasks.tool import ToolProgress

from .builders import task, user
from .held_writer import commit_behind_held_writer

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
    assert ANSWER[:LONG] not in stored[0] and stored[1] == '{"generation":2,"tool:2":1}'  # the task's output


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


async def test_a_streamed_answer_that_starts_like_a_sealed_body_reads_back_from_a_plain_store(backend, store):
    """A plain store's pieces are its text as it is: one that starts with the prefix of a sealed
    body ("enc1:") is never taken for one (it was refused with WrongKey at the next open)."""
    text = "enc1:" + ANSWER[:PIECE - 5] + "enc1:0123456789abcdef:" + ANSWER[:20_000]  # a piece starts with it too
    await store.commit(Batch(tasks=[tool(text)], live={"root": partial(text, slot=text)}, barrier=False))
    await store.commit(Batch(tasks=[tool(text + "!")], live={"root": partial(text + "!", slot=text)}))
    store, opened = await reopen_store(backend, store)
    assert opened.conversations["root"].live == partial(text + "!", slot=text)
    assert opened.live_tasks == [tool(text + "!")]
    assert await store.get_live("root") == partial(text + "!", slot=text)
    await store.close()


async def test_a_plain_file_with_such_an_answer_is_read_then_encrypted_by_a_rekey(tmp_path):
    path = os.fspath(tmp_path / "session.db")
    text = "enc1:" + ANSWER[:20_000]
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(tasks=[tool(text)], live={"root": partial(text, slot=text)}))
    await store.close()
    with SessionReader(path) as reader:
        assert reader.live_documents() == {"root": partial(text, slot=text)}
        assert decode_rows(reader.rows(), path).live["root"] == partial(text, slot=text)
    store = SQLiteStorage(path)
    await store.open()
    assert await store.rekey("k", rows_per_commit=3) > 0  # the plain pieces starting "enc1:" sealed too
    await store.close()
    store = SQLiteStorage(path, encryption_key="k")
    opened = await store.open()
    assert opened.conversations["root"].live == partial(text, slot=text)
    assert opened.live_tasks == [tool(text)]
    await store.close()


# ------------------------------------------------------------------ a tool's output: one stream, two rows


def running(output: str, status: str = "running") -> Live:
    return Live(tools=(ToolSlot("call_2", "grep", 2, output, status),))  # type: ignore[arg-type]


def kept(*texts: str) -> int:
    """The pieces that keep `texts` apart, each once."""
    return sum(-(-len(text) // PIECE) for text in texts)


async def check(store, output: str, slot: Live, *, ended: bool = False) -> None:
    """The task's output and the slot read back as committed, through every read of the store."""
    assert await store.get_task(2) == tool(output, ended=ended)
    assert await store.find_tasks(kind="tool") == [tool(output, ended=ended)]
    assert await store.get_live("root") == slot


async def test_a_running_tools_output_is_kept_once_for_its_task_and_its_slot(backend, store):
    """A tool's flush commits its output twice (its task's checkpoint, its live slot): both rows
    map it to one stream, grown once, by appends (beside the file on SQLite) or transactions, from
    the length kept apart in the slot alone (256) to both (1,024) and far past."""
    for n in (300, LONG, 20_000, 60_000, 300_000):
        await store.commit(Batch(tasks=[tool(ANSWER[:n])], live={"root": running(ANSWER[:n])}, barrier=False))
        await check(store, ANSWER[:n], running(ANSWER[:n]))
        grown = ANSWER[:n + 50]
        await store.commit(Batch(tasks=[tool(grown)], live={"root": running(grown)}))  # a transaction: folds them
        await check(store, grown, running(grown))
        assert pieces(backend, store) == kept(grown)  # one copy, not two
    store, opened = await reopen_store(backend, store)
    grown = ANSWER[:300_050]
    assert (opened.live_tasks, opened.conversations["root"].live) == ([tool(grown)], running(grown))
    await check(store, grown, running(grown))
    await store.close()


@pytest.mark.parametrize("order", ["one batch", "task first", "slot first", "slot outlives"])
async def test_a_tool_that_ends_leaves_no_piece_apart_in_whatever_order_its_rows_go(backend, store, order):
    """Its task ends (its output inline in the ended row) and its slot goes, in one batch or two
    in either order: the stream they shared is dropped once neither maps to it, not before."""
    out, done = ANSWER[:50_000], ANSWER[:51_000]
    await store.commit(Batch(tasks=[tool(out)], live={"root": running(out)}))
    ended, gone = Batch(tasks=[tool(done, ended=True)]), Batch(live={"root": Live()})
    if order == "one batch":
        await store.commit(Batch(tasks=ended.tasks, live=gone.live))
    elif order == "task first":
        await store.commit(ended)
        await check(store, done, running(out), ended=True)
        assert pieces(backend, store) == kept(out)  # the slot's still
        await store.commit(gone)
    elif order == "slot first":
        await store.commit(gone)
        await check(store, out, Live())
        assert pieces(backend, store) == kept(out)  # the task's still
        await store.commit(ended)
    else:  # as a tool's ending writes it: the slot keeps the output, done, until its round closes
        await store.commit(Batch(tasks=ended.tasks, live={"root": running(done, "done")}))
        await check(store, done, running(done, "done"), ended=True)
        assert pieces(backend, store) == kept(done)  # grown for the slot, which alone maps to it now
        await store.commit(gone)
    await check(store, done, Live(), ended=True)
    assert pieces(backend, store) == 0
    store, opened = await reopen_store(backend, store)
    assert (opened.live_tasks, opened.conversations["root"].live) == ([], Live())
    await check(store, done, Live(), ended=True)
    assert pieces(backend, store) == 0
    await store.close()


async def test_an_output_that_goes_another_way_in_one_row_gets_a_stream_of_its_own(backend, store):
    """A row written without the other (a slot that starts its output again, a task whose output
    grew alone) never changes the text the other row reads: it gets a stream of its own, even by
    a lazy commit; once both hold one text again they share its stream, the other one dropped."""
    out, again = ANSWER[:50_000], "started again\n" + ANSWER[:2_000]
    await store.commit(Batch(tasks=[tool(out)], live={"root": running(out)}))
    await store.commit(Batch(live={"root": running(again)}, barrier=False))  # the slot alone starts again
    await check(store, out, running(again))
    await store.commit(Batch(tasks=[tool(again)]))  # the task catches up: the slot's stream
    await check(store, again, running(again))
    assert pieces(backend, store) == kept(again)
    await store.commit(Batch(tasks=[tool(out)], live={"root": running(out)}))
    await store.commit(Batch(tasks=[tool(ANSWER[:60_000])], barrier=False))  # the task alone grows
    await check(store, ANSWER[:60_000], running(out))
    await store.commit(Batch(live={"other": Live()}))  # a transaction (folds what was appended)
    assert pieces(backend, store) == kept(out, ANSWER[:60_000])
    await store.commit(Batch(live={"root": running(ANSWER[:60_000])}, barrier=False))  # the slot catches up
    await check(store, ANSWER[:60_000], running(ANSWER[:60_000]))
    await store.commit(Batch(tasks=[tool(ANSWER[:61_000])], live={"root": running(ANSWER[:61_000])}))
    assert pieces(backend, store) == kept(ANSWER[:61_000])
    store, opened = await reopen_store(backend, store)
    assert (opened.live_tasks, opened.conversations["root"].live) == ([tool(ANSWER[:61_000])],
                                                                      running(ANSWER[:61_000]))
    await store.close()


async def test_a_file_that_keeps_each_copy_apart_reads_and_grows_and_then_keeps_one(backend, store):
    """A file written before the copies were shared maps the slot to a stream of its own: it
    reads back, both grow by appends (two, beside the file on SQLite, taken back by an open), and
    the next transaction that writes both leaves them one stream."""
    out = ANSWER[:50_000]
    await store.commit(Batch(tasks=[tool(out)], live={"root": running(out)}))
    await store.close()
    own_copies(backend, store)
    assert pieces(backend, store) == kept(out, out)
    store = backend.store()
    opened = await store.open()
    assert (opened.live_tasks, opened.conversations["root"].live) == ([tool(out)], running(out))
    grown = ANSWER[:55_000]
    await store.commit(Batch(tasks=[tool(grown)], live={"root": running(grown)}, barrier=False))
    await check(store, grown, running(grown))
    store, opened = await reopen_store(backend, store)
    assert (opened.live_tasks, opened.conversations["root"].live) == ([tool(grown)], running(grown))
    grown = ANSWER[:56_000]
    await store.commit(Batch(tasks=[tool(grown)], live={"root": running(grown)}))
    await check(store, grown, running(grown))
    assert pieces(backend, store) == kept(grown)
    await store.close()


def own_copies(backend, store) -> None:
    """Map the slot of the closed store's file to a copy of its stream, as a file written before
    the copies were shared keeps it (and as an open of it loads it)."""
    inner = getattr(store, "_inner", store)

    def copied(col: str, found: list[tuple[int, str]]) -> tuple[str | None, list[tuple[int, str]]]:
        fields = streams_of(col)
        number, new = fields["tool:2"], 1 + max(key >> SHIFT for key, _ in found)
        fields["tool:2"] = new
        return column(fields), [((new << SHIFT) | (key & ((1 << SHIFT) - 1)), body)
                                for key, body in found if key >> SHIFT == number]

    if isinstance(inner, SQLiteStorage):
        conn = sqlite3.connect(inner.path)
        with conn:
            (col,) = conn.execute("SELECT texts FROM documents WHERE conversation_id = 'root'").fetchone()
            col, more = copied(col, conn.execute("SELECT id, body FROM texts ORDER BY id").fetchall())
            conn.execute("UPDATE documents SET texts = ? WHERE conversation_id = 'root'", (col,))
            conn.executemany("INSERT INTO texts (id, body) VALUES (?,?)", more)
        conn.close()
    elif hasattr(inner, "_pieces"):
        body, col = inner._docs["root"]
        col, more = copied(col, sorted(inner._pieces.items()))
        inner._docs["root"] = (body, col)
        inner._pieces.update(more)
        owners = [("live:root", col)] + [(f"task:{tid}", row[6]) for tid, row in inner._tasks.items() if row[3]]
        inner._held = HeldTexts.load(owners, sorted(inner._pieces.items()))
    else:
        import psycopg

        with psycopg.connect(inner._link.dsn) as conn:
            (col,) = conn.execute("SELECT texts FROM durable.documents WHERE space = %s AND conversation_id = 'root'",
                                  (inner.space,)).fetchone()
            col, more = copied(col, conn.execute("SELECT id, body FROM durable.texts WHERE space = %s ORDER BY id",
                                                 (inner.space,)).fetchall())
            conn.execute("UPDATE durable.documents SET texts = %s WHERE space = %s AND conversation_id = 'root'",
                         (col, inner.space))
            conn.cursor().executemany("INSERT INTO durable.texts (space, id, body) VALUES (%s, %s, %s)",
                                      [(inner.space, key, body) for key, body in more])


async def test_commits_written_as_one_group_share_the_output_whatever_their_order(backend, store):
    """Commits queued behind the writer are written as one transaction (the slot's row may come
    first), or each in a savepoint of its own when one is refused: the rows read back as
    committed, and the output ends up kept once."""
    if backend.name in ("memory", "sqlite-reopen"):
        pytest.skip("no writer thread to hold: commits are never grouped")
    await store.commit(Batch(tasks=[tool(ANSWER[:20_000])], live={"root": running(ANSWER[:20_000])}))
    grown = ANSWER[:30_000]
    outcome = await commit_behind_held_writer(store, [Batch(live={"root": running(grown)}, barrier=False),
                                                      Batch(tasks=[tool(grown)], barrier=False)], in_order=True)
    assert outcome == [None, None]
    await check(store, grown, running(grown))
    grown = ANSWER[:40_000]
    outcome = await commit_behind_held_writer(store, [
        Batch(live={"root": running(grown)}),
        Batch(entries=[user(1), user(1)]),  # refused (a seq twice): the others each in a savepoint
        Batch(tasks=[tool(grown)])], in_order=True)
    assert [type(x).__name__ for x in outcome] == ["NoneType", "CommitRefused", "NoneType"]
    await check(store, grown, running(grown))
    assert pieces(backend, store) == kept(grown)
    store, opened = await reopen_store(backend, store)
    assert (opened.live_tasks, opened.conversations["root"].live) == ([tool(grown)], running(grown))
    await store.close()


async def test_a_tools_rows_written_at_random_read_back_as_committed_and_keep_no_stream_unmapped(backend, store):
    """Seeded random commits of a tool's two rows (both grown, one alone grown or started again,
    the task ended, the slot gone or back, lazy or barrier, reopens), across both lengths kept
    apart: every read gives what was committed last, and the streams the store keeps pieces of
    are exactly those its rows map to."""
    rng = random.Random(20_251)
    texts = ["", ANSWER, "again " + ANSWER, "once more " + ANSWER]
    output, shown, ended = "", "", False  # the task's output, the slot's ("": no slot), whether it ended
    for step in range(150):
        source = rng.choice(texts)

        def longer(text: str, source: str = source) -> str:  # `text` grown, or another text when not its source's
            return source[:rng.randrange(len(text) if source.startswith(text) else 0, 12_000)]

        what = rng.choice(["both", "both", "both", "apart", "task", "slot", "end", "gone", "run", "reopen"])
        batch = Batch(barrier=rng.random() < 0.3)
        if what == "both":
            output = shown = longer(output)
            ended = False
        if what == "apart":  # in one batch, each its own text (one may continue the other)
            output, ended = longer(output), False
            shown = longer(output if rng.random() < 0.5 else shown)
        if what in ("task", "end", "run"):
            output, ended = longer(output) if what != "end" else output, what == "end"
        if what == "slot":
            shown = longer(shown)
        if what == "gone":
            shown = ""
        if what == "reopen":
            store, _ = await reopen_store(backend, store)
        else:
            batch = Batch(tasks=[] if what in ("slot", "gone") else [tool(output, ended=ended)],
                          live={} if what in ("task", "end", "run") else {"root": running(shown) if shown else Live()},
                          barrier=batch.barrier)
            await store.commit(batch)
        if step:
            await check(store, output, running(shown) if shown else Live(), ended=ended)
            kept_apart, mapped = streams_kept(backend, store)
            assert kept_apart == mapped, (step, what)
    await store.commit(Batch(tasks=[tool(output, ended=True)], live={"root": Live()}))
    assert streams_kept(backend, store) == (set(), set())
    await store.close()


def streams_kept(backend, store) -> tuple[set[int], set[int]]:
    """The streams the store keeps pieces of (on SQLite, or whose text a lazy transaction that
    made them put beside the file, `partials`), and those its rows map to."""
    inner = getattr(store, "_inner", store)
    beside: set[int] = set()
    if isinstance(inner, SQLiteStorage):
        with SessionReader(inner.path) as reader:
            keys = reader._all("SELECT id FROM texts")
            columns = reader._all("SELECT texts FROM tasks UNION ALL SELECT texts FROM documents")
            beside = set(reader._appended())
    elif hasattr(inner, "_pieces"):
        keys = [(key,) for key in inner._pieces]
        columns = [(row[6],) for row in inner._tasks.values()] + [(col,) for _, col in inner._docs.values()]
    else:
        import psycopg

        with psycopg.connect(inner._link.dsn) as conn:
            keys = conn.execute("SELECT id FROM durable.texts WHERE space = %s", (inner.space,)).fetchall()
            columns = conn.execute("SELECT texts FROM durable.tasks WHERE space = %s UNION ALL "
                                   "SELECT texts FROM durable.documents WHERE space = %s",
                                   (inner.space, inner.space)).fetchall()
    mapped = {n for (col,) in columns for n in streams_of(col).values()}
    return {key >> SHIFT for (key,) in keys} | (beside & mapped), mapped
