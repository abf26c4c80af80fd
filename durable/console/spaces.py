"""The console over PostgreSQL session spaces (`durable console --dsn DSN --space PATTERN`).

`Spaces(dsn, pattern)` is the list of the spaces whose name matches the SQL LIKE `pattern` (those
with a lease row or a live document), looked up again when the page asks for the list: a new space
is appended, so indexes stay. Each is a `SpaceSource`: what the space's owner committed, read on
one connection the console shares (psycopg in a worker thread; each look one REPEATABLE READ READ
ONLY transaction; the schema is never migrated, a database without durable's or with a newer one
is refused). A commit is noticed by the lease row's commit count (`durable.fence()` counts every
commit). A decision goes into the space's inbox as `durable.remote` puts it (a row with a
`decision`, then `NOTIFY durable_inbox`), in a transaction holding an advisory lock on the space's
decisions that refuses a call no live document lists as waiting or that already has a decision
there (two tabs: one wins, the other is told); the owner applies it once, in the commit that
deletes the row. That inbox row is the only thing the console writes.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from .. import records as r
from ..errors import SchemaTooNew, ServerUnavailable, StorageError
from ..storage import rows
from ..storage.postgres import decisions, driver
from ..storage.postgres.schema import PG_SCHEMA_VERSION
from ..storage.texts import stream_texts
from .sources import ENDED_SHOWN, FIRST_SHOWN, check_edit
from .views import Recovery, entry_data, session_state, warm_prices

T = TypeVar("T")

_SPACES = ("SELECT space FROM durable.leases WHERE space LIKE %(p)s UNION "
           "SELECT DISTINCT space FROM durable.documents WHERE space LIKE %(p)s ORDER BY 1")
_LEASE = ("SELECT epoch, commits, pid, host, expires_at > clock_timestamp() FROM durable.leases "
          "WHERE space = %s")


class NoDurableSchema(StorageError):
    """The database `durable console --dsn` was given holds no durable session spaces (no schema)."""


class Database:
    """One connection to the server for the whole console (made again once if it broke)."""

    def __init__(self, dsn: str, *, connect_timeout: float = 10.0) -> None:
        self.dsn = dsn
        self.server, self.password = driver.server_name(dsn)
        self.location = f"postgresql://{self.server}"
        self.connect_timeout = connect_timeout
        self._conn: Any = None
        self._lock = threading.Lock()

    async def run(self, fn: Callable[[Any], T], what: str) -> T:
        return await anyio.to_thread.run_sync(self.run_sync, fn, what)

    def run_sync(self, fn: Callable[[Any], T], what: str) -> T:
        psycopg = driver.import_psycopg()
        with self._lock:
            for attempt in (1, 2):  # once more on a new connection if it broke (reads; a decision's id is fixed)
                if self._conn is None or self._conn.closed or self._conn.broken:
                    self._connect()
                try:
                    return fn(self._conn)
                except psycopg.Error as exc:
                    detail = driver.hide(" ".join(str(exc).split()), self.password)
                    if not driver.is_connection_error(exc, self._conn):
                        driver.rollback(self._conn)
                        raise StorageError(f"{what.capitalize()} on {self.location} failed: {detail}",
                                           location=self.location) from None
                    self.close()
                    if attempt == 2:
                        raise ServerUnavailable(f"The connection to the PostgreSQL server {self.server} was lost "
                                                f"{what} ({detail})", location=self.location) from None
        raise AssertionError("unreachable")

    def _connect(self) -> None:
        self.close()
        conn = driver.connect(self.dsn, server=self.server, space="*console*", password=self.password,
                              connect_timeout=self.connect_timeout, lease_seconds=None)
        try:
            found = conn.execute("SELECT to_regclass('durable.meta') IS NOT NULL").fetchone()[0]
            row = conn.execute("SELECT value FROM durable.meta WHERE key = 'schema_version'").fetchone() \
                if found else None
            if row is None:
                raise NoDurableSchema(f"The database at {self.location} holds no durable session spaces (no "
                                      "durable schema)", location=self.location)
            if int(row[0]) > PG_SCHEMA_VERSION:
                raise SchemaTooNew(self.location, int(row[0]), PG_SCHEMA_VERSION)
        except BaseException:
            driver.close_quietly(conn)
            raise
        self._conn = conn

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            driver.close_quietly(conn)


class Spaces(list["SpaceSource"]):
    """The spaces matching `pattern` on the server at `dsn`, one `SpaceSource` each, in the order
    they were found (`refresh` appends new ones)."""

    def __init__(self, dsn: str, pattern: str = "%") -> None:
        super().__init__()
        warm_prices()
        self.db = Database(dsn)
        self.pattern = pattern
        self._refreshed = 0.0

    def refresh_sync(self) -> None:
        names = self.db.run_sync(lambda c: [s for (s,) in c.execute(_SPACES, {"p": self.pattern}).fetchall()],
                                 "listing the spaces")
        known = {s.space for s in self}
        self.extend(SpaceSource(self.db, name) for name in names if name not in known)
        self._refreshed = time.monotonic()

    async def refresh(self) -> None:
        """Look for new spaces (at most once a second)."""
        if time.monotonic() - self._refreshed >= 1.0:
            await anyio.to_thread.run_sync(self.refresh_sync)


class SpaceSource:
    """A session space another process owns (or nobody does), read-only but for its inbox."""

    def __init__(self, db: Database, space: str) -> None:
        self.db = db
        self.space = space
        self.name = space
        self.location = f"space {space!r} on {db.location}"
        self._cached: tuple[object, dict[str, Any]] | None = None
        self._recovery: dict[str, tuple[int, Recovery]] = {}
        self._lock: anyio.Lock | None = None

    async def version(self) -> object:
        return await self.db.run(lambda c: c.execute(_LEASE, (self.space,)).fetchone(), "reading a lease")

    async def state(self) -> dict[str, Any]:
        self._lock = self._lock or anyio.Lock()
        async with self._lock:
            version = await self.version()
            if self._cached is None or self._cached[0] != version:
                self._cached = (version, await self.db.run(self._read_state, "reading a space"))
            return self._cached[1]

    def _read_state(self, c: Any) -> dict[str, Any]:
        with c.transaction():
            c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            lease = c.execute(_LEASE, (self.space,)).fetchone()
            owner = "not open" if lease is None or not lease[4] else f"owned by process {lease[2]} on {lease[3]}"
            live = _documents(c, self.space, self.location)
            found = c.execute(
                "SELECT id, body, texts FROM durable.tasks WHERE space = %(s)s AND live UNION ALL "
                "(SELECT id, body, texts FROM durable.tasks WHERE space = %(s)s AND NOT live ORDER BY id DESC "
                "LIMIT %(n)s) ORDER BY 1", {"s": self.space, "n": ENDED_SHOWN}).fetchall()
            streams = _streams(c, self.space) if any(t for _, _, t in found) else {}
            tasks = [rows.task(rows.joined_body(body, "task", texts, streams), tid, self.location)
                     for tid, body, texts in found]
            counts = dict(c.execute("SELECT conversation_id, max(seq) FROM durable.entries WHERE space = %s "
                                    "GROUP BY conversation_id", (self.space,)).fetchall())
            story = Recovery()
            for cid, last in counts.items():
                seen, notes = self._recovery.get(cid, (0, Recovery()))
                if last > seen:
                    notes.read(_entries(c, self.space, self.location, cid, seen, None))
                    self._recovery[cid] = (last, notes)
            for _, notes in self._recovery.values():
                story.notes += notes.notes
        return session_state(name=self.name, location=self.location, owner=owner, live=live, tasks=tasks,
                             entry_counts=counts, recovery=story)

    async def entries(self, conversation_id: str, after: int) -> list[dict[str, Any]]:
        if not driver.storable(conversation_id):
            return []
        found = await self.db.run(lambda c: _entries(c, self.space, self.location, conversation_id, after,
                                                     FIRST_SHOWN), "reading entries")
        return [entry_data(e) for e in found]

    async def decide(self, call_id: str, *, approve: bool, arguments: str | None, reason: str) -> None:
        decision = {"call_id": call_id, "approve": approve, "arguments": arguments, "reason": reason}
        did = f"dec_{uuid.uuid4().hex[:16]}"

        def check(slot: r.ApprovalSlot) -> None:
            if approve:
                check_edit(slot, call_id, arguments)

        await self.db.run(lambda c: decisions.put_decision(c, self.space, self.location, did, decision, check),
                          "deciding a tool call")


def _streams(c: Any, space: str) -> dict[int, str]:
    return stream_texts(c.execute("SELECT id, body FROM durable.texts WHERE space = %s ORDER BY id", (space,)))


def _documents(c: Any, space: str, location: str) -> dict[str, r.Live]:
    """The space's live documents, their long texts joined back."""
    found = c.execute("SELECT conversation_id, body, texts FROM durable.documents WHERE space = %s "
                      "ORDER BY conversation_id", (space,)).fetchall()
    streams = _streams(c, space) if any(t for _, _, t in found) else {}
    return {cid: rows.live(rows.joined_body(body, "live", texts, streams), cid, location)
            for cid, body, texts in found}


def _entries(c: Any, space: str, location: str, cid: str, after: int, last: int | None) -> list[r.StoredEntry]:
    """Entries of `cid` after seq `after`, in order; `last`: only the newest that many."""
    if last is None:
        found = c.execute("SELECT seq, body FROM durable.entries WHERE space = %s AND conversation_id = %s AND "
                          "seq > %s ORDER BY seq", (space, cid, after)).fetchall()
    else:
        found = c.execute("SELECT seq, body FROM durable.entries WHERE space = %s AND conversation_id = %s AND "
                          "seq > %s ORDER BY seq DESC LIMIT %s", (space, cid, after, last)).fetchall()[::-1]
    return [rows.entry(cid, seq, body, location) for seq, body in found]


__all__ = ["Database", "NoDurableSchema", "SpaceSource", "Spaces"]
