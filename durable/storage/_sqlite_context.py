"""Reading a conversation's model context from a session file (`SQLiteStorage.get_context`).

A long conversation's context is thousands of rows, read once per process when the conversation
first runs: the first turn after an open. Handing SQLite's rows to Python one by one costs more
than reading them, so the context is read as one row (its bodies joined, with their seqs and
their token total) and split back in C; only a context holding an uncounted or damaged row is
read row by row.
"""

from __future__ import annotations

import sqlite3

from ..tokens import NOT_SENT
from . import _rows
from .protocol import RawContext

_CONTEXT_ROWS = ("FROM entries WHERE conversation_id = ? AND seq BETWEEN ? AND ? AND kind != 'compaction' "
                 f"AND (tokens IS NULL OR tokens != {NOT_SENT})")
# The bodies are joined with a record separator, which a JSON text never holds unescaped (a body
# that does, damaged, makes the split come out with more bodies than rows).
_CONTEXT_JOINED = ("SELECT count(*), count(tokens), coalesce(sum(tokens), 0), group_concat(seq), "
                   f"group_concat(body, '\x1e') {_CONTEXT_ROWS}")


def read_context(conn: sqlite3.Connection, conversation_id: str, from_seq: int, to_seq: int) -> RawContext:
    """`SQLiteStorage.get_context`, on the writer thread. When every row was counted and the
    joined text splits back into as many framed bodies as there are rows, joined in seq order (the
    order of the primary key, which SQLite reads them in; checked all the same), the context is
    returned with its token total. Any other (an uncounted or damaged row, another order, a context
    longer than SQLite's longest string) is read again row by row, and its rows checked one by one
    (`_rows.raw_context`)."""
    args = (conversation_id, from_seq, to_seq)
    try:
        n, counted, total, seqs_text, joined = conn.execute(_CONTEXT_JOINED, args).fetchone()
    except sqlite3.DataError:  # longer joined than SQLite's longest string (SQLITE_TOOBIG)
        n = -1
    if n == 0:
        return RawContext([], [], 0)
    if n > 0:
        bodies = joined.split("\x1e")
        if counted == n == len(bodies) and _rows.all_framed(bodies):
            seqs = list(map(int, seqs_text.split(",")))
            if seqs == sorted(seqs):
                return RawContext(seqs, bodies, total)
    rows = conn.execute(f"SELECT seq, tokens, body {_CONTEXT_ROWS} ORDER BY seq", args).fetchall()
    return _rows.raw_context([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])


__all__ = ["read_context"]
