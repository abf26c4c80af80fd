"""The stored count and token total of each conversation's context rows (schema 9): kept by every
commit, fork and prune in the same transaction as the rows, filled by the migration for a file
that had none, and equal at every point to a recount of the rows themselves."""

from __future__ import annotations

import sqlite3
import uuid

import psycopg
import pytest

from durable.records import Answered, AssistantEntry, Attachment, Done, Live, StoredEntry, Terminal, UserEntry
from durable.storage import Batch, PostgresStorage, SQLiteStorage
from durable.storage.protocol import EntryCopy
from durable.storage.rows import ATTACHMENT_MARK, CONTEXT_ROWS
from durable.storage.sqlite.schema import SCHEMA_VERSION

from .builders import assistant, compaction, submission, task, user

pytestmark = pytest.mark.anyio

RECOUNT = ("SELECT conversation_id, count(*), CASE WHEN count(tokens) = count(*) THEN coalesce(sum(tokens), 0) END, "
           f"sum(instr(body, '{ATTACHMENT_MARK}') > 0) FROM entries WHERE {CONTEXT_ROWS} "
           "GROUP BY conversation_id ORDER BY conversation_id")


def aborted(seq: int, conversation_id: str = "root") -> StoredEntry:
    return StoredEntry(conversation_id, seq, AssistantEntry("half an answer", "aborted"))  # never sent again


PICTURE = Attachment("image", "ab" * 32, "image/png", 9)
HISTORY = Batch(entries=[user(1, "hello there"), assistant(2, "hi, how can I help"), aborted(3),
                         compaction(4, 2), StoredEntry("root", 5, UserEntry("look", None, (PICTURE,))),
                         user(1, "child input", "child")],
                attachments={PICTURE.sha256: ("image/png", b"123456789")},
                live={"root": Live(), "child": Live()})


def sql(path: str, query: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def stored(path: str) -> list[tuple]:
    return sql(path, "SELECT conversation_id, entries, tokens, attachments FROM conversations ORDER BY conversation_id")


async def test_every_commit_and_fork_keeps_the_totals_equal_to_a_recount_of_the_rows(tmp_path):
    path = str(tmp_path / "s.sqlite")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(HISTORY)
    # root: seqs 1, 2, 5 (the aborted answer and the summary are in no context); child: seq 1
    assert [(cid, n, a) for cid, n, _, a in stored(path)] == [("child", 1, 0), ("root", 3, 1)]
    assert stored(path) == sql(path, RECOUNT)
    await store.commit(Batch(entries=[assistant(6, "an answer"), assistant(2, "in the child", "child")]))
    await store.commit(Batch(copies=[EntryCopy("root", "fork", 5)]))  # a fork: 1, 2 and 5 copied as stored
    assert [(cid, n, a) for cid, n, _, a in stored(path)] == [("child", 2, 0), ("fork", 3, 1), ("root", 4, 1)]
    assert stored(path) == sql(path, RECOUNT)
    await store.close()


async def test_deleting_a_conversation_deletes_its_totals(tmp_path):
    path = str(tmp_path / "s.sqlite")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(HISTORY)
    await store.commit(Batch(tasks=[task(1, state=Terminal(Done()), conversation_id="child")],
                             submissions=[submission("s1", conversation_id="child", status=Answered("a", 1))]))
    report = await store.delete_conversations(["child"], rows_per_commit=2)
    assert report.conversations == ("child",)
    assert stored(path) == sql(path, RECOUNT) and [row[0] for row in stored(path)] == ["root"]
    await store.close()


async def test_a_version_8_file_gets_its_totals_from_the_migration(tmp_path):
    path = str(tmp_path / "s.sqlite")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(HISTORY)
    await store.close()
    kept = stored(path)
    conn = sqlite3.connect(path)
    with conn:  # the file as version 8 left it, one row never counted (an old row that did not decode)
        conn.execute("DROP TABLE conversations")
        conn.execute("UPDATE entries SET tokens = NULL WHERE conversation_id = 'child'")
        conn.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    conn.close()
    store = SQLiteStorage(path)
    await store.open()
    await store.close()
    assert sql(path, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    assert stored(path) == [("child", 1, None, 0), kept[1]]  # a total with a row never counted is unknown
    assert stored(path) == sql(path, RECOUNT)


async def test_the_postgresql_store_keeps_the_totals_and_its_migration_fills_them(postgres_server):
    dsn = postgres_server.createdb(f"totals_{uuid.uuid4().hex[:10]}")
    recount = RECOUNT.replace("FROM entries", "FROM durable.entries").replace(
        "sum(instr(body, ", "count(*) FILTER (WHERE strpos(body, ")
    totals = "SELECT conversation_id, entries, tokens, attachments FROM durable.conversations ORDER BY conversation_id"
    store = PostgresStorage(dsn, "s")
    await store.open()
    await store.commit(HISTORY)
    await store.commit(Batch(entries=[assistant(6, "an answer")], copies=[EntryCopy("root", "fork", 5)]))
    await store.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        kept = conn.execute(totals).fetchall()
        assert [(cid, n, a) for cid, n, _, a in kept] == [("child", 1, 0), ("fork", 3, 1), ("root", 4, 1)]
        assert kept == [tuple(row) for row in conn.execute(recount).fetchall()]
        conn.execute("DROP TABLE durable.conversations")  # as version 8 left it
        conn.execute("UPDATE durable.meta SET value = '8' WHERE key = 'schema_version'")
    store = PostgresStorage(dsn, "s")
    await store.open()
    await store.close()
    with psycopg.connect(dsn, autocommit=True) as conn:  # the attachments not looked for: not known
        assert conn.execute(totals).fetchall() == [(cid, n, t, None) for cid, n, t, _ in kept]



async def test_the_invariant_checker_finds_totals_that_disagree_with_the_rows(tmp_path):
    from durable.testing import check_invariants

    path = str(tmp_path / "s.sqlite")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(HISTORY)
    await store.close()
    assert check_invariants(path) == []
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE conversations SET tokens = tokens + 1 WHERE conversation_id = 'child'")
    conn.close()
    child = sql(path, RECOUNT)[0]
    assert check_invariants(path) == [
        f"The stored context totals of conversation 'child' in {path} (entries, tokens, attachments) are "
        f"{(1, child[2] + 1, 0)}, its rows count {tuple(child[1:])}"]
