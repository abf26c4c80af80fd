"""Reading a conversation's model context from a session file (`SQLiteStorage.get_context`).

A long conversation's context is thousands of rows, read once per process when the conversation
first runs (the first turn after an open). Handing SQLite's rows to Python one by one costs more
than reading them, so the context is read a chunk of seqs at a time, each chunk as one row (its
bodies joined, its first and last seq and its token total) split back in C; only a context holding
an uncounted or damaged row is read row by row. Chunks rather than the whole context in one row:
one joined text of a long context is built in buffers SQLite grows by doubling and copied into a
Python string, all new memory that a fresh process pays for in page faults; a chunk's buffers are
small and reused by the next (figures in benchmarks/README.md).

A context from the conversation's first seq to its last (none compacted yet) takes its count and
token total from the `conversations` row (schema 9) instead of adding up its rows; no body is
looked into (damage inside one is found when the engine decodes that entry).
"""

from __future__ import annotations

import json
import sqlite3

from .. import rows, sealing
from ..joined import SEP, JoinedTexts
from ..protocol import RawContext
from ..rows import CONTEXT_ROWS

_CONTEXT_ROWS = f"FROM entries WHERE conversation_id = ? AND seq BETWEEN ? AND ? AND {CONTEXT_ROWS}"
# The bodies are joined with a record separator, which a JSON text never holds unescaped (a body
# that does, damaged, makes the split come out with more bodies than rows).
_CONTEXT_JOINED = ("SELECT count(*), count(tokens), coalesce(sum(tokens), 0), min(seq), max(seq), "
                   f"group_concat(body, '{SEP}') {_CONTEXT_ROWS}")
# The same when the count and the total are known (`_stored_totals`): the rows are not added up.
_BODIES_JOINED = f"SELECT count(*), count(tokens), 0, min(seq), max(seq), group_concat(body, '{SEP}') {_CONTEXT_ROWS}"
_TOTALS = ("SELECT c.entries, c.tokens, (SELECT max(seq) FROM entries WHERE conversation_id = c.conversation_id) "
           "FROM conversations c WHERE c.conversation_id = ?")
# A chunk's seqs, read only when they are not every seq from its first to its last (the rows are
# unique by seq: as many rows as that span means no gap). Joining and parsing them cost ~1.7 ms
# at 3,500 turns, where no chunk has a gap.
_CONTEXT_SEQS = f"SELECT group_concat(seq) {_CONTEXT_ROWS}"
_NEXT_SEQ = f"SELECT seq {_CONTEXT_ROWS} ORDER BY seq LIMIT 1"
_CHUNK = 512
"""Seqs a chunk spans: its joined text stays small (~80 KB of bodies), so the buffers of one chunk
are reused by the next instead of faulting in fresh pages, and the queries stay few (23 at
3,500 turns; 256 to 1,024 measured alike)."""
_READ_CACHE_PAGES = 64
"""SQLite's page cache while a context longer than a chunk is read: its pages are read once, and
caching them (up to the connection's 2 MB) would fault in a new page of memory for each (~600
page faults at 3,500 turns). The connection's own size is set back after the read."""


def read_context(conn: sqlite3.Connection, conversation_id: str, from_seq: int, to_seq: int,
                 location: str = "") -> RawContext:
    """`SQLiteStorage.get_context`, on the writer thread (no commit comes between its queries).
    When every row was counted, each chunk's joined text splits back into as many bodies as the
    chunk has rows and the seqs come in order (the order of the primary key, which SQLite reads
    them in; checked all the same), the context is returned with its token total. Any other (an
    uncounted row, one holding the separator, another order, a chunk longer than SQLite's longest
    string, a stored count that disagrees) is read again row by row (`rows.raw_context`)."""
    if to_seq - from_seq < _CHUNK:
        return _read(conn, conversation_id, from_seq, to_seq, location)
    cache_size = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = {_READ_CACHE_PAGES}")
    try:
        return _read(conn, conversation_id, from_seq, to_seq, location)
    finally:
        conn.execute(f"PRAGMA cache_size = {int(cache_size)}")


def _stored_totals(conn: sqlite3.Connection, conversation_id: str, from_seq: int,
                   to_seq: int) -> tuple[int, int] | None:
    """The count and token total of the context rows from `from_seq` to `to_seq` as the
    `conversations` row holds them: known when the range covers every seq of the conversation
    and every row was counted; None otherwise (the rows are added up as they are read)."""
    if from_seq > 1:
        return None
    row = conn.execute(_TOTALS, (conversation_id,)).fetchone()
    if row is None or row[1] is None or (row[2] or 0) > to_seq:
        return None
    return row[0], row[1]


def _read(conn: sqlite3.Connection, conversation_id: str, from_seq: int, to_seq: int, location: str) -> RawContext:
    seqs: list[int] = []
    parts: list[str] = []
    counts: list[int] = []
    known = _stored_totals(conn, conversation_id, from_seq, to_seq)
    query = _CONTEXT_JOINED if known is None else _BODIES_JOINED
    total = 0
    lo = from_seq
    while lo <= to_seq:
        hi = min(lo + _CHUNK - 1, to_seq)
        try:
            n, counted, tokens, first, last, joined = conn.execute(query, (conversation_id, lo, hi)).fetchone()
        except sqlite3.DataError:  # longer joined than SQLite's longest string (SQLITE_TOOBIG)
            return _row_by_row(conn, conversation_id, from_seq, to_seq, location)
        if n == 0:  # a gap in the seqs: on to the next row of the context, if any
            row = conn.execute(_NEXT_SEQ, (conversation_id, hi + 1, to_seq)).fetchone() if hi < to_seq else None
            if row is None:
                break
            lo = row[0]
            continue
        if counted != n or joined.count(SEP) != n - 1:  # an uncounted row, or one holding the separator
            return _row_by_row(conn, conversation_id, from_seq, to_seq, location)
        parts.append(joined)
        counts.append(n)
        if last - first + 1 == n:
            seqs += range(first, last + 1)
        else:  # integers joined with commas: a JSON array's inside
            seqs += json.loads(f"[{conn.execute(_CONTEXT_SEQS, (conversation_id, lo, hi)).fetchone()[0]}]")
        total += tokens
        lo = hi + 1
    if known is not None:
        if known[0] != len(seqs):  # the stored count disagrees with the rows: add them up instead
            return _row_by_row(conn, conversation_id, from_seq, to_seq, location)
        total = known[1]
    # Split a part at a time when first read; sealed bodies opened (`durable.storage.sealing`).
    opened = sealing.plain_all(JoinedTexts(parts, counts), location)
    if seqs == sorted(seqs):
        return RawContext(seqs, opened, total)
    return _row_by_row(conn, conversation_id, from_seq, to_seq, location)


def _row_by_row(conn: sqlite3.Connection, conversation_id: str, from_seq: int, to_seq: int,
                location: str) -> RawContext:
    found = conn.execute(f"SELECT seq, tokens, body {_CONTEXT_ROWS} ORDER BY seq",
                         (conversation_id, from_seq, to_seq)).fetchall()
    return rows.raw_context([r[0] for r in found], [r[1] for r in found], [r[2] for r in found], location)


__all__ = ["read_context"]
