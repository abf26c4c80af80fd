"""What the SQLite store's background integrity check runs (`SQLiteStorage.check_integrity`):
the statements of its slices, and the priority of its thread."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading

MAX_PROBLEMS = 20  # problems a check reports at most (the first ones found)


def integrity_slices(conn: sqlite3.Connection) -> list[str]:
    """The statements of a sliced `integrity_check`: the schema table (with the freelist), then each
    table with its indexes, largest last: the whole-file check but for pages of no table (a leak)."""
    tables = [name for (name,) in conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    tables.sort(key=lambda name: name == "entries")  # the largest, as a rule
    return [f"PRAGMA integrity_check({_quoted(name)})" for name in ["sqlite_schema", *tables]]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def background_priority() -> None:
    """Lower the priority of the calling thread (Linux: the nice value is per thread), so a check
    in the background takes the CPU the harness leaves free, not the first turns' after an open.
    Linux only (elsewhere a thread id may be another process's pid); best effort."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:
            pass

