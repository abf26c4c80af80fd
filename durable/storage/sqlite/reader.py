"""Reading a session file without owning it: the one read-only reader of session files.

`SessionReader(path)` is what `durable inspect`, the invariant checker (`durable.testing`) and
`SQLiteStorage`'s look at a file before it opens it all read through:

- the file is opened with a read-only SQLite connection whose URI quotes the path (a `?`, `#`
  or `%` in a file name is not URI syntax), `immutable` as well when no writer can be running
  (`connect_read_only`); otherwise WAL lets it read the last committed state while the owner writes;
- the session lock is never taken (`owner_of` finds the owner without taking it);
- a file that is missing, not a session, of a newer schema or damaged is refused with
  `StorageError`, `NotASession`, `SchemaTooNew` or `CorruptSession`, naming the file, and
  nothing in it is changed;
- rows come back as records (`durable.storage.rows`); a row that does not decode raises
  `CorruptSession` naming the row and the file, except through `rows()` and
  `durable.storage.rows.decode_rows`, which report such rows as problems; long texts are read
  with the appends their owner keeps beside the file (`partials`), an answer kept by reference
  with its entry's text (`rows.answer_joined`).

This module imports the standard library, attrs, cattrs (through the codec), the records and the
errors only: never anyio, trio or a provider SDK.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Self

from ..._frozen import frozen
from ...errors import CorruptSession, NotASession, SchemaTooNew, StorageError
from ...records import Live, StoredEntry, Submission, Task
from .. import rows, sealing
from ..retention import skip_tombstoned
from ..rows import StoredRows
from ..texts import bounds, join_pieces, stream_texts, streams_of
from . import descriptors, partials
from .files import OPEN_FLAGS
from .lock import owner_pid, read_head
from .schema import APPLICATION_ID, SCHEMA_VERSION
from .totals import disagreeing

SQLITE_HEADER = b"SQLite format 3\x00"
TABLES = frozenset({"tasks", "entries", "submissions", "documents", "texts", "attachments"})



# --------------------------------------------------------------------------- opening


def check_file(path: str) -> None:
    """Refuse, before any SQLite connection, a path that is missing, a folder, empty or not SQLite."""
    if not os.path.exists(path):
        raise StorageError(f"No session file at {path}", location=path)
    if os.path.isdir(path):
        raise NotASession(f"{path} is a directory, not a durable session file", location=path)
    try:
        header = read_head(path, 100)
    except OSError as exc:
        raise StorageError(f"Session file {path} cannot be read ({exc.strerror})", location=path) from exc
    if not header:
        raise NotASession(f"{path} is empty, not a durable session file", location=path)
    if not header.startswith(SQLITE_HEADER):
        raise NotASession(f"{path} is not a durable session file (not an SQLite database)", location=path)


def connect_read_only(path: str, *, writer_may_run: bool = True) -> sqlite3.Connection:
    """A read-only connection that writes nothing to the file and takes no lock.

    `immutable` (no locking, no sidecar files) only when no writer can be running: there is no
    `-wal` file, or it is empty and `writer_may_run` is False (the caller holds the lock). It
    also reads past a rollback journal left by a kill during the first open's switch to WAL,
    which a read-only connection could not roll back. With a non-empty WAL (a crash, or a live
    owner) the file is read as SQLite would, still read-only."""
    wal = path + "-wal"
    try:
        wal_size: int | None = os.path.getsize(wal)
    except OSError:
        wal_size = None
    immutable = wal_size is None or (wal_size == 0 and not writer_may_run)
    uri = f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro" + ("&immutable=1" if immutable else "")
    try:
        conn = descriptors.connect(path, uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA query_only = 1")
    except sqlite3.Error as exc:
        raise StorageError(f"Session file {path} cannot be opened for reading ({exc})", location=path) from exc
    return conn


def read_schema(conn: sqlite3.Connection, path: str, *, empty_ok: bool = False) -> int | None:
    """The file's schema version, after refusing a foreign, newer or incomplete file.

    An SQLite file with no table at all is refused as "not yet a session", unless `empty_ok`
    (the store makes it a session): then None."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id != APPLICATION_ID:
            if tables:
                raise NotASession(f"{path} is an SQLite database of another program, not a durable session file",
                                  location=path)
            if empty_ok:
                return None
            raise NotASession(f"{path} is an empty SQLite database, not yet a durable session file", location=path)
        if "meta" not in tables:
            raise CorruptSession(f"Session file {path} has no meta table", location=path)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = int(row[0]) if row else 0
    except (sqlite3.DatabaseError, UnicodeDecodeError, ValueError) as exc:  # text that is not text: damage
        raise CorruptSession(f"Session file {path} is damaged and cannot be read ({exc})", location=path) from exc
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(path, version, SCHEMA_VERSION)
    missing = TABLES - tables
    if version == SCHEMA_VERSION and missing:
        raise CorruptSession(f"Session file {path} lacks the table(s) {', '.join(sorted(missing))}", location=path)
    return version


def journal_mode(path: str) -> str:
    """"wal" or "rollback journal", from the file header (bytes 18-19: the read and write format
    versions, 2 for WAL). Read from the file: an immutable connection reports its own mode."""
    header = read_head(path, 20)
    return "wal" if header[18:20] == b"\x02\x02" else "rollback journal"


# --------------------------------------------------------------------------- the reader


@frozen
class FileFacts:
    path: str  # absolute
    size_bytes: int
    wal_bytes: int
    page_size: int
    page_count: int
    schema_version: int
    journal_mode: str
    conversations: int
    entries: int
    submissions: int
    tasks: int
    live_tasks: int
    attachments: int = 0  # images and files stored (a file before version 8 has none)
    attachment_bytes: int = 0


def grown(text: str, appends: Iterable[tuple[int, str]]) -> str:
    """`text` with the appends (length before, text gained) that continue it, in order."""
    for before, gained in appends:
        if len(text) == before:
            text += gained
    return text


class SessionReader:
    """A read-only view of one session file (see the module docstring). Opening it refuses a
    file that is not a readable session; close it (or use it as a context manager) when done.
    `snapshot()` makes several reads see the same commit."""

    def __init__(self, path: str | os.PathLike[str], *, writer_may_run: bool = True,
                 key: bytes | str | None = None) -> None:
        self.path = os.fspath(path)
        self._piece = functools.partial(sealing.opened_piece, location=self.path)  # a piece of a long text
        check_file(self.path)
        self._conn = connect_read_only(self.path, writer_may_run=writer_may_run)
        self._sealed = False
        try:
            version = read_schema(self._conn, self.path)
            self._unlock(key)
        except BaseException:
            self._conn.close()
            raise
        assert version is not None  # empty_ok is False: an empty database was refused
        self.schema_version = version
        self._texts = "texts" if version >= 7 else "NULL"  # long texts kept apart: schema 7

    def _unlock(self, key: bytes | str | None) -> None:
        """An encrypted file (`durable.storage.sealing`): its key, checked, and registered while
        this reader is open (unless a store of this process has it open: then its key serves).
        Without one, `WrongKey` naming the file."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'encryption'").fetchone()
        if row is None or (key is None and sealing.registered(self.path)):
            return
        sealer = sealing.unlock(row[0], key, self.path)
        if not sealing.registered(self.path):
            sealing.register(self.path, sealer)
            self._sealed = True

    def context_totals(self) -> list[str]:
        """Where the stored context totals (schema 9) disagree with the rows (`totals.disagreeing`)."""
        return disagreeing(self._conn, self.path) if self.schema_version >= 9 else []

    def close(self) -> None:
        self._conn.close()
        if self._sealed:
            sealing.register(self.path, None)
            self._sealed = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every read inside it sees the same commit."""
        self._run("BEGIN")
        try:
            yield
        finally:
            self._run("COMMIT")

    # ------------------------------------------------------------------ reads

    def file_facts(self) -> FileFacts:
        wal = self.path + "-wal"

        def one(sql: str) -> int:
            return int(self._all(sql)[0][0])

        return FileFacts(
            path=os.path.abspath(self.path),
            size_bytes=os.path.getsize(self.path),
            wal_bytes=os.path.getsize(wal) if os.path.exists(wal) else 0,
            page_size=one("PRAGMA page_size"),
            page_count=one("PRAGMA page_count"),
            schema_version=self.schema_version,
            journal_mode=journal_mode(self.path),
            conversations=one("SELECT COUNT(*) FROM documents"),
            entries=one("SELECT COUNT(*) FROM entries"),
            submissions=one("SELECT COUNT(*) FROM submissions"),
            tasks=one("SELECT COUNT(*) FROM tasks"),
            live_tasks=one("SELECT COUNT(*) FROM tasks WHERE live = 1"),
            **({"attachments": one("SELECT COUNT(*) FROM attachments"),
                "attachment_bytes": one("SELECT COALESCE(SUM(size), 0) FROM attachments")}
               if self.schema_version >= 8 else {}),
        )

    def integrity_check(self) -> list[str]:
        """What `PRAGMA integrity_check` says: `["ok"]` for a sound file, else its findings."""
        try:
            return [str(row[0]) for row in self._conn.execute("PRAGMA integrity_check").fetchall()]
        except sqlite3.DatabaseError as exc:
            return [str(exc)]

    def conversation_ids(self) -> list[str]:
        """Every conversation with a live document or an entry, in order."""
        return [r[0] for r in self._all(
            "SELECT conversation_id FROM documents UNION SELECT DISTINCT conversation_id FROM entries ORDER BY 1")]

    def entry_span(self, conversation_id: str) -> tuple[int, int]:
        """(number of entries, last seq) of a conversation; (0, 0) for none."""
        count, last = self._all("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM entries WHERE conversation_id = ?",
                                (conversation_id,))[0]
        return int(count), int(last)

    def entries(self, conversation_id: str, from_seq: int = 1, to_seq: int | None = None, *,
                last: int | None = None) -> list[StoredEntry]:
        """The entries of a conversation with `from_seq <= seq <= to_seq`, in order; with `last`,
        only the newest `last` of them."""
        hi = to_seq if to_seq is not None else (1 << 63) - 1
        sql = "SELECT seq, body FROM entries WHERE conversation_id = ? AND seq BETWEEN ? AND ? ORDER BY seq"
        args: tuple[Any, ...] = (conversation_id, from_seq, hi)
        if last is not None:
            sql += " DESC LIMIT ?"
            args += (last,)
        found = self._all(sql, args)
        if last is not None:
            found.reverse()
        return [rows.entry(conversation_id, seq, body, self.path) for seq, body in found]

    def tasks(self, *, live: bool | None = None, kind: str | None = None, state: str | None = None,
              conversation_id: str | None = None, ended_last: int | None = None) -> list[Task]:
        """Tasks by id, filtered on their index columns. `ended_last=N`: every live task, and only
        the newest N ended ones."""
        return [rows.task(body, tid, self.path, texts) for tid, body, texts in self.task_rows(
            live=live, kind=kind, state=state, conversation_id=conversation_id, ended_last=ended_last)]

    def task_rows(self, *, live: bool | None = None, kind: str | None = None, state: str | None = None,
                  conversation_id: str | None = None, ended_last: int | None = None,
                  ) -> list[tuple[int, str, dict[str, str] | None]]:
        """`tasks()` undecoded: task id, body, long texts kept apart (or None)."""
        where: list[str] = []
        args: list[Any] = []
        for column, value in (("kind", kind), ("state", state), ("conversation_id", conversation_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if live is not None:
            where.append(f"live = {int(live)}")
        cond = " AND ".join(where) or "1"
        t = self._texts
        if ended_last is None:
            sql = f"SELECT id, body, {t} FROM tasks WHERE {cond} ORDER BY id"
        else:
            sql = (f"SELECT id, body, {t} FROM tasks WHERE {cond} AND live = 1 UNION SELECT id, body, {t} FROM "
                   f"(SELECT id, body, {t} FROM tasks WHERE {cond} AND live = 0 ORDER BY id DESC LIMIT ?) ORDER BY 1")
            args = [*args, *args, ended_last]
        with self._consistent():
            found, side = self._all(sql, tuple(args)), self._side()
            return [(tid, body, self._texts_of(texts, side)) for tid, body, texts in found]

    def submissions(self, *, conversation_id: str | None = None, settled_last: int | None = None) -> list[Submission]:
        """Submissions in the order they were first committed. `settled_last=N`: every queued
        one, and only the newest N settled ones."""
        cond = "1"
        args: list[Any] = []
        if conversation_id is not None:
            cond, args = "conversation_id = ?", [conversation_id]
        if settled_last is None:
            sql = f"SELECT id, body, rowid, conversation_id FROM submissions WHERE {cond} ORDER BY rowid"
        else:
            sql = (f"SELECT id, body, rowid, conversation_id FROM submissions WHERE {cond} AND status = 'queued' "
                   f"UNION ALL SELECT * FROM (SELECT id, body, rowid, conversation_id FROM submissions WHERE {cond} "
                   "AND status != 'queued' ORDER BY rowid DESC LIMIT ?) ORDER BY 3")
            args = [*args, *args, settled_last]
        with self._consistent():
            return [rows.submission(rows.answer_joined(self._plain(body), cid, self._entry, self.path), sid,
                                    self.path) for sid, body, _, cid in self._all(sql, tuple(args))]

    def live_documents(self) -> dict[str, Live]:
        """The live document of every conversation, by conversation id."""
        return {cid: rows.live(body, cid, self.path, texts) for cid, body, texts in self.live_rows()}

    def live_rows(self) -> list[tuple[str, str, dict[str, str] | None]]:
        """The live documents undecoded: conversation id, body, long texts kept apart (or None)."""
        with self._consistent():
            found, side = self._all(f"SELECT conversation_id, body, {self._texts} FROM documents "
                                    "ORDER BY conversation_id"), self._side()
            return [(cid, body, self._texts_of(texts, side)) for cid, body, texts in found]

    def rows(self) -> StoredRows:
        """Every row as stored, undecoded (`decode_rows` decodes them, reporting bad ones), long
        texts kept apart joined back into their bodies. The rows of a conversation being deleted
        (`durable.storage.retention`: a prune cut off) are left out, as if it were gone."""
        t = self._texts
        skip = "WHERE " + skip_tombstoned("meta")
        p = self._plain
        with self._consistent():
            streams = stream_texts([(k, self._piece(b)) for k, b in self._all("SELECT id, body FROM texts ORDER BY id")]
                                   ) if t == "texts" else {}
            side = self._appended() if t == "texts" else {}  # a stream may have no piece in the table yet
            streams = {number: grown(streams.get(number, ""), side.get(number, ())) for number in {*streams, *side}}
            return StoredRows(
                [(tid, cid, kind, state, bool(live), parent, rows.joined_body(p(body), "task", col, streams))
                 for tid, cid, kind, state, live, parent, body, col in self._all(
                    f"SELECT id, conversation_id, kind, state, live, parent_id, body, {t} FROM tasks {skip} "
                    "ORDER BY id")],
                [(cid, seq, kind, p(body)) for cid, seq, kind, body in self._all(
                    f"SELECT conversation_id, seq, kind, body FROM entries {skip} ORDER BY conversation_id, seq")],
                [(sid, cid, status, rows.answer_joined(p(body), cid, self._entry, self.path))
                 for sid, cid, status, body in self._all(
                    f"SELECT id, conversation_id, status, body FROM submissions {skip} ORDER BY rowid")],
                [(cid, rows.joined_body(p(body), "live", col, streams)) for cid, body, col in self._all(
                    f"SELECT conversation_id, body, {t} FROM documents ORDER BY conversation_id")],
                self._attachments() if self.schema_version >= 8 else [],
            )

    def _attachments(self) -> list[tuple[str, str, int]]:
        """The attachments stored (sha256, media type, size), by hash; in an encrypted file each
        is opened to learn its hash (it is stored under a keyed id: `durable.storage.sealing`)."""
        if sealing.sealer_of(self.path) is None:
            return self._all("SELECT sha256, media_type, size FROM attachments ORDER BY sha256")
        return sorted((sealing.attachment_hash(key, size, data, self.path), media_type, size)
                      for key, media_type, size, data in self._all("SELECT sha256, media_type, size, data "
                                                                   "FROM attachments"))

    def _plain(self, body: str) -> str:
        return sealing.plain(body, self.path)

    def _entry(self, conversation_id: str, seq: int) -> str | None:
        """An entry's plain body (a submission's answer stored by reference: `rows.answer_joined`)."""
        found = self._all("SELECT body FROM entries WHERE conversation_id = ? AND seq = ?", (conversation_id, seq))
        return self._plain(found[0][0]) if found else None

    def _side(self) -> Callable[[], dict[int, list[tuple[int, str]]]]:
        """The appends beside the file, read when first needed (once for many rows)."""
        return functools.cache(self._appended)

    def _texts_of(self, column: str | None, side: Callable[[], dict[int, list[tuple[int, str]]]] | None = None,
                  ) -> dict[str, str] | None:
        """The long texts of a row whose `texts` column is `column` (None: inline); `side`: the
        appends beside the file, shared by the rows of one read."""
        if not column:
            return None
        appends = (side or self._appended)()
        return {field: grown(join_pieces([(k, self._piece(b)) for k, b in self._all(
                    "SELECT id, body FROM texts WHERE id BETWEEN ? AND ? ORDER BY id", bounds(number))]),
                    appends.get(number, ()))
                for field, number in streams_of(column).items()}

    def _appended(self) -> dict[int, list[tuple[int, str]]]:
        """What the store writing the file keeps beside it of its long texts (`partials`: appends
        not folded into the table yet), by stream: (length before, text gained), in order."""
        try:
            fd = os.open(self.path + partials.SUFFIX, os.O_RDONLY | OPEN_FLAGS)
        except OSError:
            return {}
        try:
            data = os.read(fd, os.fstat(fd).st_size)
        except OSError:
            return {}
        finally:
            os.close(fd)
        found: dict[int, list[tuple[int, str]]] = {}
        for record in partials.counted(data, self._conn, self.path):
            for number, before, text in record:
                found.setdefault(number, []).append((before, text))
        return found

    @contextmanager
    def _consistent(self) -> Iterator[None]:
        """The reads inside see one commit: a snapshot of their own unless one is open."""
        if self._conn.in_transaction:
            yield
        else:
            with self.snapshot():
                yield

    # ------------------------------------------------------------------ plumbing

    def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise CorruptSession(f"Session file {self.path} is damaged and cannot be read ({exc})",
                                 location=self.path) from exc

    def _run(self, sql: str) -> None:
        self._all(sql)


# --------------------------------------------------------------------------- the owner


def owner_of(path: str) -> int | None:
    """The pid of the process that owns the session file, or None. The lock is on the database
    file itself (see `durable.storage.sqlite.lock`): on Linux the owner is found in `/proc/locks`, never
    by taking the lock; elsewhere `owner_pid` probes with a shared lock for an instant.
    -1: owned, by a process whose pid cannot be seen."""
    return owner_pid(path)


__all__ = ["FileFacts", "SessionReader", "check_file", "connect_read_only", "journal_mode", "owner_of",
           "read_schema"]
