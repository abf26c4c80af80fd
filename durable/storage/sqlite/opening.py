"""Opening a session file for the SQLite store: the checks made before SQLite may write to it
(header, links, modes, journal files), the migration to the current schema, and the read of what
a harness resumes from. Called on the store's writer thread; see `durable.storage.sqlite.store`.
"""

from __future__ import annotations

import os
import sqlite3

from ... import codec
from ...errors import CorruptSession, NotASession, SchemaTooNew, SessionReadOnly, StorageError
from ...records import Entry
from ...tokens import stored_tokens
from .. import rows
from ..held import HeldTexts
from ..protocol import ConversationState, Opened
from . import descriptors, files, inbox, mark, space
from .lock import FileLock
from .reader import connect_read_only, read_schema
from .schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION

_HEADER = b"SQLite format 3\x00"
WAL_LIMIT = 2 << 20
"""Bytes of WAL after which a barrier is followed by a checkpoint, and to which the WAL file is cut
back when it starts again (`PRAGMA journal_size_limit`; see `durable.storage.sqlite.write`). 1 MB
added ~9% fdatasyncs under 64 concurrent committers, 2 MB ~4% (benchmarks/README.md)."""


def acquire(path: str, lock: FileLock) -> os.stat_result:
    """Take the file's lock (`lock` is `path`'s); a missing or empty file with a -wal or journal
    left beside it is refused first. Returns the locked file's stat."""
    try:
        empty = os.path.getsize(path) == 0
    except FileNotFoundError:
        empty = True
    except OSError:
        empty = False  # the lock below says what is wrong
    if empty:
        files.refuse_orphan_journal(path)
    return lock.acquire()


def commit_level(synchronous: str, barrier: bool) -> str:
    """SQLite's `synchronous` level for one transaction of a store opened with `synchronous`:
    "EXTERNAL" (external synchrony) writes a barrier at FULL (the WAL is fsynced at its commit,
    and with it every earlier commit, since the WAL is appended in commit order) and any other
    commit at NORMAL (no fsync: a process kill loses nothing, a power cut may lose it until the
    next barrier); "FULL" and "NORMAL" use their level for every commit."""
    if synchronous == "EXTERNAL":
        return "FULL" if barrier else "NORMAL"
    return synchronous


def look(path: str, st: os.stat_result) -> sqlite3.Connection | None:
    """A read-only connection to the locked file at `path` (`reader.connect_read_only`; None for
    an empty file), for the looks taken before SQLite may write to it: its key
    (`keys.unlock_file`), then a foreign or newer schema (`connect`, which closes it). One
    connection for both: each costs an open and a read of the schema."""
    return connect_read_only(path, writer_may_run=False) if st.st_size > 0 else None


def connect(path: str, lock: FileLock, st: os.stat_result, synchronous: str,
            ro: sqlite3.Connection | None) -> sqlite3.Connection:
    """Check the locked file (header, journal files, a foreign or newer schema, read through
    `ro`: `look`, closed here once read), make it the owner's only if it becomes a session now,
    connect in WAL mode and migrate it. The connection is closed again when a step after it
    fails; the caller releases the lock."""
    fd = lock.fd
    assert fd is not None
    adopting = st.st_size == 0
    if not adopting:
        adopting = check_header(fd, path) != APPLICATION_ID
    # Checked (not yet created) first: a refused file gets nothing written beside it.
    files.prepare_journals(path, st, create=False)
    stored = check_foreign_or_newer(path, ro) if ro is not None else None
    mark.check(path, created=lock.created, stored=stored)
    if adopting:  # a file that becomes a session now: its owner's only, whoever made it
        files.narrow_to_owner(fd)
        st = os.fstat(fd)
    files.prepare_journals(path, st, create=True)
    conn = descriptors.connect(path, path, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute(f"PRAGMA secure_delete = {SECURE_DELETE}")
        if stored is None or stored is False:  # a new session: a prune gives space back (`prune.reclaim`)
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise StorageError(f"Session file {path} cannot use WAL journaling (got {mode})", location=path)
        conn.execute(f"PRAGMA synchronous = {commit_level(synchronous, True)}")
        conn.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT}")  # see durable.storage.sqlite.write
        lock.check()  # SQLite opened the path: it must still name the file locked above
        migrate(conn, path)
        inbox.ensure_inbox(conn)  # until the schema constant is 8 (durable.storage.sqlite.inbox)
    except BaseException:
        try:
            conn.close()
        except sqlite3.Error:
            pass
        raise
    return conn


SECURE_DELETE = "FAST"
"""What a commit does with the content it deletes: FAST zeroes it in the pages the commit writes
anyway, never a page written for that alone. Some builds of SQLite (Debian's) default to ON,
which writes every page a commit frees, zeroed: a streamed answer's pieces, dropped when it ends,
were written again at its final commit and again at the checkpoint. (`durable rekey` zeroes all
it overwrites until it ends: `durable.storage.sqlite.keys`.)"""


def open_error(exc: sqlite3.DatabaseError, path: str) -> StorageError:
    """The error a refused open raises: read-only, cannot open, or damaged."""
    code = getattr(exc, "sqlite_errorname", "")
    if code.startswith("SQLITE_READONLY"):
        return SessionReadOnly(f"Session file {path} cannot be written: it or its folder is read-only "
                               f"for this process ({exc}); the file is not damaged", location=path)
    if code.startswith("SQLITE_CANTOPEN"):
        return StorageError(f"Session file {path} cannot be opened ({exc})", location=path)
    return CorruptSession(f"Session file {path} is damaged and cannot be opened ({exc})", location=path)


def check_foreign_or_newer(path: str, ro: sqlite3.Connection) -> tuple[str, int] | bool:
    """Read-only look at an existing file: refuse (without writing) a foreign or newer one.
    Returns its commit mark's side (`counted`): False for an empty SQLite file (it becomes a
    session), True for a session of a schema without it. Closes `ro`.

    Read through `reader.connect_read_only` (`look`) while this store holds the lock (no writer
    can run): without a non-empty WAL the file is read `immutable`, creating no -wal/-shm files
    next to it and reading past a rollback journal left by a kill during the first open's
    switch to WAL (the connection made next rolls it back)."""
    try:
        if read_schema(ro, path, empty_ok=True) is None:  # an empty SQLite file becomes a session
            return False
        return counted(ro, path) or True
    except sqlite3.DatabaseError as exc:
        raise CorruptSession(f"Session file {path} is damaged and cannot be read ({exc})", location=path) from exc
    finally:
        ro.close()


def counted(conn: sqlite3.Connection, path: str) -> tuple[str, int] | None:
    """The file's (session id, barrier commits) (see `durable.storage.sqlite.mark`); None for a
    file of a schema older than 5 (not migrated yet)."""
    found = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('session', 'barriers')").fetchall())
    if "session" not in found or "barriers" not in found:
        return None
    try:
        return str(found["session"]), int(found["barriers"])
    except ValueError:
        raise CorruptSession(f"Session file {path} is damaged: its barrier count {found['barriers']!r} is not a "
                             f"number", location=path) from None


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Bring the file to the current schema in one transaction."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = 0
    if app_id == APPLICATION_ID:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = int(row[0]) if row else 0
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:  # never "migrate" a newer file down
        raise SchemaTooNew(path, version, SCHEMA_VERSION)
    conn.execute("BEGIN IMMEDIATE")
    try:
        for v in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[v]:
                conn.execute(statement)
            if v == 3 and version > 0:  # before the migrations that count them (9)
                _count_tokens(conn)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(SCHEMA_VERSION),),
        )
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def _count_tokens(conn: sqlite3.Connection) -> None:
    """Migration 3: the `tokens` of the entries already in the file (each decoded once). A row
    that does not decode is left NULL: it is refused, naming it, when it is read."""
    counted = []
    for cid, seq, body in conn.execute("SELECT conversation_id, seq, body FROM entries"):
        try:
            value: Entry = codec.loads(body, Entry)  # type: ignore[arg-type]  # a Union is no type[T] (no TypeForm)
        except codec.CodecError:
            continue
        counted.append((stored_tokens(value), cid, seq))
    conn.executemany("UPDATE entries SET tokens = ? WHERE conversation_id = ? AND seq = ?", counted)


def read_opened(conn: sqlite3.Connection, path: str, held: HeldTexts) -> Opened:
    """What a harness resumes from: each conversation's last seq, live document and last
    compaction, the live tasks, the unsettled submissions and the next task id. `held`: the long
    texts the file keeps apart (`durable.storage.texts`)."""
    conversations: dict[str, ConversationState] = {}
    for cid, body, texts in conn.execute("SELECT conversation_id, body, texts FROM documents").fetchall():
        last = conn.execute("SELECT MAX(seq) FROM entries WHERE conversation_id = ?", (cid,)).fetchone()[0] or 0
        # INDEXED BY: without statistics the planner walks the primary key backwards through
        # every entry after the last compaction (all of them when there is none).
        comp = conn.execute(
            "SELECT seq, body FROM entries INDEXED BY entries_compactions "
            "WHERE conversation_id = ? AND kind = 'compaction' ORDER BY seq DESC LIMIT 1",
            (cid,),
        ).fetchone()
        last_compaction = rows.entry(cid, comp[0], comp[1], path) if comp else None
        live = rows.live(body, cid, path, held.texts(f"live:{cid}") if texts else None)
        conversations[cid] = ConversationState(last, live, last_compaction)
    live_tasks = [rows.task(body, tid, path, held.texts(f"task:{tid}") if texts else None)
                  for tid, body, texts in conn.execute(
                      "SELECT id, body, texts FROM tasks INDEXED BY tasks_live WHERE live = 1 ORDER BY id")]
    unsettled = [rows.submission(body, sid, path) for sid, body in conn.execute(
        # In the order they were first committed (as the memory store keeps them); INDEXED BY,
        # or the ORDER BY would make the planner scan every submission ever made.
        "SELECT id, body FROM submissions INDEXED BY submissions_open WHERE status = 'queued' ORDER BY rowid")]
    max_id = conn.execute("SELECT MAX(id) FROM tasks").fetchone()[0] or 0
    low = space.low_space(path)
    return Opened(conversations, live_tasks, unsettled, max_id + 1, () if low is None else (low,))


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the connection's open transaction, if any (best effort: it may be gone)."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def _has_journal(path: str) -> bool:
    """Whether a non-empty WAL or rollback journal lies next to the file (left by a kill)."""
    for suffix in ("-wal", "-journal"):
        try:
            if os.path.getsize(path + suffix) > 0:
                return True
        except OSError:
            pass
    return False


def check_header(fd: int, path: str) -> int:
    """Refuse a file that is not SQLite, or is shorter than its own header says, before any
    SQLite connection (which could write to it) is made. Reads the descriptor that holds the
    lock (the very file locked); returns the header's application id."""
    try:
        if hasattr(os, "pread"):
            header = os.pread(fd, 100, 0)
        else:  # Windows: no pread; this descriptor is ours alone, so seeking it is safe
            os.lseek(fd, 0, os.SEEK_SET)
            header = os.read(fd, 100)
    except OSError as exc:
        raise StorageError(f"Session file {path} cannot be read ({exc})", location=path) from exc
    if not header.startswith(_HEADER):
        raise NotASession(f"{path} is not a durable session file (not an SQLite database)", location=path)
    if len(header) < 100:
        raise CorruptSession(f"Session file {path} is truncated ({len(header)} bytes)", location=path)
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    change_counter = header[24:28]
    valid_for = header[92:96]
    size = os.fstat(fd).st_size
    # A kill during a checkpoint can leave page 1 (with the new size) written and the file not
    # yet grown; the WAL still holds every page and SQLite recovers from it (likewise a rollback
    # journal left by a kill). Only without either is a file shorter than its header says truncated.
    if pages and change_counter == valid_for and size < pages * page_size and not _has_journal(path):
        raise CorruptSession(
            f"Session file {path} is truncated: {size} bytes, its header says {pages * page_size}",
            location=path,
        )
    return int.from_bytes(header[68:72], "big", signed=True)
