"""The SQLite store: one file, one owner, one writer thread, group commit.

One dedicated thread owns the `sqlite3` connection; every read and write is a job on its queue,
so the event loop never blocks on disk and no other thread ever touches the connection. A commit
job is one `BEGIN IMMEDIATE ... COMMIT`; its batch is encoded there too, so the event loop only
queues it. Commit jobs that queue up while a transaction is being written are written together
in the next one (group commit: one fsync for many callers): first all their rows at once; if
that fails, each batch inside its own savepoint, so that a batch that is refused (a duplicate
entry seq) is rolled back to its savepoint and fails alone while the others commit. When the
transaction itself fails (disk full, I/O error), the group is rolled back and its batches are
written again one transaction each, so every caller learns the outcome of exactly its own batch.

Durability: WAL, with external synchrony by default (`synchronous="EXTERNAL"`): a barrier commit
(`Batch.barrier`: something outside the process depends on it) is written at SQLite's FULL level,
so it and every commit before it are on disk when it returns; any other commit is written at
NORMAL (no fsync), so after a power cut the file holds a prefix of the commit order that ends at
or after the last barrier. `synchronous="FULL"` fsyncs every commit; `synchronous="NORMAL"` never
at commit (a power cut may lose the newest acknowledged commits, barriers included). A process
kill loses nothing in any mode, and no mode can corrupt the file. A group holding a barrier is
written at FULL as a whole.

Cancellation: a job, once queued, runs to completion; a cancelled caller still waits (shielded)
for its commit's result, which only takes as long as the write itself.

Opening never modifies a file it refuses: the header is checked in Python first, a foreign or
newer file is read without writing, and a new file is created with mode 0600 (the checks, the
migration and the first read are in `durable.storage._opening`).

Ownership and file safety (durable.storage._lock): the store owns the database file itself (its
identity, not its name), so another path to it (a symbolic or hard link, a rename) is refused with
`SessionLocked`; a store whose path no longer names its file refuses to commit (`LockLost`). A
symbolic link at the path is resolved to an existing session file (the store then names and works
on that file) or refused; -wal/-shm are made by the store, never through a link; files of another
user, files with a second hard link and a -wal left without its database are refused
(`UnsafeSessionFile`); a file that becomes a session is set to 0600. A file or folder this process
cannot write is `SessionReadOnly`, never "damaged".
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import anyio

from ...errors import CommitFailed, CorruptSession, DiskFull, SessionReadOnly, StorageClosed, StorageError
from ...records import Live, StoredEntry, Submission, Task
from .. import rows
from ..protocol import Batch, Opened, RawContext
from ..rows import EncodedBatch
from ..writer import Job, WriterThread, finish_all, thread_safe_caller
from . import files, opening
from .context import read_context
from .lock import FileLock
from .reader import connect_read_only

T = TypeVar("T")
Synchronous = Literal["EXTERNAL", "FULL", "NORMAL"]
"""When commits reach the disk: "EXTERNAL" (the default) fsyncs barrier commits only (each one
with every commit before it), "FULL" every commit, "NORMAL" only at checkpoints."""
SYNCHRONOUS_LEVELS: tuple[Synchronous, ...] = ("EXTERNAL", "FULL", "NORMAL")


class SQLiteStorage(WriterThread[sqlite3.Connection]):
    """A session file on disk. See the module docstring for the guarantees."""

    _closed_what = "Session file"

    def __init__(self, path: str | os.PathLike[str], *, synchronous: Synchronous = "EXTERNAL") -> None:
        if synchronous not in SYNCHRONOUS_LEVELS:
            raise ValueError(f"synchronous must be 'EXTERNAL', 'FULL' or 'NORMAL', not {synchronous!r}")
        self._given = os.fspath(path)
        self.path = self._given  # on open: the file a symbolic link at the path points to
        self.location = self.path
        self.synchronous = synchronous
        self._init_writer()
        self._lock = FileLock(self.path)
        self._conn: sqlite3.Connection | None = None
        self._level = ""  # the connection's `synchronous` level now (set per transaction)
        self.commits = 0  # transactions written (a group counts once)
        self.barriers = 0  # of those, written at FULL (fsynced)

    # ------------------------------------------------------------------ async API

    async def open(self) -> Opened:
        if self._thread is not None:
            raise StorageError(f"Session file {self.path} is already open in this store", location=self.path)
        self._start_writer()  # a store can be opened again after close (a reopen after a crash)
        try:
            return await self._call(self._open_in_thread)
        except BaseException:
            await self._stop()
            raise

    async def commit(self, batch: Batch) -> None:
        # The batch is encoded on the writer thread, next to its write: the event loop stays
        # free, and the two threads do not hand the GIL back and forth on every row.
        await self._submit(Job(None, batch))

    async def get_task(self, task_id: int) -> Task | None:
        row = await self._call(
            lambda c: c.execute("SELECT body FROM tasks WHERE id = ?", (task_id,)).fetchone())
        return None if row is None else rows.task(row[0], task_id, self.path)

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
        found = await self._call(lambda c: c.execute(sql, args).fetchall())
        return [rows.task(body, tid, self.path) for tid, body in found]

    async def get_entries(
        self, conversation_id: str, from_seq: int = 1, to_seq: int | None = None
    ) -> list[StoredEntry]:
        hi = to_seq if to_seq is not None else (1 << 63) - 1
        found = await self._call(lambda c: c.execute(
            "SELECT seq, body FROM entries WHERE conversation_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (conversation_id, from_seq, hi)).fetchall())
        return [rows.entry(conversation_id, seq, body, self.path) for seq, body in found]

    async def get_context(self, conversation_id: str, from_seq: int, to_seq: int) -> RawContext:
        return await self._call(lambda c: read_context(c, conversation_id, from_seq, to_seq))

    async def get_submission(self, submission_id: str) -> Submission | None:
        row = await self._call(
            lambda c: c.execute("SELECT body FROM submissions WHERE id = ?", (submission_id,)).fetchone())
        return None if row is None else rows.submission(row[0], submission_id, self.path)

    async def get_live(self, conversation_id: str) -> Live | None:
        row = await self._call(
            lambda c: c.execute("SELECT body FROM documents WHERE conversation_id = ?", (conversation_id,)).fetchone())
        return None if row is None else rows.live(row[0], conversation_id, self.path)

    async def close(self) -> None:
        if self._closed or self._thread is None:
            self._closed = True
            return
        await self._stop()

    async def check_integrity(self) -> list[str]:
        """`PRAGMA quick_check` on a read-only connection of its own, in a thread of its own, so
        commits go on meanwhile (a check of a large file takes seconds). The thread is joined
        before this returns; cancelling interrupts the check first. Problems are returned, one
        line each, naming nothing: the caller names the file."""
        call = thread_safe_caller()
        done = anyio.Event()
        found: list[str] = []
        conn = connect_read_only(self.path)

        def work() -> None:
            try:
                _background_priority()
                found.extend(str(row[0]) for row in conn.execute("PRAGMA quick_check(20)").fetchall())
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
                try:
                    conn.interrupt()  # cancelled: the check stops at its next step
                except sqlite3.ProgrammingError:
                    pass  # it had just finished and closed its connection
            thread.join()
        problems = [line for line in found if line != "ok"]
        if problems:
            # A file replaced under the owner (another process's session now at the path) is not
            # damage of this session: LockLost, which the harness learns at its next commit too.
            self._lock.check()
        return problems

    async def call_in_writer(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(connection)` on the writer thread (for tests and fault injection)."""
        return await self._call(fn)

    # ------------------------------------------------------------------ writer thread (see `WriterThread`)

    async def _stop(self) -> None:
        await self._stop_writer(self._close_connection)

    def _writer_exit(self) -> None:
        self._close_connection()

    def _run_call(self, job: Job) -> None:
        try:
            fn, conn = job.fn, self._conn
            assert fn is not None, "a job without a batch is a call"
            if conn is not None:
                job.result = fn(conn)
            elif fn == self._open_in_thread:  # the one call made before there is a connection
                job.result = self._open_in_thread(None)
            else:
                raise StorageClosed(f"Session file {self.path} is not open", location=self.path)
        except sqlite3.Error as exc:
            job.error = self._translate(exc, "A read from")
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            job.error = exc
        finally:
            job.finish()

    def _write_group(self, group: list[Job]) -> None:
        conn = self._conn
        if conn is None:
            for job in group:
                job.error = StorageClosed(f"Session file {self.path} is not open", location=self.path)
                job.finish()
            return
        try:
            self._lock.check()
        except Exception as exc:  # noqa: BLE001 - ownership unknown: nothing is written
            if not isinstance(exc, StorageError):
                exc = CommitFailed(f"A commit to {self.path} was refused: its lock file cannot be checked ({exc})",
                                   location=self.path)
            for job in group:
                job.error = exc
                job.finish()
            return
        group = [job for job in group if job.encode(self.path)]
        if len(group) > 1 and self._write_together(conn, group):
            return
        # One batch, or a group whose transaction failed as a whole (disk full, I/O error):
        # each batch alone, so that every caller learns the outcome of exactly its own batch.
        for job in group:
            try:
                self._begin(conn, [job])
                self._apply(conn, job.encoded)
                conn.execute("COMMIT")
                self._count()
            except Exception as exc:  # noqa: BLE001 - handed to the waiting caller
                opening.rollback(conn)
                if getattr(exc, "sqlite_errorname", "").startswith("SQLITE_IOERR"):
                    self._drop_failed_frames(conn)
                job.error = self._translate(exc, "A commit to")
            job.finish()

    def _begin(self, conn: sqlite3.Connection, jobs: list[Job]) -> None:
        """Set the level the transaction of `jobs` is written at (FULL when one of them is a
        barrier, under external synchrony), then begin it."""
        level = opening.commit_level(self.synchronous, any(j.encoded is None or j.encoded.barrier for j in jobs))
        if level != self._level:
            conn.execute(f"PRAGMA synchronous = {level}")
            self._level = level
        conn.execute("BEGIN IMMEDIATE")

    def _count(self) -> None:
        self.commits += 1
        if self._level == "FULL":
            self.barriers += 1

    @staticmethod
    def _drop_failed_frames(conn: sqlite3.Connection) -> None:
        """After an I/O error (a failed fsync) a refused commit's frames can stay in the WAL with a
        valid commit record, and WAL recovery after a process death would bring the refused commit
        back. Checkpointing and truncating the WAL removes them. Best effort: when the disk still
        fails, the next commit fails too and says so."""
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error:
            pass

    def _write_together(self, conn: sqlite3.Connection, group: list[Job]) -> bool:
        """Write a group in one transaction. First the rows of all its batches together, one
        statement per table in commit order (a later upsert wins, as if written one by one);
        if that fails, again with each batch inside its own savepoint, so that a batch that a
        constraint refuses (a duplicate entry seq) is rolled back alone and the others commit
        together. Returns False, with everything rolled back and nobody told, when the
        transaction fails as a whole."""
        try:
            self._begin(conn, group)
            # Every job here is encoded (`Job.encode` kept only those); the filter tells the type checker.
            self._apply(conn, _merged([job.encoded for job in group if job.encoded is not None]))
            conn.execute("COMMIT")
        except Exception:  # noqa: BLE001 - sorted out batch by batch below
            opening.rollback(conn)
        else:
            self._count()
            finish_all(group)
            return True
        errors: list[StorageError | None] = []
        try:
            self._begin(conn, group)
            for job in group:
                conn.execute("SAVEPOINT batch")
                try:
                    self._apply(conn, job.encoded)
                    errors.append(None)
                except (sqlite3.IntegrityError, ValueError, TypeError, OverflowError) as exc:
                    # Refused for what this batch holds (a constraint, a value the driver
                    # cannot bind); SQLite keeps the transaction, so only the batch is undone.
                    if not conn.in_transaction:
                        raise
                    conn.execute("ROLLBACK TO batch")
                    errors.append(self._translate(exc, "A commit to"))
                conn.execute("RELEASE batch")
            conn.execute("COMMIT")
        except Exception:  # noqa: BLE001 - the caller writes each batch alone instead
            opening.rollback(conn)
            return False
        self._count()
        for job, error in zip(group, errors, strict=True):
            job.error = error
        finish_all(group)
        return True

    @staticmethod
    def _apply(conn: sqlite3.Connection, enc: EncodedBatch | None) -> None:
        assert enc is not None
        if enc.tasks:
            conn.executemany(
                "INSERT INTO tasks (id, conversation_id, kind, state, live, parent_id, body) VALUES (?,?,?,?,?,?,?) "
                "ON CONFLICT (id) DO UPDATE SET state = excluded.state, live = excluded.live, body = excluded.body",
                enc.tasks,  # `EncodedTask` rows are the columns in order (`live`, a bool, binds as 0/1)
            )
        if enc.entries:
            conn.executemany("INSERT INTO entries (conversation_id, seq, kind, body, tokens) VALUES (?,?,?,?,?)",
                             enc.entries)
        if enc.submissions:
            conn.executemany(
                "INSERT INTO submissions (id, conversation_id, status, body) VALUES (?,?,?,?) "
                "ON CONFLICT (id) DO UPDATE SET status = excluded.status, body = excluded.body",
                enc.submissions,
            )
        if enc.live:
            conn.executemany(
                "INSERT INTO documents (conversation_id, body) VALUES (?,?) "
                "ON CONFLICT (conversation_id) DO UPDATE SET body = excluded.body",
                enc.live,
            )

    def _translate(self, exc: Exception, what: str) -> StorageError:
        if not isinstance(exc, sqlite3.Error):  # a value the driver cannot bind (int > 64 bits)
            return CommitFailed(f"{what} {self.path} was refused and rolled back: {exc}", location=self.path)
        code = getattr(exc, "sqlite_errorname", "")
        if code.startswith("SQLITE_FULL") or "full" in str(exc).lower():
            return DiskFull(
                f"{what} {self.path} was rolled back: the disk or the file's size limit is full ({exc})",
                location=self.path,
            )
        if code.startswith("SQLITE_READONLY"):
            return SessionReadOnly(f"{what} {self.path} was refused: the file or its folder is read-only "
                                   f"for this process ({exc})", location=self.path)
        if code.startswith("SQLITE_CORRUPT") or code.startswith("SQLITE_NOTADB"):
            return CorruptSession(f"Session file {self.path} is damaged ({exc})", location=self.path)
        if isinstance(exc, sqlite3.IntegrityError):
            return CommitFailed(f"{what} {self.path} was refused and rolled back: {exc}", location=self.path)
        return CommitFailed(f"{what} {self.path} failed and was rolled back ({exc})", location=self.path)

    # ------------------------------------------------------------------ opening

    def _open_in_thread(self, _: Any) -> Opened:
        # A symbolic link at the path is resolved (or refused); see durable.storage._lock.
        path = self.path = self.location = files.resolve(self._given)
        self._lock = FileLock(path)
        st = opening.acquire(path, self._lock)
        try:
            self._conn = opening.connect(path, self._lock, st, self.synchronous)
            self._level = opening.commit_level(self.synchronous, True)
            return self._read_opened(self._conn)
        except sqlite3.DatabaseError as exc:
            self._close_connection()
            self._lock.release()
            raise opening.open_error(exc, path) from exc
        except BaseException:
            self._close_connection()
            self._lock.release()
            raise

    def _read_opened(self, conn: sqlite3.Connection) -> Opened:
        """What a harness resumes from (see `opening.read_opened`)."""
        return opening.read_opened(conn, self.path)

    def _close_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass
            self._lock.release()


def _background_priority() -> None:
    """Lower the priority of the calling thread (Linux: the nice value is per thread), so that a
    check in the background takes the CPU the harness leaves free rather than sharing it with the
    first turns after an open. Linux only (elsewhere a thread id may be another process's pid);
    best effort: if refused, the thread keeps its priority."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:
            pass


def _merged(batches: list[EncodedBatch]) -> EncodedBatch:
    """The rows of several encoded batches as one, in order."""
    return EncodedBatch(
        tuple(t for b in batches for t in b.tasks),
        tuple(e for b in batches for e in b.entries),
        tuple(s for b in batches for s in b.submissions),
        tuple(d for b in batches for d in b.live),
    )
