"""Descriptors of a session file that durable opens itself, closed without dropping the SQLite
locks of this process.

SQLite locks the database and its -shm with POSIX (fcntl) locks, which belong to the process and
the file: closing any descriptor of the file in this process drops them all, those of every
SQLite connection of the process included. In WAL mode a connection holds a shared lock on the
database for as long as it is open: it keeps another process's last connection from
checkpointing and deleting the WAL on its close (a connection of this process still writing into
it would then commit into a deleted file: invisible to others, lost at the next kill); its lock
on the -shm keeps another process from re-initialising the -shm under it.

SQLite never closes a descriptor while another of its connections in the process holds a lock on
the file; `close` does the same for durable's own descriptors (the owner's lock on the database,
the checks of -wal and -shm, a header read): it closes at once when no connection made by
`connect` is open on the file in this process, otherwise when the last of them closes. Files are
known by (device, inode); a -shm descriptor is kept under its database's. Connections a program
makes itself (`sqlite3.connect` on a session file) are not counted."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

Identity = tuple[int, int]

_guard = threading.Lock()
_connections: dict[Identity, int] = {}  # SQLite connections made by `connect` open on the file
_kept: dict[Identity, list[int]] = {}  # descriptors to close once the last of them is closed


def identity(st: os.stat_result) -> Identity:
    return (st.st_dev, st.st_ino)


def close(fd: int, of: Identity | None = None) -> None:
    """Close `fd`, a descriptor of the session file `of` (by default the file `fd` is open on)
    or of its -shm, -wal or -journal; kept open while a connection of this process is open on it."""
    if of is None:
        try:
            of = identity(os.fstat(fd))
        except OSError:
            os.close(fd)
            return
    with _guard:  # held while closing: a connection made meanwhile would lose the lock it takes
        if _connections.get(of):
            _kept.setdefault(of, []).append(fd)
        else:
            os.close(fd)


class Connection(sqlite3.Connection):
    """A connection counted under the identity of the file it was opened on (see `connect`)."""

    _durable_file: Identity | None = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            _forget(self)

    def __del__(self) -> None:  # a connection never closed: closed as it goes
        try:
            super().close()
        except Exception:  # noqa: BLE001  # e.g. from another thread than its own: SQLite closes it anyway
            pass
        finally:
            _forget(self)


def connect(path: str, database: str, **kwargs: Any) -> sqlite3.Connection:
    """`sqlite3.connect(database, **kwargs)` (database: `path` itself, or a URI naming it), counted
    under `path`'s identity until it is closed. A path that cannot be stat'ed is not counted."""
    try:
        of: Identity | None = identity(os.stat(path))
    except OSError:
        of = None
    if of is not None:
        with _guard:
            _connections[of] = _connections.get(of, 0) + 1
    try:
        conn = sqlite3.connect(database, factory=Connection, **kwargs)
    except BaseException:
        _release(of)
        raise
    assert isinstance(conn, Connection)
    conn._durable_file = of
    return conn


@contextmanager
def busy_timeout(conn: sqlite3.Connection, ms: int) -> Iterator[None]:
    """SQLite's busy timeout of `conn` is `ms` within the block, then what it was."""
    was = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute(f"PRAGMA busy_timeout = {int(ms)}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout = {was}")


def _forget(conn: Connection) -> None:
    of, conn._durable_file = conn._durable_file, None
    _release(of)


def _release(of: Identity | None) -> None:
    if of is None:
        return
    with _guard:
        left = _connections.get(of, 0) - 1
        if left > 0:
            _connections[of] = left
            return
        _connections.pop(of, None)
        for fd in _kept.pop(of, []):
            try:
                os.close(fd)
            except OSError:
                pass
