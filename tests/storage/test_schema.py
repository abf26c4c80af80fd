"""The SQLite schema across versions: a version-3 file is migrated to the current version in one
transaction that keeps every row, and `find_tasks` reads through the indexes of the current
schema (a find by a live state reads the live tasks only, never a kind's or a parent's history).
"""

from __future__ import annotations

import os
import sqlite3

import pytest

from durable.errors import StorageError
from durable.records import Answered, Done, GenerationLive, Live, Running, Sleeping, Terminal, Waiting
from durable.storage import Batch, ConversationState, SQLiteStorage
from durable.storage.sqlite import inbox
from durable.storage.sqlite.reader import SessionReader
from durable.storage.sqlite.schema import MIGRATIONS, SCHEMA_VERSION

from .builders import assistant, busy, compaction, submission, task, user

pytestmark = pytest.mark.anyio

GEN = task(1, state=Running())
TOOL_DONE = task(2, kind="tool", parent_id=1, state=Terminal(Done("ok")))
TOOL_WAITING = task(3, kind="tool", parent_id=1, state=Waiting(client=True))
COMP = task(4, kind="compaction", conversation_id="child", state=Terminal(Done()))
CHILD = task(5, conversation_id="child", state=Sleeping(until=99.5))
ENTRIES = [user(1, "hello"), assistant(2, "hi"), compaction(3, 2), user(4, "again"),
           user(1, "child", conversation_id="child")]
QUEUED = submission("s1", seq=4)
SETTLED = submission("s0", conversation_id="child", status=Answered())
LIVE = {"root": Live(run=busy(1, "s1").run, generation=GenerationLive(attempt=1)), "child": Live()}
BATCH = Batch(tasks=[GEN, TOOL_DONE, TOOL_WAITING, COMP, CHILD], entries=ENTRIES, submissions=[QUEUED, SETTLED],
              live=LIVE)


@pytest.fixture
def path(tmp_path) -> str:
    return os.fspath(tmp_path / "session.db")


def schema_of(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    return sorted(conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"))


def schema_at(version: int) -> list[tuple[str, str, str]]:
    """The tables and indexes that the migrations up to `version` make in a new file."""
    conn = sqlite3.connect(":memory:")
    for v in range(1, version + 1):
        for statement in MIGRATIONS[v]:
            conn.execute(statement)
    if version >= SCHEMA_VERSION:  # an open makes the inbox, while the schema constant is below 8
        conn.execute(inbox.TABLE)
    return schema_of(conn)


async def a_version_3_file(path: str) -> None:
    """BATCH committed, then the file taken back to exactly what version 3 made."""
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(BATCH)
    await store.close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE conversations")  # version 9
        conn.execute("DROP TABLE attachments")  # version 8
        conn.execute("DROP TABLE inbox")  # version 8
        conn.execute("DROP TABLE texts")  # version 6
        conn.execute("ALTER TABLE tasks DROP COLUMN texts")
        conn.execute("ALTER TABLE documents DROP COLUMN texts")
        conn.execute("DELETE FROM meta WHERE key IN ('session', 'barriers')")  # version 5
        conn.execute("DROP INDEX tasks_kind")  # version 4
        conn.execute(next(s for s in MIGRATIONS[1] if "tasks_kind_state" in s))
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    assert schema_of(conn) == schema_at(3)
    conn.close()


def version_and_schema(path: str) -> tuple[int | None, list[tuple[str, str, str]]]:
    with SessionReader(path) as reader:
        version = reader.schema_version
    conn = sqlite3.connect(path)
    try:
        return version, schema_of(conn)
    finally:
        conn.close()


async def test_the_current_schema_has_no_index_on_a_task_state():
    assert SCHEMA_VERSION == 10
    indexes = {name: sql for kind, name, sql in schema_at(SCHEMA_VERSION) if kind == "index"}
    assert "tasks_kind_state" not in indexes and indexes["tasks_kind"] == "CREATE INDEX tasks_kind ON tasks (kind)"
    assert not [name for name, sql in indexes.items() if "state" in sql.split(" WHERE ")[0]]


async def test_a_version_8_file_is_taken_to_the_current_version_keeping_every_row(path):
    """Version 9 adds the context totals and changes how rows are kept (answers by reference,
    appends beside the file), version 10 too (long bodies packed): an older durable refuses such
    a file (`SchemaTooNew`: it would read a long answer as damaged); a version-8 file keeps every
    row and gains its totals."""
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(BATCH)
    await store.close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
        conn.execute("DROP TABLE conversations")
    conn.close()
    assert version_and_schema(path) == (8, schema_at(8))
    with SessionReader(path) as reader:
        assert reader.schema_version == 8
        rows = reader.rows()
    store = SQLiteStorage(path)
    await store.open()
    assert await store.get_submission("s0") == SETTLED
    await store.close()
    assert version_and_schema(path) == (SCHEMA_VERSION, schema_at(SCHEMA_VERSION))
    with SessionReader(path) as reader:
        assert reader.rows() == rows


async def test_a_version_3_file_is_migrated_keeping_every_row(path):
    await a_version_3_file(path)
    with SessionReader(path) as reader:  # the reader reads the old file as it is
        assert reader.schema_version == 3
        rows = reader.rows()
    assert [r[0] for r in rows.tasks] == [1, 2, 3, 4, 5] and len(rows.entries) == 5

    store = SQLiteStorage(path)
    opened = await store.open()
    assert opened.live_tasks == [GEN, TOOL_WAITING, CHILD] and opened.unsettled == [QUEUED]
    assert opened.conversations == {
        "root": ConversationState(last_seq=4, live=LIVE["root"], last_compaction=ENTRIES[2]),
        "child": ConversationState(last_seq=1, live=LIVE["child"], last_compaction=None),
    }
    assert await store.find_tasks(kind="tool") == [TOOL_DONE, TOOL_WAITING]
    assert await store.find_tasks(kind="tool", state="waiting") == [TOOL_WAITING]
    assert await store.find_tasks(state="terminal") == [TOOL_DONE, COMP]
    assert await store.get_entries("root") == ENTRIES[:4]
    assert await store.get_submission("s0") == SETTLED
    await store.close()

    assert version_and_schema(path) == (SCHEMA_VERSION, schema_at(SCHEMA_VERSION))
    with SessionReader(path) as reader:
        assert reader.rows() == rows


async def test_a_migration_that_fails_leaves_the_version_3_file_as_it_was(path, monkeypatch):
    await a_version_3_file(path)
    before = version_and_schema(path)
    with SessionReader(path) as reader:
        rows = reader.rows()
    # A last statement that fails (the index exists by then): the statements before it are undone.
    monkeypatch.setitem(MIGRATIONS, 4, [*MIGRATIONS[4], "CREATE INDEX tasks_kind ON tasks (kind)"])
    with pytest.raises(StorageError) as refused:
        await SQLiteStorage(path).open()
    assert path in str(refused.value)
    assert version_and_schema(path) == before
    with SessionReader(path) as reader:
        assert reader.rows() == rows

    monkeypatch.undo()
    store = SQLiteStorage(path)
    assert (await store.open()).live_tasks == [GEN, TOOL_WAITING, CHILD]
    await store.close()
    assert version_and_schema(path) == (SCHEMA_VERSION, schema_at(SCHEMA_VERSION))


@pytest.mark.parametrize(
    "filters, plan",
    [
        ({"state": "waiting"}, "SCAN tasks USING INDEX tasks_live"),
        ({"kind": "tool", "state": "running"}, "SCAN tasks USING INDEX tasks_live"),
        ({"kind": "tool", "parent_id": 1, "state": "pending"}, "SCAN tasks USING INDEX tasks_live"),
        ({"conversation_id": "child", "state": "sleeping"}, "SCAN tasks USING INDEX tasks_live"),
        ({"kind": "tool"}, "SEARCH tasks USING INDEX tasks_kind (kind=?)"),
        ({"kind": "tool", "limit": 1}, "SEARCH tasks USING INDEX tasks_kind (kind=?)"),
        ({"kind": "tool", "state": "terminal"}, "SEARCH tasks USING INDEX tasks_kind (kind=?)"),
        ({"parent_id": 1}, "SEARCH tasks USING INDEX tasks_parent (parent_id=?)"),
    ],
)
async def test_find_tasks_reads_through_an_index_and_needs_no_sort(path, filters, plan):
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(BATCH)
    statements: list[str] = []
    await store.call_in_writer(lambda c: c.set_trace_callback(statements.append))
    found = await store.find_tasks(**filters)
    await store.call_in_writer(lambda c: c.set_trace_callback(None))
    (sql,) = statements  # expanded: the values bound in place
    plans = await store.call_in_writer(lambda c: [r[3] for r in c.execute("EXPLAIN QUERY PLAN " + sql)])
    await store.close()
    assert plans == [plan]
    expected = [t for t in BATCH.tasks if all(
        getattr(t, k) == v for k, v in filters.items() if k in ("kind", "conversation_id", "parent_id"))]
    if "state" in filters:
        expected = [t for t in expected if type(t.state).__name__.lower() == filters["state"]]
    assert found == expected[:filters.get("limit")]


def wal_pages(path: str) -> list[str]:
    """The table or index of each page the WAL holds (its frames, in order)."""
    conn = sqlite3.connect(path)
    try:
        names = dict((pageno, name) for name, pageno in conn.execute("SELECT name, pageno FROM dbstat"))
    finally:
        conn.close()
    with open(path + "-wal", "rb") as f:
        data = f.read()
    frame = 24 + int.from_bytes(data[8:12], "big")
    return [names.get(int.from_bytes(data[i:i + 4], "big"), "?") for i in range(32, len(data) - 23, frame)]


async def test_a_live_task_written_again_leaves_the_index_of_live_tasks_alone_and_its_ending_leaves_it(path):
    """SQLite rewrites a partial index's entry for any update that sets its column, to the same
    value too: a live task's row written again set `live` and cost a page of the WAL a commit."""
    store = SQLiteStorage(path)
    await store.open()
    await store.call_in_writer(lambda c: c.execute("PRAGMA wal_autocheckpoint = 0"))
    await store.commit(Batch(tasks=[GEN, task(9, state=Running(), parent_id=1)]))

    async def written(batch: Batch) -> list[str]:
        await store.call_in_writer(lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)"))
        await store.commit(batch)
        return wal_pages(path)

    again = await written(Batch(tasks=[task(1, state=Running(), updated_at=5.0)], barrier=False))
    assert "tasks" in again and "tasks_live" not in again, again
    ended = await written(Batch(tasks=[task(1, state=Terminal(Done("ok")))], barrier=False))
    assert "tasks" in ended and "tasks_live" in ended, ended
    assert [t.id for t in await store.find_tasks(state="running")] == [9]
    await store.close()
    store = SQLiteStorage(path)
    opened = await store.open()
    assert [t.id for t in opened.live_tasks] == [9]
    assert [t.state for t in await store.find_tasks(kind="generation")] == [Terminal(Done("ok")), Running()]
    await store.close()
