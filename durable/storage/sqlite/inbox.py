"""A session file's inbox: decisions on tool calls put there by another process (`durable console`).

The `inbox` table (migration 8 of `durable.storage.sqlite.schema`; `ensure_inbox` also makes it
when a file is opened, while the schema constant still says 7) holds one row per decision:
`id`, `call_id`, `created_at` and `body`, the JSON `durable.storage.protocol.InboxDecision`
reads. `put_decision` writes one in its own short transaction on a connection of its own (the
owner's lock is not taken, nothing else in the file is touched), refusing a call that no live
document lists as waiting for approval, or that already has a decision in the inbox (two tabs: one
wins). The owner (`SQLiteStorage`, an `Inbox`) takes the rows oldest first and deletes each in the
commit that applies it (`write.apply_rows`), so a crash before that commit leaves it for the next
open, and a decision is applied once.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any

from ...errors import ApprovalRejected, StorageError
from .. import rows, sealing
from ..protocol import InboxDecision
from . import descriptors

TABLE = ("CREATE TABLE IF NOT EXISTS inbox (id TEXT PRIMARY KEY, call_id TEXT NOT NULL, "
         "created_at REAL NOT NULL, body TEXT NOT NULL) STRICT")
_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'inbox'"


def ensure_inbox(conn: sqlite3.Connection) -> None:
    """Make the inbox table of an owned file, unless it has one (then nothing is written)."""
    if conn.execute(_EXISTS).fetchone() is None:
        conn.execute(TABLE)


def has_decisions(conn: sqlite3.Connection) -> bool:
    """Whether the inbox holds a decision (one index probe)."""
    found: int = conn.execute("SELECT EXISTS (SELECT 1 FROM inbox)").fetchone()[0]
    return found == 1


def take_decisions(conn: sqlite3.Connection, limit: int, location: str) -> list[InboxDecision]:
    """Up to `limit` decisions, oldest first; not deleted (the applying commit deletes them)."""
    found = conn.execute("SELECT id, body, created_at FROM inbox ORDER BY created_at, id LIMIT ?", (int(limit),))
    return [InboxDecision.of_row(i, body, at, location) for i, body, at in found.fetchall()]


def put_decision(path: str, call_id: str, *, approve: bool, arguments: str | None = None,
                 reason: str = "") -> str:
    """Put a decision on the tool call `call_id` in the inbox of the session file at `path`, in
    one short transaction of its own; returns its row id once committed. `ApprovalRejected`
    when no live document lists the call as waiting for approval or it already has a decision;
    `StorageError` when the file has no inbox (its owner runs an older durable) or cannot be written."""
    body = json.dumps({"call_id": call_id, "approve": approve, "arguments": arguments, "reason": reason},
                      ensure_ascii=False)
    sealer = sealing.sealer_of(path)  # an encrypted file (its key registered by the caller's reader)
    if sealer is not None:
        body = sealer.seal(body)  # edited arguments are a tool's arguments: never plain in the file
    import uuid  # only a console or a remote decision needs it

    did = f"dec_{uuid.uuid4().hex[:16]}"
    try:
        conn = descriptors.connect(path, path, isolation_level=None, timeout=5.0)
    except sqlite3.Error as exc:
        raise StorageError(f"The inbox of {path} cannot be opened ({exc})", location=path) from exc
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute(_EXISTS).fetchone() is None:
                raise StorageError(f"Session file {path} has no inbox: its owner must run a durable that "
                                   "reads one to take decisions from the console", location=path)
            if not _waiting(conn, call_id, path):
                raise ApprovalRejected(f"No tool call {call_id} waits for a decision in {path}; nothing was "
                                       "decided", call_id=call_id)
            if conn.execute("SELECT 1 FROM inbox WHERE call_id = ?", (call_id,)).fetchone() is not None:
                raise ApprovalRejected(f"Tool call {call_id} in {path} was already decided (another decision "
                                       "is in its inbox); nothing was decided", call_id=call_id)
            conn.execute("INSERT INTO inbox (id, call_id, created_at, body) VALUES (?,?,?,?)",
                         (did, call_id, time.time(), body))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise StorageError(f"A decision could not be put in the inbox of {path} ({exc})", location=path) from exc
    finally:
        conn.close()
    return did


def _waiting(conn: sqlite3.Connection, call_id: str, path: str) -> bool:
    found: list[Any] = conn.execute("SELECT conversation_id, body FROM documents").fetchall()
    return any(slot.call_id == call_id for cid, body in found for slot in rows.live(body, cid, path).approvals)


PROBE_WAIT_MS = 50
"""How long `first_look`'s probe waits for the WAL write lock: a commit another process is
writing (a decision put from the console: one short transaction) ends within it as a rule, and
the look then covers it; one still writing after it counts as held (the next look probes again)."""


def stamp(path: str) -> tuple[int, ...]:
    """The file's and its WAL's modification times and sizes (0 for one that is missing): what
    an owner looks at before it probes its inbox (`SQLiteStorage.wait_inbox`)."""
    out: list[int] = []
    for name in (path, path + "-wal"):
        try:
            st = os.stat(name)
        except OSError:
            out += [0, 0]
        else:
            out += [st.st_mtime_ns, st.st_size]
    return tuple(out)


def first_look(conn: sqlite3.Connection, path: str,
               stamped: tuple[int, ...] | None = None) -> tuple[tuple[int, ...] | None, bool]:
    """The owner's look at its inbox, on its writer thread (`conn`: the owner's connection, in no
    transaction): (`stamped`, the `stamp` taken before the look (by default now), as seen by this
    look, or None when it may have missed a commit it stamps; whether the inbox holds a decision).

    The stamp counts as seen only once a probe surely covered it. A commit's frames change the
    WAL's time and size before the commit is fsynced and visible (a decision is put at FULL), so
    while another connection holds the WAL write lock (`write_locked`) the next look probes again.
    And a time is a kernel tick and a rewritten WAL keeps its size: a commit in the tick of this
    look would look like no change, so a file changed within the last 50 ms is probed again at the
    next look too."""
    if stamped is None:
        stamped = stamp(path)
    recent = time.time_ns() - max(stamped[0], stamped[2]) < 50_000_000
    seen = None if recent or write_locked(conn) else stamped
    return seen, has_decisions(conn)


def write_locked(conn: sqlite3.Connection) -> bool:
    """Whether another connection holds the file's WAL write lock (SQLite's writer holds it from
    BEGIN to the end of its commit): `BEGIN IMMEDIATE` waiting `PROBE_WAIT_MS` at most, rolled back
    at once (nothing is written). A probe on the connection, not a read of /proc/locks (~10 ms
    after a pause on a loaded machine, and only on Linux)."""
    with descriptors.busy_timeout(conn, PROBE_WAIT_MS):
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname.startswith("SQLITE_BUSY"):
                return True
            raise
    conn.execute("ROLLBACK")
    return False


__all__ = ["PROBE_WAIT_MS", "TABLE", "ensure_inbox", "first_look", "has_decisions", "put_decision", "stamp",
           "take_decisions", "write_locked"]
