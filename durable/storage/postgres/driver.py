"""The PostgreSQL store's use of psycopg 3: importing it lazily (an optional extra), naming the
server without its password, connecting with the session settings a lease owner needs (`Link`:
the writer's connection, made again when it broke), and telling a lost connection from an error
about a statement.

psycopg is used synchronously, on the store's writer thread only (psycopg's async connection does
not run under trio; a sync connection in a thread works under trio and asyncio alike).
"""

from __future__ import annotations

import importlib
import os
import time
from types import ModuleType
from typing import Any

from attrs import define

from ...errors import MissingExtra, ServerUnavailable

EXTRA = "postgres"

# The SQLSTATE the fence function raises when this store's epoch no longer holds the lease.
FENCE_SQLSTATE = "DU001"


def import_psycopg() -> ModuleType:
    """psycopg, or `MissingExtra` saying `pip install "durable-harness[postgres]"`."""
    try:
        return importlib.import_module("psycopg")
    except ImportError as exc:
        detail = None if exc.name == "psycopg" else str(exc)
        raise MissingExtra("PostgresStorage", "psycopg", EXTRA, detail) from exc


def server_name(dsn: str) -> tuple[str, str | None]:
    """`host:port/dbname` of a DSN (what libpq would use, environment defaults included), and its
    password (to be kept out of every message)."""
    psycopg = import_psycopg()
    try:
        params: dict[str, Any] = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise ValueError(f"Not a PostgreSQL connection string: {hide(str(exc), None)}") from None
    host = str(params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "localhost")
    port = str(params.get("port") or os.environ.get("PGPORT") or "5432")
    user = params.get("user") or os.environ.get("PGUSER")
    dbname = str(params.get("dbname") or os.environ.get("PGDATABASE") or user or "postgres")
    password = params.get("password") or None
    return f"{host}:{port}/{dbname}", (str(password) if password else None)


def space_at(dsn: str, space: object) -> tuple[str, str | None, str]:
    """A space on a server, checked: its server (`server_name`), the DSN's password, and the
    location every message names (`space 'x' on postgresql://host:port/db`)."""
    if not isinstance(space, str) or not space or "\x00" in space:
        raise ValueError(f"A space is a non-empty string without NUL, not {space!r}")
    server, password = server_name(dsn)  # imports psycopg (MissingExtra)
    return server, password, f"space {space!r} on postgresql://{server}"


def hide(text: str, password: str | None) -> str:
    """`text` with the password (if any) blanked out."""
    return text.replace(password, "***") if password else text


def connect(dsn: str, *, server: str, space: str, password: str | None, connect_timeout: float,
            lease_seconds: float | None) -> Any:
    """An autocommit connection (transactions are explicit BEGIN ... COMMIT). For a lease owner
    (`lease_seconds` given) the server ends the session when it idles inside a transaction for a
    lease (a paused owner cannot hold the lease row's lock, and so a takeover, for longer), and
    the client gives up on a server that acknowledges nothing for a lease (`tcp_user_timeout`).
    Raises `ServerUnavailable` naming the server and the space."""
    psycopg = import_psycopg()
    extra: dict[str, Any] = {"connect_timeout": max(2, round(connect_timeout)),
                             "application_name": f"durable:{space}"[:63]}
    if lease_seconds is not None:
        extra.update(keepalives=1, keepalives_idle=max(1, round(lease_seconds / 3)), keepalives_interval=1,
                     keepalives_count=3, tcp_user_timeout=max(1000, round(lease_seconds * 1000)))
    try:
        conn = psycopg.connect(dsn, autocommit=True, **extra)
    except psycopg.Error as exc:
        raise ServerUnavailable(
            f"Cannot connect to the PostgreSQL server {server} for space {space!r}: "
            f"{hide(' '.join(str(exc).split()), password)}", location=f"space {space!r} on postgresql://{server}",
        ) from None
    try:
        conn.execute("SET TIME ZONE 'UTC'")
        if lease_seconds is not None:
            conn.execute(f"SET idle_in_transaction_session_timeout = {max(1000, round(lease_seconds * 1000))}")
    except BaseException:
        close_quietly(conn)
        raise
    return conn


@define
class Link:
    """A store's connection to the server (`conn`: None until made, or after it broke), made
    again when it is gone, with the settings of a lease owner of `space`."""

    dsn: str
    server: str
    space: str
    password: str | None
    connect_timeout: float
    lease_seconds: float
    conn: Any = None

    def connect(self, *, lease: bool = True) -> Any:
        """A new connection: a lease owner's, or (`lease` False) a reader's of its own."""
        return connect(self.dsn, server=self.server, space=self.space, password=self.password,
                       connect_timeout=self.connect_timeout, lease_seconds=self.lease_seconds if lease else None)

    def ensure(self, until: float) -> Any:
        """The connection, made again if it is gone (trying until `until`, monotonic; then
        `ServerUnavailable`)."""
        if self.conn is not None and not self.conn.broken and not self.conn.closed:
            return self.conn
        self.drop()
        delay = 0.05
        while True:
            try:
                self.conn = self.connect()
                return self.conn
            except ServerUnavailable:
                if time.monotonic() + delay > until:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def drop(self) -> None:
        """Forget the connection, closing it."""
        conn, self.conn = self.conn, None
        if conn is not None:
            close_quietly(conn)


def close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception:  # noqa: BLE001 - a broken connection may fail to close; it is gone either way
        pass


def is_connection_error(exc: BaseException, conn: Any) -> bool:
    """Whether `exc` means the connection is gone (the outcome of what was sent is unknown), as
    opposed to the server refusing a statement."""
    psycopg = import_psycopg()
    if conn is not None and getattr(conn, "broken", False):
        return True
    if conn is not None and getattr(conn, "closed", False):
        return True
    return isinstance(exc, psycopg.OperationalError) and getattr(exc, "sqlstate", None) in (
        None, "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004")


def rollback(conn: Any) -> None:
    """Roll back the connection's open transaction, if any (best effort: it may be gone)."""
    psycopg = import_psycopg()
    try:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")
    except psycopg.Error:
        pass


def storable(*keys: str | int | None) -> bool:
    """Whether every key could be in the space: text without NUL that is valid UTF-8 (no lone
    surrogate), integers of 64 bits. A read by any other key finds nothing (it was never stored)."""
    for key in keys:
        if isinstance(key, str):
            if "\x00" in key:
                return False
            try:
                key.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(key, int) and not -(1 << 63) <= key < (1 << 63):
            return False
    return True
