"""The PostgreSQL store: a session space on a server, owned by lease, one writer thread, group commit.

`PostgresStorage(dsn, space)` implements the storage protocol as `SQLiteStorage` does, with a
space (a name; one database holds many) in place of a file. Install the driver with the
`postgres` extra (`pip install "durable-harness[postgres]"`: psycopg 3, used synchronously on the
writer thread: psycopg's async connection does not run under trio). Commit jobs that queue up are
written together by the policy of `durable.storage.group_commit` on this store's primitives
(`write.PostgresWrites`: one statement, one round trip, for a group that is not refused); a
group of lazy batches commits with `synchronous_commit = off` (lost only by a crash of the
server's machine).

Ownership (`lease`): `open()` takes the space's lease or raises `SessionLocked` naming owner, pid
and host; an expired lease is taken over by bumping the epoch. Every commit is fenced, so an
owner that lost its lease never commits (`LockLost`), and a takeover waits for a commit in
flight. The writer thread renews the lease between jobs every `renew_seconds` (a commit renews it
too); `lease_deadline()` is a local bound after which no external work may start. A read whose
connection broke is retried once; a commit's outcome is learnt again (`write`): no acknowledged
commit is lost, none applied twice.
"""

from __future__ import annotations

import math
import os
import queue
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import anyio

from ...errors import LockLost, ServerUnavailable, StorageClosed, StorageError
from ...records import Live, StoredEntry, Submission, Task
from ...tokens import NOT_SENT
from .. import rows, sealing
from ..group_commit import GroupCommitter
from ..protocol import Batch, InboxDecision, Opened, RawContext
from ..retention import ROWS_PER_COMMIT, Ended, PruneReport, groups
from ..rows import StoredRows, decode_rows
from ..writer import Job, thread_safe_caller
from . import driver, keys, lease, prune, schema
from .driver import Link
from .lease import Lease
from .write import PostgresWrites

T = TypeVar("T")
_INT64_MAX = (1 << 63) - 1


def _int64_range(from_seq: int, to_seq: int | None) -> tuple[int, int]:
    """A read's seq range clamped to what a bigint column can hold (no seq outside it is stored);
    `to_seq` None: to the end."""
    return max(from_seq, -_INT64_MAX - 1), min(_INT64_MAX if to_seq is None else to_seq, _INT64_MAX)


class PostgresStorage(GroupCommitter[Any]):
    """A session space on a PostgreSQL server. See the module docstring for the guarantees.

    `lease_seconds`: how long the lease holds without renewal (a crashed owner's space can be
    taken over that long after its last renewal). `renew_seconds` (default a third of the
    lease): how often an open store renews. `guard_seconds` (default a fifth of the lease): how
    much earlier than the lease `lease_deadline()` ends. `owner`: this holder's name in the lease
    row and in `SessionLocked` (default host/pid/random). `reconnect_seconds` (default the
    lease): how long a commit whose connection broke tries to reconnect. `encryption_key`: the
    space's bodies and attachments are sealed (`durable.storage.postgres.keys`; `WrongKey`).
    """

    _writes: PostgresWrites  # the primitives of the group-commit policy

    def __init__(self, dsn: str, space: str = "default", *, lease_seconds: float = 30.0,
                 renew_seconds: float | None = None, guard_seconds: float | None = None,
                 owner: str | None = None, connect_timeout: float = 10.0,
                 reconnect_seconds: float | None = None, encryption_key: bytes | str | None = None) -> None:
        if not lease_seconds > 0:
            raise ValueError(f"lease_seconds must be positive, not {lease_seconds!r}")
        self.server, password, self.location = driver.space_at(dsn, space)
        self.space, self._key = space, encryption_key  # the key: `durable.storage.postgres.keys`
        host, pid = socket.gethostname(), os.getpid()
        renew = renew_seconds if renew_seconds is not None else lease_seconds / 3
        guard = guard_seconds if guard_seconds is not None else lease_seconds / 5
        if not 0 < renew < lease_seconds or not 0 <= guard < lease_seconds:
            raise ValueError("renew_seconds must be in (0, lease_seconds) and guard_seconds in [0, lease_seconds)")
        self._lease = Lease(space, owner or f"{host}/{pid}/{secrets.token_hex(4)}", pid, host,
                            float(lease_seconds), float(guard))
        self.renew_seconds = float(renew)
        self.connect_timeout = connect_timeout
        self.reconnect_seconds = reconnect_seconds if reconnect_seconds is not None else float(lease_seconds)
        self._init_writer()
        self._link = Link(dsn, self.server, space, password, connect_timeout, self._lease.seconds)
        self._writes = PostgresWrites(self._link, self._lease, location=self.location,
                                      reconnect_seconds=self.reconnect_seconds)
        self._retry_at = -math.inf  # a renewal that failed is tried again then (monotonic)
        self.holding = False  # the writer holds the lease (taken by open, given up by close)
        self._lost_event: anyio.Event | None = None  # made by open(), on the opener's event loop
        self.renewals = 0
        self.inbox_poll_seconds = 0.1  # how often an owner looks for inputs from durable.remote

    # ------------------------------------------------------------------ lease

    @property
    def owner(self) -> str:
        return self._lease.owner

    @property
    def epoch(self) -> int:
        """This store's epoch of the lease (0 before the first open)."""
        return self._lease.epoch

    @property
    def lease_seconds(self) -> float:
        return self._lease.seconds

    @property
    def lease_lost(self) -> LockLost | None:
        """The `LockLost` this store learned (a renewal or a fence refused), else None."""
        return self._lease.lost

    async def wait_lease_lost(self) -> LockLost:
        """Wait until this store learns that it lost the lease (a renewal or a commit's fence was
        refused), and return that `LockLost`; at once if it already has. For the engine: stop
        everything then. (A lease that may lapse while the server cannot be reached is
        `lease_deadline()`'s business: nothing is learnt until the server answers again.)"""
        if self._lease.lost is None:
            if self._lost_event is None:
                raise StorageClosed(f"Storage {self.location} was never opened", location=self.location)
            await self._lost_event.wait()
        assert self._lease.lost is not None
        return self._lease.lost

    def lease_deadline(self) -> float:
        """A `time.monotonic()` time before which the lease surely holds: the send time of the
        last renewal or commit that extended it, plus the lease, less the guard. No external work
        (a model request, a tool call) should start after it. -inf when not open or lost."""
        if not self.holding or self._closed:
            return float("-inf")
        return self._lease.deadline()

    # ------------------------------------------------------------------ async API

    async def open(self) -> Opened:
        if self._thread is not None:
            raise StorageError(f"Session {self.location} is already open in this store", location=self.location)
        self._closed = False
        self._writes.unknown = None
        self._lost_event = anyio.Event()
        wake, lost_event = thread_safe_caller(), self._lost_event
        self._lease.on_lost = lambda _: wake(lost_event.set)
        self._start_writer()
        try:
            return await self._call(self._open_in_thread)
        except BaseException:
            await self._stop(release=False)
            raise

    async def commit(self, batch: Batch) -> None:
        await self._submit(Job(None, batch))

    async def get_task(self, task_id: int) -> Task | None:
        found = await self._body("tasks", "id", task_id, f"task:{task_id}")
        return None if found is None else rows.task(found[0], task_id, self.location, found[1])

    async def find_tasks(
        self,
        *,
        kind: str | None = None,
        state: str | None = None,
        conversation_id: str | None = None,
        parent_id: int | None = None,
        limit: int | None = None,
    ) -> list[Task]:
        sql, args = rows.find_tasks_query("durable.tasks", "%s", (("space", self.space),), kind=kind, state=state,
                                           conversation_id=conversation_id, parent_id=parent_id, limit=limit,
                                           live_test="live")
        if not driver.storable(kind, state, conversation_id, parent_id):
            return []

        def fetch(c: Any) -> list[tuple[int, str, dict[str, str] | None]]:
            held = self._writes.texts
            return [(tid, body, held.texts(f"task:{tid}") if texts else None)
                    for tid, body, texts in c.execute(sql, args).fetchall()]

        found = await self._call(fetch)
        return [rows.task(body, tid, self.location, texts) for tid, body, texts in found]

    async def get_entries(
        self, conversation_id: str, from_seq: int = 1, to_seq: int | None = None
    ) -> list[StoredEntry]:
        lo, hi = _int64_range(from_seq, to_seq)
        found = await self._select((conversation_id,), (
            "SELECT seq, body FROM durable.entries WHERE space = %s AND conversation_id = %s "
            "AND seq BETWEEN %s AND %s ORDER BY seq"), (self.space, conversation_id, lo, hi))
        return [rows.entry(conversation_id, seq, body, self.location) for seq, body in found]

    async def get_context(self, conversation_id: str, from_seq: int, to_seq: int) -> RawContext:
        lo, hi = _int64_range(from_seq, to_seq)
        found = await self._select((conversation_id,), (
            "SELECT seq, tokens, body FROM durable.entries WHERE space = %s AND conversation_id = %s "
            "AND seq BETWEEN %s AND %s AND kind != 'compaction' AND (tokens IS NULL OR tokens != %s) ORDER BY seq"),
            (self.space, conversation_id, lo, hi, NOT_SENT))
        return rows.raw_context([r[0] for r in found], [r[1] for r in found], [r[2] for r in found], self.location)

    async def get_submission(self, submission_id: str) -> Submission | None:
        found = await self._body("submissions", "id", submission_id)
        return None if found is None else rows.submission(found[0], submission_id, self.location)

    async def get_live(self, conversation_id: str) -> Live | None:
        found = await self._body("documents", "conversation_id", conversation_id, f"live:{conversation_id}")
        return None if found is None else rows.live(found[0], conversation_id, self.location, found[1])

    async def get_attachments(self, hashes: Sequence[str]) -> dict[str, bytes]:
        wanted = [h for h in dict.fromkeys(hashes) if driver.storable(h)]
        if not wanted:
            return {}
        return await self._call(lambda c: keys.read_attachments(c, self._writes, wanted))  # opened if sealed

    # ------------------------------------------------------------------ inbox (durable.remote)

    async def take_inbox(self, limit: int) -> list[Submission]:
        """Up to `limit` inputs other processes put in this space's inbox (`durable.remote`),
        oldest first, as queued submissions; rows already placed are deleted. The commit that
        writes a submission deletes the inbox row of its id (`durable.storage.postgres.write`)."""
        def take(c: Any) -> list[Any]:
            c.execute("DELETE FROM durable.inbox i USING durable.submissions s "
                      "WHERE i.space = %s AND s.space = i.space AND s.id = i.id", (self.space,))
            return list(c.execute("SELECT id, conversation_id, text, created_at FROM durable.inbox WHERE space = %s "
                                  "AND decision IS NULL ORDER BY ord LIMIT %s", (self.space, int(limit))).fetchall())
        inputs = await self._call(take)
        return [Submission(sid, cid, text, created_at=created) for sid, cid, text, created in inputs]

    async def take_decisions(self, limit: int) -> list[InboxDecision]:
        """Up to `limit` decisions on tool calls in this space's inbox, oldest first (`Inbox`)."""
        rows = await self._select((), schema.DECISIONS, (self.space, int(limit)))
        return [InboxDecision.of_row(i, body, at, self.location) for i, body, at in rows]

    async def wait_inbox(self) -> None:
        """Return once the inbox holds an input. Polls (one index probe on the writer thread every
        `inbox_poll_seconds`; an idle owner costs that much): the writer's connection cannot
        block on LISTEN, and a second connection per owner would cost more than the probe."""
        while True:
            found = await self._call(lambda c: c.execute(
                "SELECT EXISTS (SELECT 1 FROM durable.inbox WHERE space = %s)", (self.space,)).fetchone()[0])
            if found:
                return
            await anyio.sleep(self.inbox_poll_seconds)

    async def ended(self) -> list[Ended]:
        """Every ended conversation (idle), with when it ended (`durable.storage.retention`)."""
        return await self._call(lambda c: prune.ended(c, self.space, self.location))

    async def delete_conversations(self, ids: Sequence[str], *,
                                   rows_per_commit: int = ROWS_PER_COMMIT) -> PruneReport:
        """Delete the idle conversations `ids` in fenced commits of at most `rows_per_commit` rows
        (`durable.storage.postgres.prune`), each a job of its own; then sweep the attachments."""
        report, w = PruneReport(), self._writes
        for group in groups(ids, rows_per_commit):
            report = report.plus(await self._call(lambda _, g=group: prune.tombstone(w, g)))  # type: ignore[misc]  # a default binds the loop's group
            while (step := await self._call(lambda c: prune.delete_some(w, rows_per_commit, c))).commits:
                report = report.plus(step)
        while (step := await self._call(lambda c: prune.sweep_some(w, rows_per_commit, c))).commits:
            report = report.plus(step)  # then the attachments no row references (`storage.sweep`)
        return report

    async def close(self) -> None:
        """Release the lease (the next open gets in at once) and the connection. Idempotent."""
        if self._closed or self._thread is None:
            self._closed = True
            return
        await self._stop(release=True)

    async def check_integrity(self) -> list[str]:
        """Decode every row of the space on a connection of its own, in a thread of its own (the
        commits go on meanwhile), one snapshot; a row that does not decode, or whose columns
        disagree with its record, is one line. Cancelling cancels the query. Its cost grows with
        the space's history (a harness runs it after each open unless `check_integrity` is off);
        the server itself guards its pages (WAL, checksums if enabled)."""
        call = thread_safe_caller()
        done = anyio.Event()
        found: list[str] = []
        conns: list[Any] = []

        def work() -> None:
            try:
                found.extend(decode_rows(self._read_rows(conns), self.location).problems)
            except Exception as exc:  # noqa: BLE001 - reported as the check's finding
                found.append(f"{type(exc).__name__}: {' '.join(str(exc).split())}")
            finally:
                call(done.set)

        thread = threading.Thread(target=work, name=f"durable-check {self.location}", daemon=True)
        thread.start()
        try:
            await done.wait()
        finally:
            if not done.is_set():
                for conn in conns:
                    try:
                        getattr(conn, "cancel_safe", conn.cancel)()
                    except Exception:  # noqa: BLE001 - it had just finished
                        pass
            thread.join()
        return found

    def stored_rows(self) -> StoredRows:
        """Every row of the space as stored, on a connection of its own (one snapshot), in the
        order `durable.storage.rows.decode_rows` expects. Works open or closed (a reader never
        takes the lease); blocking: for tests and the invariant checker."""
        return self._read_rows([])

    def _read_rows(self, conns: list[Any]) -> StoredRows:
        conn = self._link.connect(lease=False)
        conns.append(conn)
        try:
            return schema.read_rows(conn, self.space, self.location)
        finally:
            driver.close_quietly(conn)

    async def call_in_writer(self, fn: Callable[[Any], T]) -> T:
        """Run `fn(connection)` on the writer thread (for tests and fault injection)."""
        return await self._call(fn)

    # ------------------------------------------------------------------ plumbing

    async def _select(self, keys: tuple[str | int | None, ...], sql: str, args: Sequence[object]) -> list[Any]:
        """The rows a read of this space returns; none, without asking the server, when one of
        `keys` could not be in the space (`driver.storable`: it was never stored)."""
        if not driver.storable(*keys):
            return []
        return await self._call(lambda c: c.execute(sql, args).fetchall())

    async def _body(self, table: str, column: str, key: str | int,
                    owner: str | None = None) -> tuple[str, dict[str, str] | None] | None:
        """The body of this space's row of `durable.<table>` whose `column` is `key`, else None;
        with `owner`, and its long texts kept apart (None: inline), from what the store holds."""
        if not driver.storable(key):
            return None
        texts = "texts" if owner is not None else "NULL"
        sql = f"SELECT body, {texts} FROM durable.{table} WHERE space = %s AND {column} = %s"

        def fetch(c: Any) -> tuple[str, dict[str, str] | None] | None:
            row = c.execute(sql, (self.space, key)).fetchone()
            if row is None:
                return None
            return row[0], (self._writes.texts.texts(owner) if owner is not None and row[1] else None)

        return await self._call(fetch)

    async def _stop(self, *, release: bool) -> None:
        await self._stop_writer(lambda: self._close_connection(release=release))

    # ------------------------------------------------------------------ writer thread (see `WriterThread`)

    def _writer_exit(self) -> None:
        self._close_connection(release=False)

    def _next_job(self) -> Job | None:
        """The next job; renews the lease whenever it is due while waiting for one."""
        while True:
            if not self.holding or self._lease.lost is not None:
                return self._queue.get()
            # Due a renewal after the last one (or commit) that extended the lease, or soon after
            # one that failed.
            wait = max(self._lease.sent_at + self.renew_seconds, self._retry_at) - time.monotonic()
            if wait > 0:
                try:
                    return self._queue.get(timeout=wait)
                except queue.Empty:
                    pass
            self._renew()

    def _renew(self) -> None:
        try:
            conn = self._link.ensure(time.monotonic())
            if lease.renew(conn, self._lease, self.location):
                self.renewals += 1
            return
        except Exception as exc:  # noqa: BLE001 - tried again soon, until the lease has surely run out
            if self._link.conn is not None and driver.is_connection_error(exc, self._link.conn):
                self._link.drop()
        self._lease.check_expiry(self.location)
        self._retry_at = time.monotonic() + min(0.5, self.renew_seconds / 4)

    def _run_call(self, job: Job) -> None:
        psycopg = driver.import_psycopg()
        fn = job.fn
        assert fn is not None, "a job without a batch is a call"
        try:
            if fn == self._open_in_thread:
                job.result = fn(None)
                return
            for attempt in (1, 2):  # a read is retried once on a new connection
                conn = self._link.ensure(time.monotonic() + (self.reconnect_seconds if attempt == 2 else 0))
                try:
                    job.result = fn(conn)
                    return
                except psycopg.Error as exc:
                    if not driver.is_connection_error(exc, conn):
                        driver.rollback(conn)
                        raise StorageError(f"A read from {self.location} failed: "
                                           f"{' '.join(str(exc).split())}", location=self.location) from exc
                    self._link.drop()
                    if attempt == 2:
                        raise ServerUnavailable(f"The connection to the PostgreSQL server {self.server} for "
                                                f"{self.location} was lost during a read ({exc})",
                                                location=self.location) from exc
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            job.error = exc
        finally:
            job.finish()

    def _open_in_thread(self, _: Any) -> Opened:
        conn = self._link.conn = self._link.connect()
        try:
            schema.migrate(conn, self.location)
            lease.acquire(conn, self._lease, self.location)
            self.holding = True
            self._retry_at = -math.inf
            try:
                sealer = self._writes.sealer = keys.unlock_space(conn, self.space, self.location, self._key)
                sealing.register(self.location, sealer)  # rows are opened where they are decoded
                prune.finish(self._writes, ROWS_PER_COMMIT, conn)  # a prune a crash cut off
                opened, self._writes.texts = schema.read_opened(conn, self.space, self.location)
                return opened
            except BaseException:
                lease.release(conn, self._lease)
                raise
        except BaseException as exc:
            self.holding = False
            self._link.drop()
            psycopg = driver.import_psycopg()
            if isinstance(exc, psycopg.Error):
                raise StorageError(f"Opening {self.location} failed: {' '.join(str(exc).split())}",
                                   location=self.location) from exc
            raise

    def _close_connection(self, *, release: bool) -> None:
        conn = self._link.conn
        if conn is not None and release and self.holding and self._lease.lost is None:
            try:
                driver.rollback(conn)
                lease.release(conn, self._lease)
            except Exception:  # noqa: BLE001 - the lease then simply runs out
                pass
        self.holding = False
        self._link.drop()
        sealing.register(self.location, None)

