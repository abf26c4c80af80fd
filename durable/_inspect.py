"""Reading a session file without owning it: what `durable inspect` shows.

`read_session(path)` returns one plain, JSON-ready dict: file facts, conversations with their last
entries, submissions, tasks and the live documents. It is safe while the owner process runs:

- the file is opened with a read-only SQLite connection (`mode=ro`); WAL lets it read the last
  committed state while the owner writes. When there is no `-wal` file nobody has the database
  open, and it is opened `immutable`, so that not even SQLite's empty `-wal`/`-shm` sidecars are
  created;
- the session lock is never taken: on Linux the owner is found in `/proc/locks`, elsewhere by
  `durable.storage._lock.owner_pid`, whose probe takes a shared lock for an instant;
- rows are decoded as plain JSON (the shape `durable.codec` writes), so a reader never needs the
  engine: this module imports the standard library, `durable.errors` and the schema constants
  only, never anyio, trio or a provider SDK.

A file that is missing, not a session, of a newer schema or damaged is refused with the same
error classes the harness raises (`StorageError`, `NotASession`, `SchemaTooNew`,
`CorruptSession`), naming the file; nothing in it is changed.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any
from urllib.parse import quote

from .errors import CorruptSession, NotASession, SchemaTooNew, StorageError
from .storage.schema import APPLICATION_ID, SCHEMA_VERSION

_HEADER = b"SQLite format 3\x00"
DEFAULT_SYNCHRONOUS = "FULL"  # what `open_harness` sets on its connection unless told otherwise


def read_session(path: str, *, last: int = 10) -> dict[str, Any]:
    """Everything `durable inspect` shows about the session file at `path`.

    `last` bounds what grows with history: the entries shown per conversation, and the ended
    tasks and settled submissions shown (live tasks and unsettled submissions are always all
    shown)."""
    path = os.fspath(path)
    if os.path.islink(path):  # as the owner does: the file itself, with its -wal beside it
        path = os.path.realpath(path)
    _check_file(path)
    conn = _connect_read_only(path)
    try:
        try:
            version = _check_session(conn, path)
            conn.execute("BEGIN")  # one read transaction: every section shows the same commit
            data = {
                "file": _file_facts(conn, path, version),
                "conversations": _conversations(conn, last),
                "submissions": _submissions(conn, last),
                "tasks": _tasks(conn, last),
                "live": _live(conn),
            }
            conn.execute("COMMIT")
            return data
        except sqlite3.DatabaseError as exc:
            raise CorruptSession(f"Session file {path} cannot be read ({exc})", location=path) from exc
    finally:
        conn.close()


# --------------------------------------------------------------------------- opening


def _check_file(path: str) -> None:
    if not os.path.exists(path):
        raise StorageError(f"No session file at {path}", location=path)
    if os.path.isdir(path):
        raise NotASession(f"{path} is a directory, not a durable session file", location=path)
    try:
        with open(path, "rb") as f:
            header = f.read(100)
    except OSError as exc:
        raise StorageError(f"Session file {path} cannot be read ({exc.strerror})", location=path) from exc
    if not header:
        raise NotASession(f"{path} is empty, not a durable session file", location=path)
    if not header.startswith(_HEADER):
        raise NotASession(f"{path} is not a durable session file (not an SQLite database)", location=path)


def _connect_read_only(path: str) -> sqlite3.Connection:
    uri = "file:" + quote(os.path.abspath(path)) + "?mode=ro"
    if not os.path.exists(path + "-wal"):
        uri += "&immutable=1"  # nobody has it open: read it as it is, creating no sidecar files
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA query_only = 1")
    except sqlite3.Error as exc:
        raise StorageError(f"Session file {path} cannot be opened for reading ({exc})", location=path) from exc
    return conn


def _check_session(conn: sqlite3.Connection, path: str) -> int:
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if app_id != APPLICATION_ID:
        if tables:
            raise NotASession(f"{path} is an SQLite database of another program, not a durable session file",
                              location=path)
        raise NotASession(f"{path} is an empty SQLite database, not yet a durable session file", location=path)
    if "meta" not in tables:
        raise CorruptSession(f"Session file {path} has no meta table", location=path)
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    version = int(row[0]) if row else 0
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(path, version, SCHEMA_VERSION)
    missing = {"tasks", "entries", "submissions", "documents"} - tables
    if missing:
        raise CorruptSession(f"Session file {path} lacks the table(s) {', '.join(sorted(missing))}", location=path)
    return version


# --------------------------------------------------------------------------- sections


def _file_facts(conn: sqlite3.Connection, path: str, version: int) -> dict[str, Any]:
    wal = path + "-wal"
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    count = lambda table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: E731
    return {
        "path": os.path.abspath(path),
        "size_bytes": os.path.getsize(path),
        "wal_bytes": os.path.getsize(wal) if os.path.exists(wal) else 0,
        "page_size": page_size,
        "page_count": pages,
        "schema_version": version,
        "supported_schema_version": SCHEMA_VERSION,
        "journal_mode": _journal_mode(path),
        # `synchronous` is a setting of each connection, not of the file: the owner sets it when
        # it opens. What the owner chose is not recorded, so this is the library default.
        "synchronous": DEFAULT_SYNCHRONOUS,
        "synchronous_source": "the library default; set per connection by the owner, not stored in the file",
        "owner_pid": owner_of(path),
        "counts": {
            "conversations": count("documents"),
            "entries": count("entries"),
            "submissions": count("submissions"),
            "tasks": count("tasks"),
            "live_tasks": conn.execute("SELECT COUNT(*) FROM tasks WHERE live = 1").fetchone()[0],
        },
    }


def _journal_mode(path: str) -> str:
    # Bytes 18 and 19 of the header are the read and write format versions: 2 means WAL. Read
    # from the file, because a read-only immutable connection reports its own mode.
    with open(path, "rb") as f:
        header = f.read(20)
    return "wal" if header[18:20] == b"\x02\x02" else "rollback journal"


def _conversations(conn: sqlite3.Connection, last: int) -> list[dict[str, Any]]:
    ids = [r[0] for r in conn.execute(
        "SELECT conversation_id FROM documents UNION SELECT DISTINCT conversation_id FROM entries ORDER BY 1")]
    out = []
    for cid in ids:
        count, last_seq = conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM entries WHERE conversation_id = ?", (cid,)).fetchone()
        rows = conn.execute(
            "SELECT seq, body FROM entries WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?", (cid, last)).fetchall()
        entries = [{"seq": seq, **_json(body, f"Entry {seq} of conversation {cid!r}")} for seq, body in reversed(rows)]
        out.append({"id": cid, "entry_count": count, "last_seq": last_seq, "entries": entries})
    return out


def _submissions(conn: sqlite3.Connection, last: int) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, body FROM submissions WHERE status = 'queued' UNION ALL "
        "SELECT id, body FROM (SELECT id, body FROM submissions WHERE status != 'queued' "
        "ORDER BY rowid DESC LIMIT ?)", (last,)).fetchall()
    subs = []
    for sid, body in rows:
        data = _json(body, f"Submission {sid}")
        status = data.get("status") or {}
        subs.append({
            "id": sid,
            "conversation_id": data.get("conversation_id"),
            "text": data.get("text"),
            "status": status.get("type"),
            "reason": status.get("reason"),
            "detail": status.get("detail"),
            "task_id": data.get("task_id"),
            "seq": data.get("seq"),
            "created_at": data.get("created_at"),
        })
    subs.sort(key=lambda s: (s["created_at"] or 0, s["id"]))
    return subs


def _tasks(conn: sqlite3.Connection, last: int) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, body FROM tasks WHERE live = 1 UNION "
        "SELECT id, body FROM (SELECT id, body FROM tasks WHERE live = 0 ORDER BY id DESC LIMIT ?) ORDER BY 1",
        (last,)).fetchall()
    return [_task(tid, _json(body, f"Task {tid}")) for tid, body in rows]


def _task(tid: int, data: dict[str, Any]) -> dict[str, Any]:
    state = data.get("state") or {}
    checkpoint = data.get("checkpoint") or {}
    outcome = state.get("outcome") if state.get("type") == "terminal" else None
    error = (outcome or {}).get("error")
    inp = data.get("input") or {}
    call = inp.get("call") if inp.get("type") == "tool" else None
    return {
        "id": tid,
        "kind": data.get("kind"),
        "conversation_id": data.get("conversation_id"),
        "parent_id": data.get("parent_id"),
        "state": state.get("type"),
        "until": state.get("until"),
        "waiting_on": list(state.get("on") or ()) if state.get("type") == "waiting" else None,
        "phase": checkpoint.get("type"),
        "attempt": checkpoint.get("attempt"),
        "restarts": data.get("restarts", 0),
        "stop": data.get("stop"),
        "outcome": outcome.get("type") if outcome else None,
        "error": ({"message": error.get("message"), "reason": (error.get("detail") or {}).get("reason")}
                  if error else None),
        "tool": {"name": call.get("name"), "call_id": call.get("id"), "replay": inp.get("replay"),
                 "client": inp.get("client", False)} if call else None,
        "inputs": list(inp.get("submission_ids") or ()) if inp.get("type") == "generation" else None,
        "updated_at": data.get("updated_at"),
    }


def _live(conn: sqlite3.Connection) -> dict[str, Any]:
    return {cid: _json(body, f"Live document of conversation {cid!r}")
            for cid, body in conn.execute("SELECT conversation_id, body FROM documents ORDER BY conversation_id")}


def _json(body: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise CorruptSession(f"{what} cannot be read: not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise CorruptSession(f"{what} cannot be read: expected an object")
    return value


# --------------------------------------------------------------------------- the owner


def owner_of(path: str) -> int | None:
    """The pid of the process that owns the session file, or None. The lock is on the database
    file itself (see `durable.storage._lock`): on Linux the owner is found in `/proc/locks`, never
    by taking the lock; elsewhere `owner_pid` probes with a shared lock for an instant.
    -1: owned, by a process whose pid cannot be seen."""
    from .storage._lock import owner_pid

    return owner_pid(path)
