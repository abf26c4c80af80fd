"""The SQLite store: one file, one owner, one writer thread, group commit.

One dedicated thread owns the `sqlite3` connection (`durable.storage.writer`); every read and
write is a job on its queue, so the event loop never blocks on disk and no other thread touches
the connection. A commit job's batch is encoded there too, and commit jobs that queue up while a
transaction is written are written together in the next one (one fsync for many callers), by the
policy of `durable.storage.group_commit` on this store's primitives (`write.SQLiteWrites`).

Durability: WAL, with external synchrony by default (`synchronous="EXTERNAL"`): a barrier commit
(`Batch.barrier`) is written at SQLite's FULL level, so it and every commit before it are on disk
when it returns; any other commit at NORMAL (no fsync), so after a power cut the file holds a
prefix of the commit order that ends at or after the last barrier. "FULL" fsyncs every commit,
"NORMAL" none (a power cut may lose the newest acknowledged commits). A process kill loses
nothing in any mode, and no mode can corrupt the file.

Opening never modifies a file it refuses (`opening`); the store owns the file itself, not its
name (`lock`: another path to it is `SessionLocked`, a file moved away is `LockLost`), and never
writes through a link it did not create (`files`). Cancellation: a commit, once queued, completes;
a cancelled caller still waits (shielded) for its result.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal, TypeVar

import anyio

from ...errors import StorageClosed, StorageError
from ...records import Live, StoredEntry, Submission, Task
from .. import rows, sealing
from ..group_commit import GroupCommitter
from ..protocol import Batch, InboxDecision, Opened, RawContext
from ..retention import ROWS_PER_COMMIT, Ended, PruneReport, groups
from ..writer import Job, thread_safe_caller
from . import files, inbox, keys, opening, prune
from .context import read_context
from .failures import read_error, translate
from .integrity import MAX_PROBLEMS, background_priority, integrity_slices
from .lock import FileLock
from .reader import connect_read_only
from .streams import ContextStreams
from .write import SQLiteWrites, entry_body

T = TypeVar("T")
Synchronous = Literal["EXTERNAL", "FULL", "NORMAL"]
"""When commits reach the disk: "EXTERNAL" (the default) fsyncs barrier commits only (each one
with every commit before it), "FULL" every commit, "NORMAL" only at checkpoints."""
SYNCHRONOUS_LEVELS: tuple[Synchronous, ...] = ("EXTERNAL", "FULL", "NORMAL")


class SQLiteStorage(ContextStreams, GroupCommitter[sqlite3.Connection]):
    """A session file on disk. See the module docstring for the guarantees."""

    _closed_what = "Session file"
    _writes: SQLiteWrites  # the connection, once open, and the primitives of the group-commit policy

    def __init__(self, path: str | os.PathLike[str], *, synchronous: Synchronous = "EXTERNAL",
                 encryption_key: bytes | str | None = None, inbox_poll_seconds: float | None = 0.25) -> None:
        if synchronous not in SYNCHRONOUS_LEVELS:
            raise ValueError(f"synchronous must be 'EXTERNAL', 'FULL' or 'NORMAL', not {synchronous!r}")
        self._given = os.fspath(path)
        self.path = self._given  # on open: the file a symbolic link at the path points to
        self.location = self.path
        self.synchronous = synchronous
        self._key = encryption_key  # see `durable.storage.sealing`
        self._init_writer()
        self._init_streams()
        self._writes = SQLiteWrites(self.path, synchronous)
        # How often an owner looks for decisions from `durable console` (None: never; a test on a
        # mock clock, whose time a perpetual timer would move on while the writer thread works).
        self.inbox_poll_seconds = inbox_poll_seconds
        self._inbox_look: tuple[tuple[int, ...] | None, bool] | None = None  # the open's (`_look_at_inbox`)

    @property
    def barriers(self) -> int:
        """Of `commits`, those written at FULL (fsynced)."""
        return self._writes.barriers

    # ------------------------------------------------------------------ async API

    async def open(self) -> Opened:
        if self._thread is not None:
            raise StorageError(f"Session file {self.path} is already open in this store", location=self.path)
        self._start_writer()  # a store can be opened again after close (a reopen after a crash)
        try:
            return await self._call(self._open_in_thread)
        except BaseException:
            await self._stop_writer(self._fold_and_close)
            raise

    async def commit(self, batch: Batch) -> None:
        # The batch is encoded on the writer thread, next to its write: the event loop stays
        # free, and the two threads do not hand the GIL back and forth on every row.
        await self._submit(Job(None, batch))

    async def get_task(self, task_id: int) -> Task | None:
        row = await self._read("tasks", lambda c: self._joined(c.execute(
            "SELECT body, texts FROM tasks WHERE id = ?", (task_id,)).fetchone(), f"task:{task_id}"))
        return None if row is None else rows.task(row[0], task_id, self.path, row[1])

    async def find_tasks(
        self,
        *,
        kind: str | None = None,
        state: str | None = None,
        conversation_id: str | None = None,
        parent_id: int | None = None,
        limit: int | None = None,
    ) -> list[Task]:
        sql, args = rows.find_tasks_query("tasks", "?", kind=kind, state=state, conversation_id=conversation_id,
                                           parent_id=parent_id, limit=limit, live_test="live = 1",
                                           live_index="tasks_live")
        def fetch(conn: sqlite3.Connection) -> list[tuple[int, str, dict[str, str] | None]]:
            held = self._writes.texts
            return [(tid, body, held.texts(f"task:{tid}") if texts else None)
                    for tid, body, texts in conn.execute(sql, args)]

        found = await self._read("tasks", fetch)
        return [rows.task(body, tid, self.path, texts) for tid, body, texts in found]

    async def get_entries(
        self, conversation_id: str, from_seq: int = 1, to_seq: int | None = None
    ) -> list[StoredEntry]:
        hi = to_seq if to_seq is not None else (1 << 63) - 1
        found = await self._read("entries", lambda c: c.execute(
            "SELECT seq, body FROM entries WHERE conversation_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (conversation_id, from_seq, hi)).fetchall())
        return [rows.entry(conversation_id, seq, body, self.path) for seq, body in found]

    async def get_context(self, conversation_id: str, from_seq: int, to_seq: int) -> RawContext:
        """A plain file's long context is streamed (`context.read_context`): returned at once with
        its count and total, its rows read a chunk a job, behind commits, as the request is built."""
        schedule = self._stream_part if self._writes.sealer is None else None
        return await self._read("entries", lambda c: read_context(c, conversation_id, from_seq, to_seq, self.path,
                                                                  schedule))

    async def get_submission(self, submission_id: str) -> Submission | None:
        def read(c: sqlite3.Connection) -> str | None:
            row = c.execute("SELECT body, conversation_id FROM submissions WHERE id = ?", (submission_id,)).fetchone()
            return None if row is None else rows.answer_joined(sealing.plain(row[0], self.path), row[1],
                                                               entry_body(c, self.path), self.path)

        body = await self._read("submissions", read)
        return None if body is None else rows.submission(body, submission_id, self.path)

    async def get_live(self, conversation_id: str) -> Live | None:
        row = await self._read("documents", lambda c: self._joined(c.execute(
            "SELECT body, texts FROM documents WHERE conversation_id = ?", (conversation_id,)).fetchone(),
            f"live:{conversation_id}"))
        return None if row is None else rows.live(row[0], conversation_id, self.path, row[1])

    async def get_attachments(self, hashes: Sequence[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}

        sealer = self._writes.sealer  # an encrypted file: under keyed ids, sealed (`storage.sealing`)
        keys = sealer.attachment_ids(wanted) if sealer is not None else {sha: sha for sha in wanted}
        ask = list(keys)

        def fetch(conn: sqlite3.Connection) -> dict[str, bytes]:
            found: dict[str, bytes] = {}
            for i in range(0, len(ask), 500):  # SQLite's bound on parameters
                chunk = ask[i:i + 500]
                for key, size, data in conn.execute(f"SELECT sha256, size, data FROM attachments WHERE sha256 IN "
                                                    f"({','.join('?' * len(chunk))})", chunk):
                    found[keys[key]] = data if sealer is None else sealer.open_bytes(data, size, self.path)
            return found

        return await self._read("attachments", fetch)

    async def ended(self) -> list[Ended]:
        """Every ended conversation (idle), with when it ended (`durable.storage.retention`)."""
        return await self._read("tasks", lambda c: prune.ended(c, self.path))

    async def delete_conversations(self, ids: Sequence[str], *,
                                   rows_per_commit: int = ROWS_PER_COMMIT) -> PruneReport:
        """Delete the rows of the idle conversations `ids` (others are left alone) in commits of at
        most `rows_per_commit` rows (tombstoned first: `durable.storage.retention`), then the
        attachments no row references (`durable.storage.sweep`, a crash's leftovers too), then
        give the space back (`prune.reclaim`); each commit a job: the owner's go on between."""
        report = PruneReport()
        w = self._writes
        for group in groups(ids, rows_per_commit):
            report = report.plus(await self._call(lambda _, g=group: prune.tombstone(w, g)))  # type: ignore[misc]  # a default binds the loop's group
            while (step := await self._call(lambda _: prune.delete_some(w, rows_per_commit))).commits:
                report = report.plus(step)
        while (step := await self._call(lambda _: prune.sweep_some(w, rows_per_commit))).commits:
            report = report.plus(step)  # the attachments no row references any more (`storage.sweep`)
        return report.plus(await self._call(lambda _: prune.reclaim(w)))

    async def vacuum(self) -> PruneReport:
        """Rewrite the whole file (`VACUUM`) to give back every free page, and switch it to
        incremental vacuum (`prune.vacuum`); slow on a large file: only ever run when asked."""
        return await self._call(lambda _: prune.vacuum(self._writes))

    async def rekey(self, new_key: bytes | str, *, rows_per_commit: int = ROWS_PER_COMMIT) -> int:
        """Seal every body with `new_key` (`durable.storage.sqlite.keys`): the new key is recorded
        beside the old one, then rows are sealed again in commits of at most `rows_per_commit`;
        crash-safe, and either key opens the file until it is done. Returns the rows sealed again."""
        w = self._writes
        sealer = await self._call(lambda _: keys.begin_rekey(w, new_key))
        sealing.register(self.path, sealer)
        w.sealer = sealer
        after: dict[str, tuple[object, ...]] = {}
        total = 0
        while n := await self._call(lambda _: keys.rekey_some(w, rows_per_commit, after)):
            total += n
        await self._call(lambda _: keys.end_rekey(w))
        self._key = new_key
        return total

    async def close(self, *, fold: bool = True) -> None:
        """Close the file. `fold=False` leaves what lazy commits put beside it there, as a killed
        process does (the crash explorer's crash: `durable.testing.crash`)."""
        if self._closed or self._thread is None:
            self._closed = True
            return
        await self._stop_writer(self._fold_and_close if fold else self._close_connection)

    async def check_integrity(self) -> list[str]:
        """SQLite's `integrity_check` in slices (`integrity_slices`: each table of the file with
        its indexes, one read transaction each, so the WAL can be checkpointed between them), on
        a read-only connection of its own, in a thread of its own, so commits go on meanwhile (a
        check of a large file takes seconds). Unlike `quick_check` it finds an index that lacks
        a row or holds a wrong one. The thread is joined before this returns; cancelling
        interrupts the check first. Problems are returned, one line each, naming nothing: the
        caller names the file."""
        call = thread_safe_caller()
        done = anyio.Event()
        found: list[str] = []
        conn = connect_read_only(self.path)
        cancelled = threading.Event()

        def work() -> None:
            try:
                background_priority()
                for slice_sql in integrity_slices(conn):
                    if cancelled.is_set() or len(found) >= MAX_PROBLEMS:
                        break
                    found.extend(line for row in conn.execute(slice_sql).fetchall() if (line := str(row[0])) != "ok")
            except sqlite3.Error as exc:
                found.append(f"{type(exc).__name__}: {exc}")
            finally:
                conn.close()
                call(done.set)

        thread = threading.Thread(target=work, name=f"durable-check {self.path}", daemon=True)
        thread.start()
        try:
            await done.wait()
        finally:
            if not done.is_set():
                cancelled.set()
                try:
                    conn.interrupt()  # cancelled: the check stops at its next step
                except sqlite3.ProgrammingError:
                    pass  # it had just finished and closed its connection
            thread.join()
        problems = found[:MAX_PROBLEMS]
        if problems:
            # A file replaced under the owner (another process's session now at the path) is not
            # damage of this session: LockLost, which the harness learns at its next commit too.
            self._writes.lock.check()
        return problems

    def _joined(self, row: tuple[str, str | None] | None, owner: str) -> tuple[str, dict[str, str] | None] | None:
        """A row's (body, its long texts kept apart, from what the store holds; None: inline),
        on the writer thread."""
        if row is None:
            return None
        return row[0], (self._writes.texts.texts(owner) if row[1] else None)

    async def _read(self, table: str, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn(connection)` on the writer thread, a read of `table`: an SQLite error it raises is
        the store's error for a read (`failures.read_error`: damage is `CorruptSession`, never `CommitFailed`)."""
        path = self.path

        def read(conn: sqlite3.Connection) -> T:
            try:
                return fn(conn)
            except sqlite3.Error as exc:
                raise read_error(exc, table, path) from exc

        return await self._call(read)

    # ------------------------------------------------------------------ inbox (durable console)

    async def take_inbox(self, limit: int) -> list[Submission]:
        """A session file's inbox holds decisions only (`durable.storage.sqlite.inbox`)."""
        return []

    async def take_decisions(self, limit: int) -> list[InboxDecision]:
        """Up to `limit` decisions on tool calls in the file's inbox, oldest first (`Inbox`)."""
        path = self.path
        return await self._read("inbox", lambda conn: inbox.take_decisions(conn, limit, path))

    async def wait_inbox(self) -> None:
        """Return once the inbox holds a decision. Polls: another process writes the file, and
        SQLite tells nobody. Every `inbox_poll_seconds` the file and its WAL are looked at
        (`os.stat`, on the event loop: microseconds); only when either changed since the last
        look that surely saw it is the inbox looked at (`inbox.first_look`: a probe of the WAL
        write lock and a read, one job on the writer thread), so an idle owner, or one whose
        commits are refused (a full disk), adds no job to its writer."""
        if self.inbox_poll_seconds is None:
            await anyio.sleep_forever()
        seen: tuple[int, ...] | None = None
        look, self._inbox_look = self._inbox_look, None
        if look is not None:  # the open's look (`_look_at_inbox`): no probe during the first turn
            seen, found = look
            if found:
                return
            await anyio.sleep(self.inbox_poll_seconds or 0.25)
        while True:
            stamp = inbox.stamp(path := self.path)
            if stamp != seen:
                seen, found = await self._read("inbox", partial(inbox.first_look, path=path, stamped=stamp))
                if found:
                    return
            await anyio.sleep(self.inbox_poll_seconds or 0.25)

    def _look_at_inbox(self, conn: sqlite3.Connection) -> None:
        """At the open, on the writer thread: `wait_inbox`'s first look (`inbox.first_look`), so the
        watcher started with the first turn queues no job beside its commits (failed: it looks itself)."""
        try:
            self._inbox_look = inbox.first_look(conn, self.path)
        except sqlite3.Error:
            self._inbox_look = None

    async def call_in_writer(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(connection)` on the writer thread (for tests and fault injection)."""
        return await self._call(fn)

    # ------------------------------------------------------------------ writer thread (see `WriterThread`)

    def _fold_and_close(self) -> None:
        self._writes.fold_pending()  # what lazy transactions left beside the file, into it first
        self._close_connection()

    def _writer_exit(self) -> None:
        self._close_connection()
        self._end_streams()

    def _write_group(self, group: list[Job]) -> None:
        super()._write_group(group)  # every caller of the group is told before the WAL is bounded
        self._writes.bound_wal()

    def _run_call(self, job: Job) -> None:
        try:
            fn, conn = job.fn, self._writes.conn
            assert fn is not None, "a job without a batch is a call"
            if conn is not None:
                job.result = fn(conn)
            elif fn == self._open_in_thread:  # the one call made before there is a connection
                job.result = self._open_in_thread(None)
            else:
                raise StorageClosed(f"Session file {self.path} is not open", location=self.path)
        except sqlite3.Error as exc:
            job.error = translate(exc, "A read from", self.path)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            job.error = exc
        finally:
            job.finish()

    # ------------------------------------------------------------------ opening

    def _open_in_thread(self, _: Any) -> Opened:
        # A symbolic link at the path is resolved (or refused); see durable.storage.sqlite.files.
        path = self.path = self.location = files.resolve(self._given)
        lock = FileLock(path)
        st = opening.acquire(path, lock)
        ro = None
        try:
            ro = opening.look(path, st)
            sealer = keys.unlock_file(path, ro, self._key)  # a wrong or missing key: WrongKey, nothing written
            sealing.register(path, sealer)
            conn = opening.connect(path, lock, st, self.synchronous, ro)
            self._writes.opened(path, lock, conn)
            if sealer is None and self._key is not None:  # a new (or plain) file: encrypted from now on
                sealer = keys.start(self._writes, self._key)
                sealing.register(path, sealer)
            self._writes.sealer = sealer
            self._writes.marked()
            prune.finish(self._writes, ROWS_PER_COMMIT)  # a prune cut off by a crash: a group at most
            opened = self._read_opened(conn)
            self._look_at_inbox(conn)
            self._when_idle(lambda _: self._writes.start_wal())  # while the harness starts
            return opened
        except sqlite3.DatabaseError as exc:
            self._close_connection()
            lock.release()
            raise opening.open_error(exc, path) from exc
        except BaseException:
            self._close_connection()
            lock.release()
            sealing.register(path, None)
            raise
        finally:
            if ro is not None:
                ro.close()  # closed by `connect` once read, unless a step before failed

    def _read_opened(self, conn: sqlite3.Connection) -> Opened:
        """What a harness resumes from (see `opening.read_opened`)."""
        return opening.read_opened(conn, self.path, self._writes.texts)

    def _close_connection(self) -> None:
        if self._writes.sealer is not None:
            sealing.register(self.path, None)
            self._writes.sealer = None
        conn = self._writes.closed()
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass
            self._writes.lock.release()
