"""Ownership of a PostgreSQL session space by lease (issue 16): one owner among concurrent opens
(in one process and across processes), expiry and takeover, clean release, the epoch fence against
a commit in flight and against an owner that was paused past its lease (its writer thread held,
or the whole process stopped with SIGSTOP), and the local lease deadline.

Real server (the `postgres_server` fixture), real child processes (pg_child.py). Waits are for
events: a child's line, a backend seen waiting on a lock in pg_stat_activity, an open that
succeeds once the lease has run out (polled, bounded)."""

from __future__ import annotations

import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread
import psycopg
import pytest

from durable.errors import LockLost, SessionLocked
from durable.records import Live
from durable.storage import Batch, PostgresStorage

from .builders import user

pytestmark = pytest.mark.anyio

CHILD = os.path.join(os.path.dirname(__file__), "pg_child.py")


def new_space() -> str:
    return f"lease-{uuid.uuid4().hex[:12]}"


class Child:
    """A pg_child.py process: `send` a command, `line()` its next answer."""

    def __init__(self, dsn: str, space: str, lease: float) -> None:
        self.proc = subprocess.Popen([sys.executable, CHILD, dsn, space, str(lease)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        _, self.owner, pid = self.readline().split()
        assert int(pid) == self.proc.pid

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def readline(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"child {self.proc.pid} ended (exit code {self.proc.poll()})"
        return line.rstrip("\n")

    async def ask(self, command: str) -> str:
        self.send(command)
        with anyio.fail_after(30):
            return await anyio.to_thread.run_sync(self.readline)

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def children():
    made: list[Child] = []
    yield made
    for child in made:
        child.end()


async def owner_with_one_entry(dsn: str, space: str, **options: float) -> PostgresStorage:
    """A store (made with `options`) that opened `space` and committed entry 1 to it."""
    store = PostgresStorage(dsn, space, **options)
    await store.open()
    await store.commit(Batch(entries=[user(1)]))
    return store


async def child_with_one_entry(dsn: str, space: str, lease: float, children: list[Child]) -> Child:
    """A pg_child.py process (ended with the test) that opened `space` and committed entry 1 to it."""
    child = Child(dsn, space, lease)
    children.append(child)
    assert (await child.ask("open")).startswith("opened")
    assert await child.ask("commit 1") == "committed 1"
    return child


async def open_when_free(store: PostgresStorage, within: float) -> float:
    """Open `store` as soon as the lease lets it (polled); returns the seconds it took."""
    start = time.monotonic()
    with anyio.fail_after(within):
        while True:
            try:
                await store.open()
                return time.monotonic() - start
            except SessionLocked:
                await anyio.sleep(0.05)


async def until_server(conn: psycopg.Connection, sql: str, args: tuple[object, ...] = (), every: float = 0.05) -> None:
    """Until the server answers the one-value query `sql` with true (polled every `every` s);
    the caller bounds the wait."""
    while conn.execute(sql, args).fetchone() != (True,):
        await anyio.sleep(every)


async def wait_until_waiting_on_a_lock(dsn: str, backend_pid: int) -> None:
    """Until the server shows `backend_pid` waiting for a lock (its statement blocked)."""
    with psycopg.connect(dsn, autocommit=True) as conn, anyio.fail_after(20):
        await until_server(conn, "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s",
                           (backend_pid,), every=0.02)


@asynccontextmanager
async def writer_held(store: PostgresStorage) -> AsyncIterator[None]:
    """The store's writer thread held (no renewal, no commit: as if the process were paused)
    until the block ends."""
    held, release = threading.Event(), threading.Event()

    def hold(_conn):
        held.set()
        release.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(store.call_in_writer, hold)
        await anyio.to_thread.run_sync(held.wait)
        try:
            yield
        finally:
            release.set()


# ----------------------------------------------------------------------------- one owner


async def test_of_two_stores_opening_at_once_exactly_one_owns_the_space_and_the_other_is_told_who(postgres_dsn):
    space = new_space()
    a, b = PostgresStorage(postgres_dsn, space), PostgresStorage(postgres_dsn, space)
    outcomes: dict[str, object] = {}

    async def try_open(name: str, store: PostgresStorage) -> None:
        try:
            await store.open()
            outcomes[name] = "owner"
        except SessionLocked as exc:
            outcomes[name] = exc

    async with anyio.create_task_group() as tg:
        tg.start_soon(try_open, "a", a)
        tg.start_soon(try_open, "b", b)
    assert sorted(map(str, outcomes.values())).count("owner") == 1
    owner, refused = (a, outcomes["b"]) if outcomes["a"] == "owner" else (b, outcomes["a"])
    assert isinstance(refused, SessionLocked)
    assert (refused.pid, refused.host, refused.owner) == (os.getpid(), socket.gethostname(), owner.owner)
    assert str(refused) == (f"Session {owner.location} is already open in process {os.getpid()} on host "
                            f"{socket.gethostname()} (owner {owner.owner})")
    await owner.close()


async def test_of_two_processes_opening_at_once_exactly_one_owns_the_space(postgres_dsn, children):
    space = new_space()
    children.extend([Child(postgres_dsn, space, 30), Child(postgres_dsn, space, 30)])
    for child in children:
        child.send("open")
    with anyio.fail_after(30):
        answers = [await anyio.to_thread.run_sync(child.readline) for child in children]
    assert sorted(a.split()[0] for a in answers) == ["locked", "opened"]
    winner = children[0] if answers[0].startswith("opened") else children[1]
    refused = answers[1] if winner is children[0] else answers[0]
    location = PostgresStorage(postgres_dsn, space).location
    assert refused == (f"locked Session {location} is already open in process {winner.proc.pid} on host "
                       f"{socket.gethostname()} (owner {winner.owner})")

    # This process is refused the same way, and the owner keeps committing.
    with pytest.raises(SessionLocked) as here:
        await PostgresStorage(postgres_dsn, space).open()
    assert here.value.pid == winner.proc.pid and here.value.owner == winner.owner
    assert await winner.ask("commit 1") == "committed 1"


async def test_an_open_store_keeps_its_lease_by_renewing_it_while_idle(postgres_dsn):
    space = new_space()
    store = PostgresStorage(postgres_dsn, space, lease_seconds=1.0)  # renewed every third of a second
    await store.open()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        (first_expiry,) = conn.execute("SELECT expires_at FROM durable.leases WHERE space = %s", (space,)).fetchone()
        with anyio.fail_after(10):  # two leases after the open, without a commit
            await until_server(conn, "SELECT clock_timestamp() >= %s + interval '1 second'", (first_expiry,))
        (expiry,) = conn.execute("SELECT expires_at FROM durable.leases WHERE space = %s", (space,)).fetchone()
    assert expiry > first_expiry and store.renewals >= 3
    with pytest.raises(SessionLocked):
        await PostgresStorage(postgres_dsn, space).open()
    assert store.lease_deadline() > time.monotonic()
    await store.commit(Batch(entries=[user(1)]))
    await store.close()


# ----------------------------------------------------------------------------- release and takeover


async def test_a_clean_close_lets_the_next_open_in_at_once_as_a_new_epoch(postgres_dsn):
    space = new_space()
    a = await owner_with_one_entry(postgres_dsn, space, lease_seconds=60)
    await a.close()
    assert a.lease_deadline() == -math.inf

    b = PostgresStorage(postgres_dsn, space, lease_seconds=60)
    await b.open()  # no wait for the 60 s lease: it was released
    assert b.epoch == a.epoch + 1
    assert await b.get_entries("root") == [user(1)]
    await b.close()


async def test_a_killed_owner_s_space_is_taken_over_once_its_lease_has_run_out(postgres_dsn, children):
    space = new_space()
    lease = 2.0
    child = await child_with_one_entry(postgres_dsn, space, lease, children)
    child.proc.send_signal(signal.SIGKILL)
    child.proc.wait()
    killed = time.monotonic()

    other = PostgresStorage(postgres_dsn, space, lease_seconds=lease)
    with pytest.raises(SessionLocked) as refused:  # the lease runs on: at least 2/3 of it is left
        await other.open()
    assert refused.value.pid == child.proc.pid
    await open_when_free(other, within=lease + 10)
    # Not before the lease could have run out (the child renewed at most `lease` before it died).
    assert time.monotonic() - killed >= lease * 2 / 3 - 0.1
    assert other.epoch == 2
    assert await other.get_entries("root") == [user(1, "from the child 1")]
    await other.commit(Batch(entries=[user(2)]))
    await other.close()


async def test_an_owner_whose_writer_was_held_past_its_lease_is_taken_over_and_its_next_commit_writes_nothing(
    postgres_dsn,
):
    space = new_space()
    old = await owner_with_one_entry(postgres_dsn, space, lease_seconds=1.0)
    assert 0 < old.lease_deadline() - time.monotonic() <= 0.8  # the lease less a fifth of it

    async with writer_held(old):  # no renewal, as if the process were paused
        new = PostgresStorage(postgres_dsn, space, lease_seconds=30)
        await open_when_free(new, within=10)
        assert old.lease_deadline() < time.monotonic()  # the old owner can tell it must stop

    with anyio.fail_after(10):  # its overdue renewal is refused: the loss is announced
        announced = await old.wait_lease_lost()
    with pytest.raises(LockLost) as lost:
        await old.commit(Batch(entries=[user(2, "from the old owner")]))
    assert lost.value is announced
    assert str(lost.value) == (
        f"This store lost its lease on {old.location}: it was taken over by {new.owner} (process {os.getpid()} "
        f"on host {socket.gethostname()}, epoch {new.epoch}). It commits nothing more; open the space again to go on")
    assert old.lease_lost is lost.value and old.lease_deadline() == -math.inf
    with pytest.raises(LockLost):  # and so on, without asking the server
        await old.commit(Batch(entries=[user(3)]))

    assert await new.get_entries("root") == [user(1)]
    await new.commit(Batch(entries=[user(2, "from the new owner")]))
    assert await new.get_entries("root") == [user(1), user(2, "from the new owner")]
    await old.close()  # a lost lease is not released: the new owner keeps it
    with pytest.raises(SessionLocked):
        await PostgresStorage(postgres_dsn, space).open()
    await new.close()


async def test_an_owner_paused_past_its_lease_with_nobody_taking_over_still_commits_nothing(postgres_dsn):
    space = new_space()
    old = PostgresStorage(postgres_dsn, space, lease_seconds=1.0)
    await old.open()
    async with writer_held(old):
        with psycopg.connect(postgres_dsn, autocommit=True) as conn, anyio.fail_after(10):
            await until_server(conn, "SELECT expires_at <= clock_timestamp() FROM durable.leases WHERE space = %s",
                               (space,))
    with pytest.raises(LockLost) as lost:
        await old.commit(Batch(entries=[user(1)]))
    assert f"lost its lease on {old.location}: it expired (not renewed within 1 s)" in str(lost.value)
    await old.close()
    again = PostgresStorage(postgres_dsn, space)
    assert (await again.open()).conversations == {}
    await again.close()


async def test_a_process_stopped_past_its_lease_commits_nothing_after_it_is_continued(postgres_dsn, children):
    space = new_space()
    lease = 1.0
    child = await child_with_one_entry(postgres_dsn, space, lease, children)
    child.proc.send_signal(signal.SIGSTOP)
    try:
        new = PostgresStorage(postgres_dsn, space, lease_seconds=30)
        await open_when_free(new, within=10)
    finally:
        child.proc.send_signal(signal.SIGCONT)
    answer = await child.ask("commit 2")
    assert answer.startswith(f"LockLost This store lost its lease on {new.location}: it was taken over by {new.owner}")
    assert await new.get_entries("root") == [user(1, "from the child 1")]
    await new.close()


# ----------------------------------------------------------------------------- the fence in flight


async def test_a_takeover_waits_for_a_commit_in_flight_which_lands_before_it(postgres_dsn):
    space = new_space()
    old = PostgresStorage(postgres_dsn, space, lease_seconds=1.0)
    await old.open()
    await old.commit(Batch(entries=[user(1)], live={"root": Live()}))
    old_pid = await old.call_in_writer(lambda c: c.info.backend_pid)
    new = PostgresStorage(postgres_dsn, space, lease_seconds=30)
    blocker = psycopg.connect(postgres_dsn)  # holds the live document's row: the old owner's commit waits on it
    try:
        blocker.execute("SELECT 1 FROM durable.documents WHERE space = %s FOR UPDATE", (space,))
        async with anyio.create_task_group() as tg:
            try:
                tg.start_soon(old.commit, Batch(entries=[user(2)], live={"root": Live(compactions=1)}))
                await wait_until_waiting_on_a_lock(postgres_dsn, old_pid)  # fenced, holding the lease row
                tg.start_soon(new.open)
                # The opener waits on the lease row; meanwhile the lease (extended by the fence,
                # before the commit began to wait) runs out, and still the opener waits for the
                # commit in flight.
                with psycopg.connect(postgres_dsn, autocommit=True) as conn, anyio.fail_after(20):
                    (fenced_before,) = conn.execute("SELECT clock_timestamp()").fetchone()
                    await until_server(conn, "SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event_type = "
                                       "'Lock' AND application_name = %s AND pid <> %s",
                                       (f"durable:{space}", old_pid), every=0.02)
                    await until_server(conn, "SELECT clock_timestamp() >= %s + interval '1.1 seconds'",
                                       (fenced_before,))
                    assert new.epoch == 0  # not yet open
            finally:
                blocker.rollback()
    finally:
        blocker.close()
    assert new.epoch == old.epoch + 1
    assert await new.get_entries("root") == [user(1), user(2)]  # the commit in flight landed, whole
    assert await new.get_live("root") == Live(compactions=1)
    with pytest.raises(LockLost):
        await old.commit(Batch(entries=[user(3)]))
    await old.close()
    await new.close()


async def test_a_commit_blocked_behind_a_takeover_is_refused_whole(postgres_dsn):
    space = new_space()
    old = await owner_with_one_entry(postgres_dsn, space, lease_seconds=30)
    old_pid = await old.call_in_writer(lambda c: c.info.backend_pid)
    taker = psycopg.connect(postgres_dsn)  # a takeover in progress: the epoch bumped, not yet committed
    taker.execute("UPDATE durable.leases SET epoch = epoch + 1, owner = 'taker', pid = 4242, host = 'elsewhere' "
                  "WHERE space = %s", (space,))
    try:
        outcome: list[BaseException] = []

        async def commit() -> None:
            try:
                await old.commit(Batch(entries=[user(2)]))
            except LockLost as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as tg:
            try:
                tg.start_soon(commit)
                await wait_until_waiting_on_a_lock(postgres_dsn, old_pid)
            finally:
                taker.commit()
    finally:
        taker.close()
    assert len(outcome) == 1
    assert "it was taken over by taker (process 4242 on host elsewhere" in str(outcome[0])
    rows = PostgresStorage(postgres_dsn, space).stored_rows()
    assert [seq for _, seq, _, _ in rows.entries] == [1]
    await old.close()


async def test_a_store_that_cannot_reach_the_server_for_a_whole_lease_knows_it_lost_it(postgres_dsn):
    from durable.testing.pgcluster import free_port

    space = new_space()
    store = await owner_with_one_entry(postgres_dsn, space, lease_seconds=1.0, reconnect_seconds=0.2)
    pid = await store.call_in_writer(lambda c: c.info.backend_pid)
    store._link.dsn = f"host=127.0.0.1 port={free_port()} user=postgres dbname=durable"  # the server is gone for it
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
    with anyio.fail_after(10):  # renewals fail; once a whole lease has passed, the loss is certain
        lost = await store.wait_lease_lost()
    assert str(lost) == (f"This store lost its lease on {store.location}: it expired (not renewed within 1 s). "
                         f"It commits nothing more; open the space again to go on")
    assert store.lease_deadline() == -math.inf
    with pytest.raises(LockLost) as refused:
        await store.commit(Batch(entries=[user(2)]))
    assert refused.value is lost
    await store.close()
    assert entry_seqs_of(postgres_dsn, space) == [1]


def entry_seqs_of(dsn: str, space: str) -> list[int]:
    return [seq for _, seq, _, _ in PostgresStorage(dsn, space).stored_rows().entries]


async def test_a_process_stopped_inside_its_commit_transaction_cannot_hold_the_space(postgres_dsn, children):
    # The child's commit is one statement (the fence, then its rows): stopped while that
    # transaction waits on the server, the client cannot keep it open. The transaction goes on
    # without it and lands whole (its fence was valid); the takeover waits for it; the stopped
    # owner, continued, learns that its commit landed and commits nothing more.
    space = new_space()
    child = await child_with_one_entry(postgres_dsn, space, 1.0, children)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        (child_backend,) = conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s",
                                        (f"durable:{space}",)).fetchone()
    blocker = psycopg.connect(postgres_dsn)  # an uncommitted row with the child's next key: its insert waits
    new = PostgresStorage(postgres_dsn, space, lease_seconds=30)
    try:
        blocker.execute("INSERT INTO durable.entries (space, conversation_id, seq, kind, body) "
                        "VALUES (%s, 'root', 2, 'user', '{}')", (space,))
        child.send("commit 2")
        await wait_until_waiting_on_a_lock(postgres_dsn, child_backend)  # fenced, inside its transaction
        child.proc.send_signal(signal.SIGSTOP)
        try:
            blocker.rollback()  # the child's transaction goes on, on the server, while the child is stopped
            await open_when_free(new, within=15)
        finally:
            child.proc.send_signal(signal.SIGCONT)
    finally:
        blocker.close()
    with anyio.fail_after(30):
        assert await anyio.to_thread.run_sync(child.readline) == "committed 2"
    answer = await child.ask("commit 3")
    assert answer.startswith(f"LockLost This store lost its lease on {new.location}: it was taken over by {new.owner}")
    assert await new.get_entries("root") == [user(1, "from the child 1"), user(2, "from the child 2")]
    await new.close()
