"""The PostgreSQL schema across versions: a version-4 database is migrated to the current version
in one transaction that keeps every row (a failed migration leaves it as it was), the current
schema indexes no task state, and `find_tasks` by a live state reads the partial index of live
tasks on a table with history in it (EXPLAIN after ANALYZE).

Real server (the `postgres_server` fixture), one new database per test (one per module for the
tests of `find_tasks`, which only read it)."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import psycopg
import pytest

from durable.errors import StorageError
from durable.records import Done, Running, Sleeping, Terminal, Waiting
from durable.storage import Batch, PostgresStorage
from durable.storage import rows as _rows
from durable.storage.postgres.schema import MIGRATIONS, PG_SCHEMA_VERSION, SQLITE_VERSION_SEEN, TASKS_FILLFACTOR
from durable.storage.sqlite.schema import SCHEMA_VERSION as SQLITE_SCHEMA_VERSION

from .builders import assistant, submission, task, user

pytestmark = pytest.mark.anyio

GEN = task(1, state=Running())
TOOL_DONE = task(2, kind="tool", parent_id=1, state=Terminal(Done("ok")))
TOOL_WAITING = task(3, kind="tool", parent_id=1, state=Waiting(client=True))
CHILD = task(4, conversation_id="child", state=Sleeping(until=99.5))
BATCH = Batch(tasks=[GEN, TOOL_DONE, TOOL_WAITING, CHILD],
              entries=[user(1, "hello"), assistant(2, "hi"), user(1, "child", conversation_id="child")],
              submissions=[submission("s1", seq=1)])

Schema = tuple[list[tuple[str, str]], list[tuple[str, Any]]]


def new_db(server: Any) -> str:
    return server.createdb(f"pgschema_{uuid.uuid4().hex[:10]}")


def schema_of(dsn: str) -> Schema:
    """The indexes of the durable schema (name, definition) and its tables' storage options."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        indexes = conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'durable' "
                               "ORDER BY indexname").fetchall()
        options = conn.execute("SELECT relname, reloptions FROM pg_class WHERE relkind = 'r' AND "
                               "relnamespace = 'durable'::regnamespace ORDER BY relname").fetchall()
    return indexes, options


def schema_at(server: Any, version: int) -> Schema:
    """What the migrations up to `version` make in a new database."""
    dsn = new_db(server)
    with psycopg.connect(dsn) as conn:
        for v in range(1, version + 1):
            for statement in MIGRATIONS[v]:
                conn.execute(statement)
    return schema_of(dsn)


def version_of(dsn: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute("SELECT value FROM durable.meta WHERE key = 'schema_version'").fetchone()[0]


def inbox_of(dsn: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute("SELECT * FROM durable.inbox ORDER BY space, ord").fetchall()


async def a_version_4_database(server: Any) -> str:
    """BATCH committed to space "s" and an inbox row, then the schema taken back to exactly what
    version 4 made."""
    dsn = new_db(server)
    store = PostgresStorage(dsn, "s")
    await store.open()
    await store.commit(BATCH)
    await store.close()
    with psycopg.connect(dsn) as conn:
        conn.execute("INSERT INTO durable.inbox (space, id, conversation_id, text, created_at) "
                     "VALUES ('s', 'r1', 'root', 'from afar', 1.5)")
        conn.execute("DROP TABLE durable.conversations")  # version 9
        conn.execute("DROP TABLE durable.attachments")  # version 8
        conn.execute("DROP TABLE durable.texts")  # version 7
        conn.execute("ALTER TABLE durable.tasks DROP COLUMN texts")
        conn.execute("ALTER TABLE durable.documents DROP COLUMN texts")
        conn.execute("DROP INDEX durable.tasks_kind")  # version 5
        conn.execute(next(s for s in MIGRATIONS[1] if "tasks_kind_state" in s))
        conn.execute("ALTER TABLE durable.tasks RESET (fillfactor)")
        conn.execute("ALTER TABLE durable.inbox DROP COLUMN decision")
        conn.execute("UPDATE durable.meta SET value = '4' WHERE key = 'schema_version'")
    assert schema_of(dsn) == schema_at(server, 4)
    return dsn


def test_a_new_sqlite_schema_version_is_not_missed_by_the_postgresql_migrations():
    # Both stores keep the same records: a version of the SQLite schema that changes records needs
    # a PostgreSQL migration too (an empty one if no table changes). Whoever bumps the SQLite
    # version decides, then updates SQLITE_VERSION_SEEN.
    assert SQLITE_SCHEMA_VERSION == SQLITE_VERSION_SEEN


async def test_the_current_schema_indexes_no_task_state(postgres_server):
    assert PG_SCHEMA_VERSION == 10  # 6: the inbox's `decision` column; 7: long texts apart; 8: attachments;
    # 9: context totals; 10: streams shared by two rows
    indexes, options = schema_at(postgres_server, PG_SCHEMA_VERSION)
    on_tasks = {name: sql for name, sql in indexes if " ON durable.tasks " in sql}
    assert on_tasks == {
        "tasks_kind": "CREATE INDEX tasks_kind ON durable.tasks USING btree (space, kind, id)",
        "tasks_live": "CREATE INDEX tasks_live ON durable.tasks USING btree (space, id) WHERE live",
        "tasks_parent": "CREATE INDEX tasks_parent ON durable.tasks USING btree (space, parent_id) "
                        "WHERE (parent_id IS NOT NULL)",
        "tasks_pkey": "CREATE UNIQUE INDEX tasks_pkey ON durable.tasks USING btree (space, id)",
    }
    assert dict(options)["tasks"] == [f"fillfactor={TASKS_FILLFACTOR}"]
    assert TASKS_FILLFACTOR == 80 and [table for table, opts in options if opts] == ["tasks"]


async def test_a_version_4_database_is_migrated_keeping_every_row(postgres_server):
    dsn = await a_version_4_database(postgres_server)
    rows, inbox = PostgresStorage(dsn, "s").stored_rows(), inbox_of(dsn)
    assert [r[0] for r in rows.tasks] == [1, 2, 3, 4] and len(rows.entries) == 3 and len(inbox) == 1

    store = PostgresStorage(dsn, "s")
    opened = await store.open()
    try:
        assert opened.live_tasks == [GEN, TOOL_WAITING, CHILD] and opened.next_task_id == 5
        assert await store.find_tasks(kind="tool") == [TOOL_DONE, TOOL_WAITING]
        assert await store.find_tasks(kind="tool", state="waiting") == [TOOL_WAITING]
        assert await store.find_tasks(state="terminal") == [TOOL_DONE]
    finally:
        await store.close()
    assert version_of(dsn) == str(PG_SCHEMA_VERSION)
    assert schema_of(dsn) == schema_at(postgres_server, PG_SCHEMA_VERSION)
    # Every inbox row kept, an input (no `decision`: version 6)
    assert PostgresStorage(dsn, "s").stored_rows() == rows and inbox_of(dsn) == [(*row, None) for row in inbox]


async def test_a_migration_that_fails_leaves_the_version_4_database_as_it_was(postgres_server, monkeypatch):
    dsn = await a_version_4_database(postgres_server)
    before = schema_of(dsn)
    rows = PostgresStorage(dsn, "s").stored_rows()
    # A last statement that fails (the index exists by then): the statements before it are undone.
    monkeypatch.setitem(MIGRATIONS, 5, [*MIGRATIONS[5], "CREATE INDEX tasks_kind ON durable.tasks (space, kind, id)"])
    store = PostgresStorage(dsn, "s")
    with pytest.raises(StorageError) as refused:
        await store.open()
    assert str(refused.value).startswith(f"Opening {store.location} failed: ")
    assert (version_of(dsn), schema_of(dsn)) == ("4", before)
    assert PostgresStorage(dsn, "s").stored_rows() == rows

    monkeypatch.undo()
    store = PostgresStorage(dsn, "s")
    assert (await store.open()).live_tasks == [GEN, TOOL_WAITING, CHILD]
    await store.close()
    assert (version_of(dsn), schema_of(dsn)) == (str(PG_SCHEMA_VERSION), schema_at(postgres_server, PG_SCHEMA_VERSION))


@pytest.fixture(scope="module")
def history_dsn(postgres_server):
    """A database whose space "s" has 4000 ended tool tasks of generation 1 (each committed live
    first, then ended) beside BATCH's live tasks, and another space as large; statistics gathered.
    Made once for the module (the tests only read it)."""

    async def fill(dsn: str) -> None:
        for space in ("other", "s"):
            store = PostgresStorage(dsn, space)
            await store.open()
            await store.commit(BATCH)
            ended = [task(i, kind="tool", parent_id=1, state=Terminal(Done())) for i in range(10, 4010)]
            await store.commit(Batch(tasks=[task(t.id, kind="tool", parent_id=1, state=Running()) for t in ended]))
            await store.commit(Batch(tasks=ended))
            await store.close()

    dsn = new_db(postgres_server)
    anyio.run(fill, dsn, backend="trio")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE durable.tasks")
    return dsn


@pytest.fixture
async def history(history_dsn):
    """Space "s" of `history_dsn`, open."""
    store = PostgresStorage(history_dsn, "s")
    await store.open()
    yield store
    await store.close()


@pytest.mark.parametrize(
    "filters, index",
    [
        ({"state": "waiting"}, "tasks_live"),
        ({"kind": "tool", "state": "running"}, "tasks_live"),
        ({"kind": "tool", "parent_id": 1, "state": "waiting"}, "tasks_live"),
        ({"conversation_id": "child", "state": "sleeping"}, "tasks_live"),
        ({"kind": "compaction"}, "tasks_kind"),
        ({"kind": "generation", "limit": 1}, "tasks_kind"),
        ({"kind": "compaction", "state": "terminal"}, "tasks_kind"),
    ],
)
async def test_find_tasks_by_a_live_state_reads_the_live_tasks_only(history, monkeypatch, filters, index):
    queries: list[tuple[str, list[Any]]] = []

    def recorded(*a: Any, **k: Any) -> tuple[str, list[Any]]:
        queries.append(find_tasks_query(*a, **k))
        return queries[-1]

    find_tasks_query = _rows.find_tasks_query
    monkeypatch.setattr(_rows, "find_tasks_query", recorded)
    found = await history.find_tasks(**filters)
    ((sql, args),) = queries
    plan = await history.call_in_writer(
        lambda c: "\n".join(r[0] for r in c.execute("EXPLAIN (COSTS OFF) " + sql, args)))
    assert f"Index Scan using {index} on tasks" in plan and "Sort" not in plan, plan
    expected = [t for t in BATCH.tasks if all(
        getattr(t, k) == v for k, v in filters.items() if k in ("kind", "conversation_id", "parent_id"))]
    if "state" in filters:
        expected = [t for t in expected if type(t.state).__name__.lower() == filters["state"]]
    assert found == expected[:filters.get("limit")]
