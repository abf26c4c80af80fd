"""The PostgreSQL store beyond the conformance suite (issue 16): connections that break (before
and after COMMIT, a server crash and restart, a backend terminated), a commit whose outcome cannot
be learnt, group commit with a refused batch, lazy commits, a server that cannot be reached, a
newer schema, the driver missing, and the integrity check.

Real server (the `postgres_server` fixture). The points where a connection breaks inside a commit
are chosen with the store's fault hook (`_writes.fault`), which runs on the writer thread."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid

import anyio
import anyio.to_thread
import psycopg
import pytest
from attrs import define

from durable import codec
from durable.errors import CommitFailed, CommitOutcomeUnknown, SchemaTooNew, ServerUnavailable
from durable.records import AssistantEntry, Entry, Live, UserEntry
from durable.storage import Batch, PostgresStorage
from durable.storage.postgres.schema import MIGRATIONS
from durable.storage.postgres.schema import PG_SCHEMA_VERSION as SCHEMA_VERSION
from durable.storage.protocol import RawContext
from durable.testing.pgcluster import free_port

from .builders import submission, task, user

pytestmark = pytest.mark.anyio


def new_space() -> str:
    return f"store-{uuid.uuid4().hex[:12]}"


def entry_seqs(dsn: str, space: str) -> list[int]:
    return [seq for _, seq, _, _ in PostgresStorage(dsn, space).stored_rows().entries]


@pytest.fixture
async def store(postgres_dsn):
    s = PostgresStorage(postgres_dsn, new_space(), lease_seconds=10)
    await s.open()
    yield s
    await s.close()


# ----------------------------------------------------------------------------- broken connections


async def test_a_commit_whose_connection_broke_after_it_landed_is_acknowledged_once(store, postgres_dsn):
    await store.commit(Batch(entries=[user(1)]))
    calls: list[str] = []

    def break_after_commit(point: str, conn) -> None:
        calls.append(point)
        if point == "after_commit" and calls.count(point) == 1:
            conn.close()  # the COMMIT landed; the answer never arrives
            raise psycopg.OperationalError("the connection to the server was lost")

    store._writes.fault = break_after_commit
    await store.commit(Batch(entries=[user(2)], live={"root": Live(compactions=2)}))
    assert calls == ["before_commit", "after_commit"]  # not written again
    store._writes.fault = None
    assert entry_seqs(postgres_dsn, store.space) == [1, 2]
    await store.commit(Batch(entries=[user(3)]))  # on the new connection
    assert await store.get_entries("root") == [user(1), user(2), user(3)]
    assert store.commits == 3


async def test_a_commit_whose_connection_broke_before_it_landed_is_written_again_once(store, postgres_dsn):
    await store.commit(Batch(entries=[user(1)]))
    first_pid = await store.call_in_writer(lambda c: c.info.backend_pid)
    points: list[str] = []

    def kill_backend(point: str, conn) -> None:
        points.append(point)
        if len(points) == 1:  # the server ends the session before the transaction reaches it
            with psycopg.connect(postgres_dsn, autocommit=True) as other:
                other.execute("SELECT pg_terminate_backend(%s, 5000)", (conn.info.backend_pid,))

    store._writes.fault = kill_backend
    await store.commit(Batch(entries=[user(2)]))
    store._writes.fault = None
    assert points == ["before_commit", "before_commit", "after_commit"]
    assert entry_seqs(postgres_dsn, store.space) == [1, 2]
    assert await store.call_in_writer(lambda c: c.info.backend_pid) != first_pid


async def test_a_read_after_the_backend_was_terminated_reconnects(store, postgres_dsn):
    await store.commit(Batch(entries=[user(1)]))
    pid = await store.call_in_writer(lambda c: c.info.backend_pid)
    with psycopg.connect(postgres_dsn, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
    assert await store.get_entries("root") == [user(1)]
    await store.commit(Batch(entries=[user(2)]))
    assert entry_seqs(postgres_dsn, store.space) == [1, 2]


async def test_commits_across_a_server_crash_and_restart_lose_nothing_acknowledged(postgres_server):
    store = PostgresStorage(postgres_server.dsn, new_space(), lease_seconds=20)
    await store.open()
    acknowledged: list[int] = []
    stop = anyio.Event()

    async def committer() -> None:
        seq = 0
        while not stop.is_set():
            seq += 1
            await store.commit(Batch(entries=[user(seq)]))
            acknowledged.append(seq)

    async def acknowledged_reach(n: int) -> None:
        with anyio.fail_after(30):
            while len(acknowledged) < n:
                await anyio.sleep(0.01)

    async with anyio.create_task_group() as tg:
        tg.start_soon(committer)
        await acknowledged_reach(20)
        await anyio.to_thread.run_sync(postgres_server.restart)  # pg_ctl restart -m immediate
        await acknowledged_reach(len(acknowledged) + 20)
        stop.set()
    assert entry_seqs(postgres_server.dsn, store.space) == acknowledged == list(range(1, len(acknowledged) + 1))
    await store.close()


async def test_a_commit_whose_outcome_cannot_be_learnt_raises_and_the_store_commits_nothing_more(postgres_dsn):
    space = new_space()
    store = PostgresStorage(postgres_dsn, space, lease_seconds=10, reconnect_seconds=0.3)
    await store.open()

    def lose_the_server(point: str, conn) -> None:
        if point == "after_commit":
            store._link.dsn = f"host=127.0.0.1 port={free_port()} user=postgres dbname=durable"  # nothing there now
            conn.close()
            raise psycopg.OperationalError("the connection to the server was lost")

    store._writes.fault = lose_the_server
    with pytest.raises(CommitOutcomeUnknown) as unknown:
        await store.commit(Batch(entries=[user(1)]))
    assert str(unknown.value).startswith(
        f"The connection to the PostgreSQL server {store.server} broke during a commit to {store.location} and "
        f"could not be made again within 0.3 s, so whether the commit landed is unknown")
    store._writes.fault = None
    with pytest.raises(CommitOutcomeUnknown):
        await store.commit(Batch(entries=[user(2)]))
    await store.close()
    assert entry_seqs(postgres_dsn, space) == [1]  # it had landed: opening again reads it


# ----------------------------------------------------------------------------- group commit and lazy commits


async def test_concurrent_commits_share_transactions_and_a_refused_batch_fails_alone(store, postgres_dsn):
    await store.commit(Batch(entries=[user(1)]))
    outcomes: dict[int, str] = {}
    entered, gate = threading.Event(), threading.Event()

    async def commit(seq: int) -> None:
        try:
            await store.commit(Batch(entries=[user(seq)], tasks=[task(seq)]))
            outcomes[seq] = "ok"
        except CommitFailed as exc:
            outcomes[seq] = str(exc)

    def busy(_conn) -> None:
        entered.set()
        gate.wait()

    async with anyio.create_task_group() as tg:
        try:
            tg.start_soon(store.call_in_writer, busy)  # the writer is busy: the commits queue up
            await anyio.to_thread.run_sync(entered.wait)
            for seq in [2, 3, 1, 4, 5]:  # 1 is committed already
                tg.start_soon(commit, seq)
            with anyio.fail_after(10):
                while store._queue.qsize() < 5:  # all five queued behind the busy writer
                    await anyio.sleep(0.01)
        finally:
            gate.set()
    assert {seq: o == "ok" for seq, o in outcomes.items()} == {1: False, 2: True, 3: True, 4: True, 5: True}
    assert outcomes[1].startswith(f"A commit to {store.location} was refused and rolled back: UNIQUE constraint "
                                  f"entries_pkey violated")
    assert entry_seqs(postgres_dsn, store.space) == [1, 2, 3, 4, 5]
    assert [t.id for t in await store.find_tasks()] == [2, 3, 4, 5]  # nothing of the refused batch
    assert store.commits <= 3


@define
class LazyBatch(Batch):
    barrier: bool = False


async def test_lazy_commits_are_written_and_read_back_like_any_other(store, postgres_dsn):
    settings: list[str] = []

    def note(point: str, conn) -> None:
        if point == "after_commit":
            settings.append(conn.execute("SHOW synchronous_commit").fetchone()[0])  # back to the default

    store._writes.fault = note
    await store.commit(LazyBatch(entries=[user(1)]))
    await store.commit(Batch(entries=[user(2)]))
    assert settings == ["on", "on"]  # SET LOCAL: only for the lazy transaction
    assert entry_seqs(postgres_dsn, store.space) == [1, 2]


# ----------------------------------------------------------------------------- refusals


async def test_a_server_that_cannot_be_reached_is_named_without_the_password():
    port = free_port()
    store = PostgresStorage(f"host=127.0.0.1 port={port} user=someone password=sekrit dbname=agents", "team")
    assert store.location == f"space 'team' on postgresql://127.0.0.1:{port}/agents"
    with pytest.raises(ServerUnavailable) as refused:
        await store.open()
    message = str(refused.value)
    assert message.startswith(f"Cannot connect to the PostgreSQL server 127.0.0.1:{port}/agents for space 'team': ")
    assert "Connection refused" in message and "sekrit" not in message
    with pytest.raises(ServerUnavailable):  # the store can be opened again (and fails again)
        await store.open()


async def test_a_missing_database_is_refused_naming_it(postgres_server):
    store = PostgresStorage(postgres_server.dsn_for("nosuchdb"), "s")
    with pytest.raises(ServerUnavailable) as refused:
        await store.open()
    assert f"127.0.0.1:{postgres_server.port}/nosuchdb for space 's'" in str(refused.value)
    assert 'database "nosuchdb" does not exist' in str(refused.value)


async def test_a_database_of_a_newer_schema_is_refused_and_left_unchanged(postgres_server):
    dsn = postgres_server.createdb(f"newer_{uuid.uuid4().hex[:8]}")
    store = PostgresStorage(dsn, "s")
    await store.open()
    await store.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE durable.meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(SchemaTooNew) as refused:
        await PostgresStorage(dsn, "s").open()
    assert (refused.value.found, refused.value.location) == (99, store.location)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT value FROM durable.meta").fetchall() == [("99",)]


async def test_a_version_2_database_is_migrated_with_the_tokens_of_its_entries_counted(postgres_server):
    dsn = postgres_server.createdb(f"v2_{uuid.uuid4().hex[:8]}")
    with psycopg.connect(dsn) as conn:  # the schema as version 2 left it, with entries in it
        for v in (1, 2):
            for statement in MIGRATIONS[v]:
                conn.execute(statement)
        conn.execute("INSERT INTO durable.meta VALUES ('schema_version', '2')")
        rows = [("s", "root", 1, "user", codec.dumps(UserEntry("12345678"), Entry)),
                ("s", "root", 2, "assistant", codec.dumps(AssistantEntry("gone", "aborted"), Entry)),
                ("s", "root", 3, "user", "{not json")]
        conn.cursor().executemany("INSERT INTO durable.entries VALUES (%s, %s, %s, %s, %s)", rows)
    store = PostgresStorage(dsn, "s")
    await store.open()
    try:  # counted as new rows are: 2 tokens, NOT_SENT (-1, never sent again: not in a context), NULL
        raw = await store.get_context("root", 1, 3)
        assert (list(raw.seqs), *raw[1:]) == tuple(RawContext([1, 3], [rows[0][4], "{not json"], [2, None]))
    finally:
        await store.close()
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT seq, tokens FROM durable.entries ORDER BY seq").fetchall() == [
            (1, 2), (2, -1), (3, None)]
        assert conn.execute("SELECT value FROM durable.meta").fetchall() == [(str(SCHEMA_VERSION),)]


def test_without_psycopg_the_store_says_which_extra_to_install():
    code = ("import sys; sys.modules['psycopg'] = None\n"
            "from durable.storage import PostgresStorage\n"
            "try:\n    PostgresStorage('host=x', 's')\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.getcwd()}).stdout
    assert out == ('MissingExtra PostgresStorage needs the psycopg package, which is not installed: '
                   'pip install "durable-harness[postgres]"\n')


# ----------------------------------------------------------------------------- integrity


async def test_the_integrity_check_names_a_row_that_does_not_decode(store, postgres_dsn):
    await store.commit(Batch(tasks=[task(1)], entries=[user(1), user(2)]))
    assert await store.check_integrity() == []
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("UPDATE durable.entries SET body = '{\"kind\": 1}' WHERE space = %s AND seq = 2", (store.space,))
    problems = await store.check_integrity()
    assert len(problems) == 1 and "2" in problems[0] and store.location in problems[0]


# ----------------------------------------------------------------------------- the engine on it


async def _lookup(args, api, ctx):
    return "42"


async def test_a_harness_runs_on_a_space_and_the_next_one_reads_its_answer(postgres_dsn):
    import durable
    from durable import records as r
    from durable.models import FauxModel, faux
    from durable.testing import check_invariants

    space = new_space()
    lookup = durable.define_tool("lookup", "Look up", replay="safe", execute=_lookup)
    model = FauxModel([faux.reply("Let me look.", tool_calls=[faux.call("lookup", {})]), faux.reply("It is 42.")])
    async with durable.open_harness(PostgresStorage(postgres_dsn, space), model=model, tools=[lookup]) as h:
        sub = await h.root.submit("What is it?")
        assert await sub.wait() == r.Answered("It is 42.", 4)
    store = PostgresStorage(postgres_dsn, space)
    async with durable.open_harness(store, model=FauxModel()) as h:
        assert await h.root.submission(sub.id).answer() == "It is 42."
    assert check_invariants(store, clean_close=True) == []


@pytest.mark.parametrize("key", ["a\x00b", "a\udcffb"], ids=["NUL", "lone surrogate"])
async def test_a_key_postgresql_cannot_hold_is_refused_alone_and_read_as_absent(store, postgres_dsn, key):
    # Bodies escape both (JSON); a key column holds text as it is, and PostgreSQL text holds neither.
    with pytest.raises(CommitFailed) as refused:
        await store.commit(Batch(entries=[user(1, conversation_id=key)]))
    assert str(refused.value).startswith(f"A commit to {store.location} was refused and rolled back: ")

    entered, gate = threading.Event(), threading.Event()
    outcomes: dict[str, str] = {}

    async def commit(name: str, batch: Batch) -> None:
        try:
            await store.commit(batch)
            outcomes[name] = "ok"
        except CommitFailed:
            outcomes[name] = "refused"

    def busy(_conn) -> None:
        entered.set()
        gate.wait()

    async with anyio.create_task_group() as tg:  # in one group with good batches: refused alone
        try:
            tg.start_soon(store.call_in_writer, busy)
            await anyio.to_thread.run_sync(entered.wait)
            tg.start_soon(commit, "good", Batch(entries=[user(1)]))
            tg.start_soon(commit, "bad", Batch(submissions=[submission(key)]))
            tg.start_soon(commit, "also good", Batch(entries=[user(2)]))
            with anyio.fail_after(10):
                while store._queue.qsize() < 3:
                    await anyio.sleep(0.01)
        finally:
            gate.set()
    assert outcomes == {"good": "ok", "bad": "refused", "also good": "ok"}
    assert entry_seqs(postgres_dsn, store.space) == [1, 2]
    assert await store.get_entries(key) == []
    assert await store.get_live(key) is None
    assert await store.get_submission(key) is None
    assert await store.find_tasks(conversation_id=key) == []
