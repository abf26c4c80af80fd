"""The SQLite store's side of the group-commit policy (`durable.storage.group_commit`): its
primitives on the writer thread's connection (`SQLiteWrites`), and the one copy of its upsert SQL
(`apply_rows`); what a failed statement means to the caller is `durable.storage.sqlite.failures`.

A transaction is `BEGIN IMMEDIATE ... COMMIT`, fenced by checking that the store still owns its
file (`FileLock.check`: `LockLost` otherwise), at the `synchronous` level its batches ask for
(`opening.commit_level`: under external synchrony FULL for a barrier, NORMAL otherwise). A
transaction that failed with an I/O error also has its frames dropped from the WAL.

The WAL is kept small (`SQLiteWrites.bound_wal`): after a group written as a barrier, once the WAL
file passes `WAL_LIMIT`, a passive checkpoint copies it into the database (its frames are already
on disk: the checkpoint adds one fsync of the database), and the next transaction starts it again
from its beginning, truncated to `WAL_LIMIT` (`PRAGMA journal_size_limit`). Lazy commits alone are
bounded by SQLite's own checkpoint every 1,000 pages (~4 MB), truncated the same way.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from typing import Any

from ...errors import CommitFailed, StorageClosed, StorageError
from ..bodies import packed, sealed
from ..held import HeldTexts
from ..packing import ATTACHMENT_MARK
from ..rows import (
    CONTEXT_ROWS,
    EncodedBatch,
    EncodedTask,
    answers_by_entry,
    context_totals,
    lazy_appends,
    written_texts,
)
from ..sealing import Sealer, opened_piece, plain
from ..texts import Put, row_digest, task_digest
from . import descriptors, partials, space
from .failures import translate
from .lock import FileLock
from .mark import CommitMark
from .opening import WAL_LIMIT, commit_level, counted, rollback
from .partials import PartialsFile

# A live task's row is written again without setting `live`: SQLite rewrites the `tasks_live`
# index entry of any row whose update sets `live`, to the same value too (a page of the WAL a
# commit, for nothing). `_REVIVED` then sets it where it was not (the engine never makes an ended
# task live again, the store's contract allows it); an ending task's row sets it at once.
_TASKS_INSERT = ("INSERT INTO tasks (id, conversation_id, kind, state, live, parent_id, body, texts) "
                 "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (id) DO UPDATE SET state = excluded.state, ")
_LIVE_TASKS = _TASKS_INSERT + "body = excluded.body, texts = excluded.texts"
_REVIVED = "UPDATE tasks SET live = 1 WHERE id = ? AND live = 0"
_ENDED_TASKS = _TASKS_INSERT + "live = excluded.live, body = excluded.body, texts = excluded.texts"
_ENTRIES = "INSERT INTO entries (conversation_id, seq, kind, body, tokens) VALUES (?,?,?,?,?)"
_SUBMISSIONS = ("INSERT INTO submissions (id, conversation_id, status, body) VALUES (?,?,?,?) "
                "ON CONFLICT (id) DO UPDATE SET status = excluded.status, body = excluded.body")
_COPY = ("INSERT INTO entries (conversation_id, seq, kind, body, tokens) SELECT ?, seq, kind, body, tokens "
         "FROM entries WHERE conversation_id = ? AND seq <= ?")
# The count and token total of each conversation's context rows (schema 9), added to by the
# entries a commit writes (a NULL total stays NULL: a row was never counted).
_ADDED = ("ON CONFLICT (conversation_id) DO UPDATE SET entries = entries + excluded.entries, "
          "tokens = tokens + excluded.tokens, attachments = attachments + excluded.attachments")
_TOTALS = f"INSERT INTO conversations (conversation_id, entries, tokens, attachments) VALUES (?,?,?,?) {_ADDED}"
# A fork's: its rows counted; their attachments not known in an encrypted file (sealed bodies).
_COPIED_TOTALS = ("INSERT INTO conversations (conversation_id, entries, tokens, attachments) SELECT ?, count(*), "
                  "CASE WHEN count(tokens) = count(*) THEN coalesce(sum(tokens), 0) END, "
                  "CASE WHEN ? THEN NULL ELSE sum(instr(body, ?) > 0) END FROM entries "
                  f"WHERE conversation_id = ? AND seq <= ? AND {CONTEXT_ROWS} {_ADDED}")
_COUNT = "UPDATE meta SET value = ? WHERE key = 'barriers'"
_DOCUMENTS = ("INSERT INTO documents (conversation_id, body, texts) VALUES (?,?,?) "
              "ON CONFLICT (conversation_id) DO UPDATE SET body = excluded.body, texts = excluded.texts")
_PUT = "INSERT INTO texts (id, body) VALUES (?,?) ON CONFLICT (id) DO UPDATE SET body = excluded.body"
_DROP = "DELETE FROM texts WHERE id BETWEEN ? AND ?"
# Stored once per session: the same bytes again (the same screenshot) write nothing.
_ATTACHMENTS = "INSERT OR IGNORE INTO attachments (sha256, media_type, size, data) VALUES (?,?,?,?)"


def held_texts(conn: Any, location: str = "") -> HeldTexts:
    """The long texts a session file keeps apart (`durable.storage.texts`), read whole: only live
    rows have them."""
    documents = list(conn.execute("SELECT conversation_id, body, texts FROM documents WHERE texts IS NOT NULL"))
    owners = [(f"live:{cid}", col) for cid, _, col in documents]
    tasks = [EncodedTask(tid, cid, kind, state, bool(live), parent, plain(body, location), col)
             for tid, cid, kind, state, live, parent, body, col in conn.execute(
                 "SELECT id, conversation_id, kind, state, live, parent_id, body, texts FROM tasks "
                 "INDEXED BY tasks_live WHERE live = 1 AND texts IS NOT NULL")]
    owners += [(f"task:{t.id}", t.texts) for t in tasks]
    held = HeldTexts.load(owners, [(key, opened_piece(body, location))
                                   for key, body in conn.execute("SELECT id, body FROM texts ORDER BY id")])
    held.bodies.update((cid, row_digest(plain(body, location), col)) for cid, body, col in documents)  # as written
    held.task_rows.update((t.id, task_digest(t, t.texts)) for t in tasks)
    return held


def apply_rows(conn: Any, rows: EncodedBatch, held: HeldTexts | None = None, sealer: Sealer | None = None) -> None:
    """Write `rows` in the open transaction of `conn` (a `sqlite3` connection, or an `apsw` one:
    `durable.testing.powercut` writes the store's own SQL). A later upsert of a key wins. `held`:
    the texts the file keeps apart, as of this transaction (None: read them now). A live document
    whose row did not change is not written again. `sealer`: the file is encrypted (its bodies
    are sealed as they are written: `durable.storage.sealing`)."""
    if held is None:
        held = held_texts(conn)
    totals = context_totals(rows.entries) if rows.entries else ()  # of the plain bodies, before sealing
    rows, puts, drops = written_texts(rows, held)
    if sealer is None:  # an encrypted file keeps its answers whole, and uncompressed: a sealed
        # row's length would say how well its text compressed (`docs/conversations.md`)
        rows = packed(answers_by_entry(rows, entry_body(conn, "")))  # long bodies compressed
    else:
        rows, puts = sealed(rows, puts, sealer)
    if rows.tasks:  # `EncodedTask` rows are the columns in order (`live`, a bool, binds as 0/1)
        live = [t for t in rows.tasks if t.live]
        if live:
            conn.executemany(_LIVE_TASKS, live)
            conn.executemany(_REVIVED, [(t.id,) for t in live])
        if len(live) < len(rows.tasks):
            conn.executemany(_ENDED_TASKS, [t for t in rows.tasks if not t.live])
    if rows.entries:
        conn.executemany(_ENTRIES, rows.entries)
        conn.executemany(_TOTALS, totals)
    for source, target, to_seq in rows.copies:  # a fork: the rows as stored, not encoded again
        conn.execute(_COPY, (target, source, to_seq))
        conn.execute(_COPIED_TOTALS, (target, sealer is not None, ATTACHMENT_MARK, source, to_seq))
    if rows.submissions:
        conn.executemany(_SUBMISSIONS, rows.submissions)
    if rows.live:
        conn.executemany(_DOCUMENTS, rows.live)
    if rows.inbox:  # decisions this commit applies (durable.storage.sqlite.inbox)
        conn.executemany("DELETE FROM inbox WHERE id = ?", [(i,) for i in rows.inbox])
    if drops:
        conn.executemany(_DROP, drops)
    if puts:
        conn.executemany(_PUT, puts)
    if rows.attachments:
        conn.executemany(_ATTACHMENTS, rows.attachments)


def entry_body(conn: Any, location: str) -> Callable[[str, int], str | None]:
    """`entry(conversation_id, seq)`: an entry's plain JSON body, or None (for `rows.answer_joined`)."""
    def entry(conversation_id: str, seq: int) -> str | None:
        row = conn.execute("SELECT body FROM entries WHERE conversation_id = ? AND seq = ?",
                           (conversation_id, seq)).fetchone()
        return None if row is None else plain(row[0], location)
    return entry


def drop_failed_frames(conn: Any) -> None:
    """After an I/O error (a failed fsync) a refused commit's frames can stay in the WAL with a
    valid commit record, and WAL recovery after a process death would bring the refused commit
    back; after a full disk, the WAL file holds the space the refused commit took. Checkpointing
    and truncating the WAL removes them and gives the space back, when the database can take the
    WAL's pages. A reader holding an older snapshot is waited for 100 ms at most. Best effort:
    when the disk still fails, the next commit fails too and says so."""
    try:
        with descriptors.busy_timeout(conn, 100):
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error:
        pass


# Refused for what a batch holds: a constraint, or a value the driver cannot bind.
_REFUSALS = (sqlite3.IntegrityError, ValueError, TypeError, OverflowError)


class SQLiteWrites:
    """The writer thread's connection to a session file (`conn`, None while the store is not
    open: `opened`, `closed`) and the SQLite primitives of the group-commit policy
    (`durable.storage.group_commit.Transactions`). `commits` counts the transactions written (a
    group once), `barriers` those written at FULL."""

    def __init__(self, path: str, synchronous: str) -> None:
        self.path = self.location = path
        self.synchronous = synchronous
        self.conn: sqlite3.Connection | None = None
        self.lock = FileLock(path)
        self.level = ""  # the connection's `synchronous` level now (set per transaction)
        self.commits = 0
        self.barriers = 0
        self.checkpoints = 0  # passive checkpoints made by `bound_wal`
        self.mark: CommitMark | None = None  # the commit mark (`durable.storage.sqlite.mark`), while open
        self._counted = 0  # barrier commits the file holds (its `meta.barriers`)
        self._session = ""  # the file's `meta.session`
        self._exhausted: bool | None = None  # whether the file could hardly grow when the last commit failed
        self._wal_due = False  # a barrier was written with the WAL past `WAL_LIMIT`
        self.texts = HeldTexts()  # the long texts the file keeps apart (`durable.storage.texts`)
        self._lazy = False  # the transaction begun is lazy and the file has a side file (`begin`)
        self.sealer: Sealer | None = None  # set: the file is encrypted (`durable.storage.sealing`)
        self.partials: PartialsFile | None = None  # appends kept beside the file (`partials`), while open
        self.appended = 0  # lazy commits written there instead of as transactions
        self._tag = 0  # the last `meta.lazy` (`partials.TAG`) a transaction wrote
        self._cut: int | None = None  # the side file's size before the tagged record of the transaction
        self._tainted = False  # the side file may hold a tagged record not committed: grow in the table

    def opened(self, path: str, lock: FileLock, conn: sqlite3.Connection) -> None:
        """The store owns the file at `path` (resolved) by `lock` and opened it on `conn`, at the
        level of a barrier; what the file keeps apart is loaded (`marked` opens its mark, once the
        file was read whole: a refused open leaves nothing beside it)."""
        self.path = self.location = path
        self.lock = lock
        self.conn = conn  # first: whatever fails below, the store's close closes it
        self.level = commit_level(self.synchronous, True)
        self._session, self._counted = counted(conn, path) or ("", 0)
        self.texts = held_texts(conn, path)

    def marked(self) -> None:
        """Open the commit mark and bring it up to the file's count; take back the appends a
        process that ended left beside the file (`partials`)."""
        self.mark = CommitMark(self.path, self._session, self._counted)
        if self._session:
            self.partials = PartialsFile(self.path, self._session)
            self._tag = partials.lazy_tag(self._conn(), self.path)
            records = self.partials.recover()
            self._tainted = bool(records)  # its tags may go past `meta.lazy`: none until it is emptied
            self.texts.recover(partials.committed(records, self._tag))
            self.texts.reserve(records)

    def closed(self) -> sqlite3.Connection | None:
        """The store is closing: the connection to close, if any (nothing is written after)."""
        conn, self.conn = self.conn, None
        if self.partials is not None:
            self.partials.close()
            self.partials = None
        if self.mark is not None:
            self.mark.close()
            self.mark = None
        return conn

    def refusal(self) -> StorageError | None:
        if self.conn is None:
            return StorageClosed(f"Session file {self.path} is not open", location=self.path)
        return None

    def write(self, rows: EncodedBatch) -> None:
        if not rows.barrier and self.partials is not None and self.sealer is None and self._append(rows):
            return
        self.begin(rows.barrier)
        self.apply(rows)
        self.commit()

    def begin(self, barrier: bool) -> None:
        conn = self._conn()
        try:
            self.lock.check()
        except StorageError:
            raise
        except Exception as exc:
            raise CommitFailed(f"A commit to {self.path} was refused: its lock file cannot be checked ({exc})",
                               location=self.path) from exc
        level = commit_level(self.synchronous, barrier)
        if level != self.level:
            conn.execute(f"PRAGMA synchronous = {level}")
            self.level = level
        conn.execute("BEGIN IMMEDIATE")
        # A lazy transaction puts the text of a stream it makes beside the file (`commit`), not in the table.
        self._lazy = not barrier and self.level != "FULL" and self.partials is not None and self.sealer is None
        self.texts.begin(defer=self._lazy, grow=self._lazy and not self._tainted)

    def apply(self, rows: EncodedBatch) -> None:
        apply_rows(self._conn(), rows, self.texts, self.sealer)

    def savepoint(self) -> None:
        self._conn().execute("SAVEPOINT batch")
        self.texts.savepoint()

    def rollback_to_savepoint(self) -> None:
        self._conn().execute("ROLLBACK TO SAVEPOINT batch")
        self.texts.rollback_to_savepoint()

    def release_savepoint(self) -> None:
        self._conn().execute("RELEASE SAVEPOINT batch")
        self.texts.release_savepoint()

    def _append(self, rows: EncodedBatch) -> bool:
        """Write a lazy commit that only appends to long texts beside the file (`partials`), not
        as a transaction; False when it writes anything else, or the side file failed (the
        transaction then says why)."""
        found = lazy_appends(rows, self.texts)
        if found is None or self.partials is None:
            return False
        self._conn()
        self.lock.check()
        if found:
            try:
                self.partials.append([(s.number, len(s.text), gained.encode()) for s, gained in found])
            except OSError:
                return False
            for stream, gained in found:
                self.texts.grew(stream, gained)
        self.commits += 1
        self.appended += 1
        return True

    def commit(self) -> None:
        conn = self._conn()
        lazy = self._lazy
        # A barrier folds what is kept beside the file (never fsynced) into the table; a lazy one adds to it.
        puts = self._set_aside() if lazy else self.texts.fold()
        if puts:
            conn.executemany(_PUT, puts if self.sealer is None else [(k, self.sealer.seal(t)) for k, t in puts])
        full = self.level == "FULL"
        if full:  # a barrier counts itself (`durable.storage.sqlite.mark`)
            conn.execute(_COUNT, (str(self._counted + 1),))
        conn.execute("COMMIT")
        self._cut = None
        self.texts.commit()
        if self.partials is not None and not lazy:
            try:
                self.partials.reset()
                self._tainted = False
            except OSError:
                pass  # what it holds continues no text the table holds now: never applied again
        self.commits += 1
        if full:
            self.barriers += 1
            self._counted += 1
            if self.mark is not None:
                self.mark.record(self._counted)  # after the fsync: the file holds at least this
            self._wal_due = _wal_size(self.path) > WAL_LIMIT

    def _set_aside(self) -> list[Put]:
        """Put beside the file, before the transaction commits, the texts of the streams it made
        (appends to empty texts: a process killed before the commit never applies them, no stream
        of that number is in the table) and what the streams it wrote gained (tagged: counted
        once `meta.lazy` says it committed). The pieces to write in the transaction instead when
        the side file cannot take them."""
        made, grown = self.texts.deferred(), self.texts.grown()
        if not (made or grown) or self.partials is None:
            return []
        record = [(s.number, 0, s.text.encode()) for s in made] + [(n, k, t.encode()) for n, k, t in grown]
        size = self.partials.size
        try:
            self.partials.append([(partials.TAG, self._tag + 1, b""), *record] if grown else record)
        except OSError:
            return self.texts.fold_deferred()
        self.texts.kept_apart(made)
        if grown:
            self._tag, self._cut = self._tag + 1, size
            self._conn().execute(_TAG, (str(self._tag),))
        return []

    def fold_pending(self) -> None:
        """At a clean close: a transaction that folds what lazy ones left beside the file, so the file
        holds every text and its side file goes (best effort: else the next open takes it back)."""
        if self.conn is None or self.partials is None or not self.texts.pending:
            return
        try:
            self.begin(True)
            self.commit()
        except Exception as exc:  # noqa: BLE001 - what the side file holds is taken back at the next open
            self.rollback(exc)

    def start_wal(self) -> None:
        """Begin an empty WAL (a file closed cleanly, or new) with a commit of no consequence:
        SQLite syncs a WAL's header, and its folder, before the first frame it writes to it, so
        the first commit after an open would pay two syncs more than the next ones. Run when the
        writer has nothing else to do (right after the open, while the harness starts), this
        takes them off the first commit somebody waits for. Not for a file whose every commit
        is synced ("FULL": it would add one). Best effort: a failure is left to the next commit.
        The commit counts the opens of the file (`meta.opens`), not in `commits`."""
        conn = self.conn
        level = commit_level(self.synchronous, False)
        if conn is None or level == "FULL" or _wal_size(self.path) > 0:
            return
        barrier = commit_level(self.synchronous, True)
        try:
            self.lock.check()
            conn.execute(f"PRAGMA synchronous = {level}")
            self.level = level
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(_OPENS)
            conn.execute("COMMIT")
        except Exception:  # noqa: BLE001 - left to the next commit, which says what is wrong
            rollback(conn)
        finally:  # back at a barrier's level, as the open left it
            try:
                conn.execute(f"PRAGMA synchronous = {barrier}")
                self.level = barrier
            except sqlite3.Error:
                pass

    def bound_wal(self) -> None:
        """After a group of commits: a passive checkpoint when a barrier left the WAL past
        `WAL_LIMIT` (see the module docstring). It never waits for readers (what a reader still
        uses is copied by a later one) and never fails a commit: an error is left to the next
        checkpoint (a full disk: the next commit says so)."""
        conn = self.conn
        if not self._wal_due or conn is None:
            return
        self._wal_due = False
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            self.checkpoints += 1
        except sqlite3.Error:
            pass

    def rollback(self, failure: BaseException) -> None:
        self.texts.rollback()
        cut, self._cut = self._cut, None
        if cut is not None and self.partials is not None:  # the tagged record of a transaction that never was
            try:
                self.partials.cut(cut)
            except OSError:
                self._tainted = True
        conn = self.conn
        if conn is None:
            return
        rollback(conn)
        if getattr(failure, "sqlite_errorname", "").startswith(("SQLITE_IOERR", "SQLITE_FULL")):
            self._exhausted = space.exhausted(self.path)  # as it failed: dropping frames may make room
            drop_failed_frames(conn)

    def refused(self, failure: Exception) -> bool:
        # After some errors SQLite rolls the whole transaction back itself: then it is not the
        # batch alone that failed.
        return isinstance(failure, _REFUSALS) and self.conn is not None and self.conn.in_transaction

    def translate(self, failure: Exception) -> StorageError:
        exhausted, self._exhausted = self._exhausted, None
        return translate(failure, "A commit to", self.path, exhausted=exhausted)

    def settle(self, attempt: Callable[[], None]) -> None:
        attempt()  # a local file: a transaction's outcome is always known

    def _conn(self) -> sqlite3.Connection:
        conn = self.conn
        if conn is None:
            raise StorageClosed(f"Session file {self.path} is not open", location=self.path)
        return conn


_TAG = "INSERT INTO meta (key, value) VALUES ('lazy', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
_OPENS = ("INSERT INTO meta (key, value) VALUES ('opens', '1') "
          "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")


def _wal_size(path: str) -> int:
    try:
        return os.stat(path + "-wal").st_size
    except OSError:
        return 0
