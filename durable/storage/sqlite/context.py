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
looked into (damage inside one is found when the engine decodes that entry). Long bodies stored
packed (schema 10: `durable.storage.packing`) are unpacked as their part is read: the engine is
given JSON.
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Callable
from itertools import islice
from operator import lt

from ...errors import CorruptSession
from .. import rows, sealing
from ..joined import SEP, JoinedTexts, StreamedSeqs, StreamedTexts, compact_seqs
from ..packing import unpack, unpack_joined
from ..protocol import RawContext
from ..rows import CONTEXT_ROWS
from .failures import read_error

_CONTEXT_ROWS = f"FROM entries WHERE conversation_id = ? AND seq BETWEEN ? AND ? AND {CONTEXT_ROWS}"
# The bodies are joined with a record separator, which a JSON text never holds unescaped (a body
# that does, damaged, makes the split come out with more bodies than rows).
_CONTEXT_JOINED = ("SELECT count(*), count(tokens), coalesce(sum(tokens), 0), min(seq), max(seq), "
                   f"group_concat(body, '{SEP}') {_CONTEXT_ROWS}")
# The same when the count and the total are known (`_stored_totals`): the rows are not added up.
_BODIES_JOINED = f"SELECT count(*), count(tokens), 0, min(seq), max(seq), group_concat(body, '{SEP}') {_CONTEXT_ROWS}"
_TOTALS = ("SELECT c.entries, c.tokens, c.attachments, "
           "(SELECT max(seq) FROM entries WHERE conversation_id = c.conversation_id) "
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
_PART = 128
"""Seqs a part of a streamed context spans (`_Stream`): a commit that comes while a part is read
waits for it, so a part is a quarter of a chunk (at 3,500 turns, 92 parts instead of 23, read in
about the same total time; 64 took longer). Fresh processes at 3,500 turns, 10 interleaved
rounds on a loaded machine: cold / warm 2.27x at 512, 2.02x at 256, 1.98x at 128."""
_READ_CACHE_PAGES = 64
"""SQLite's page cache while a context longer than a chunk is read: its pages are read once, and
caching them (up to the connection's 2 MB) would fault in a new page of memory for each (~600
page faults at 3,500 turns). The connection's own size is set back after the read."""


Schedule = Callable[[Callable[[sqlite3.Connection], None] | None, StreamedTexts], None]
"""Queue a part of a streamed context on the writer thread, behind the jobs queued so far (the
store fails the texts instead when it is closed, and fails every unfinished one as it closes);
None: the stream ended (the store forgets it)."""
STREAM_FROM = 2 * _CHUNK
"""Seqs from which a context is streamed (when the store may): a shorter one is read at once."""


def read_context(conn: sqlite3.Connection, conversation_id: str, from_seq: int, to_seq: int,
                 location: str = "", schedule: Schedule | None = None) -> RawContext:
    """`SQLiteStorage.get_context`, on the writer thread (no commit comes between its queries).
    When every row was counted, each chunk's joined text splits back into as many bodies as the
    chunk has rows and the seqs come in order (the order of the primary key, which SQLite reads
    them in; checked all the same), the context is returned with its token total. Any other (an
    uncounted row, one holding the separator, another order, a chunk longer than SQLite's longest
    string, a stored count that disagrees) is read again row by row (`rows.raw_context`)."""
    if to_seq - from_seq < _CHUNK:
        return _read(conn, conversation_id, from_seq, to_seq, location)
    if schedule is not None and to_seq - from_seq >= STREAM_FROM:
        known = _stored_totals(conn, conversation_id, from_seq, to_seq)
        if known is not None and known[2] == 0:  # counted, and no attachment to look for first
            texts = StreamedTexts(known[0])
            part = _Stream(conversation_id, from_seq, to_seq, location, texts, schedule)
            schedule(part, texts)
            return RawContext(StreamedSeqs(texts), texts, known[1], 0)
    cache_size = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = {_READ_CACHE_PAGES}")
    try:
        return _read(conn, conversation_id, from_seq, to_seq, location)
    finally:
        conn.execute(f"PRAGMA cache_size = {int(cache_size)}")


def _stored_totals(conn: sqlite3.Connection, conversation_id: str, from_seq: int,
                   to_seq: int) -> tuple[int, int, int | None] | None:
    """The count, token total and attachments of the context rows from `from_seq` to `to_seq` as
    the `conversations` row holds them: known when the range covers every seq of the
    conversation and every row was counted; None otherwise (the rows are added up as they are
    read)."""
    if from_seq > 1:
        return None
    row = conn.execute(_TOTALS, (conversation_id,)).fetchone()
    if row is None or row[1] is None or (row[3] or 0) > to_seq:
        return None
    return row[0], row[1], row[2]


def _read(conn: sqlite3.Connection, conversation_id: str, from_seq: int, to_seq: int, location: str) -> RawContext:
    seqs = array("q")  # machine integers, not an int object each (`joined.compact_seqs`)
    parts: list[str] = []
    counts: list[int] = []
    known = _stored_totals(conn, conversation_id, from_seq, to_seq)
    query = _CONTEXT_JOINED if known is None else _BODIES_JOINED
    total = 0
    attachments: int | None = None
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
        parts.append(unpack_joined(joined))
        counts.append(n)
        if last - first + 1 == n:
            seqs.extend(range(first, last + 1))
        else:  # integers joined with commas: a JSON array's inside
            seqs.extend(json.loads(f"[{conn.execute(_CONTEXT_SEQS, (conversation_id, lo, hi)).fetchone()[0]}]"))
        total += tokens
        lo = hi + 1
    if known is not None:
        if known[0] != len(seqs):  # the stored count disagrees with the rows: add them up instead
            return _row_by_row(conn, conversation_id, from_seq, to_seq, location)
        total = known[1]
        attachments = known[2]
    # Split a part at a time when first read; packed bodies were unpacked as each part came
    # (`durable.storage.packing`), sealed ones are opened (`durable.storage.sealing`).
    opened = sealing.plain_all(JoinedTexts(parts, counts), location)
    if all(map(lt, seqs, islice(seqs, 1, None))):
        return RawContext(compact_seqs(seqs), opened, total, attachments)
    return _row_by_row(conn, conversation_id, from_seq, to_seq, location)


def _row_by_row(conn: sqlite3.Connection, conversation_id: str, from_seq: int, to_seq: int,
                location: str) -> RawContext:
    found = conn.execute(f"SELECT seq, tokens, body {_CONTEXT_ROWS} ORDER BY seq",
                         (conversation_id, from_seq, to_seq)).fetchall()
    return rows.raw_context([r[0] for r in found], [r[1] for r in found], [r[2] for r in found], location)


class _Stream:
    """The parts of a streamed context, each a job of the writer thread (`Schedule`) that reads
    one part (`_PART` seqs) into `texts` and queues the next: commits queued meanwhile go first.
    A part that would not split back out of its joined text (a row holding the separator:
    damaged) is read row by row; an error fails the stream (each reader of a text not given raises it); rows that
    disagree with the stored count fail it with `CorruptSession` naming the conversation."""

    def __init__(self, conversation_id: str, lo: int, hi: int, location: str, texts: StreamedTexts,
                 schedule: Schedule) -> None:
        self.conversation_id, self.lo, self.hi, self.location = conversation_id, lo, hi, location
        self.texts, self.schedule = texts, schedule

    def __call__(self, conn: sqlite3.Connection) -> None:
        try:
            cache_size = conn.execute("PRAGMA cache_size").fetchone()[0]
            conn.execute(f"PRAGMA cache_size = {_READ_CACHE_PAGES}")
            try:
                done = self._chunk(conn)
            finally:
                conn.execute(f"PRAGMA cache_size = {int(cache_size)}")
        except sqlite3.Error as exc:
            self.texts.fail(read_error(exc, "entries", self.location))
            done = True
        except BaseException as exc:  # noqa: BLE001 - handed to the readers of the texts
            self.texts.fail(exc)
            done = True
        self.schedule(None if done else self, self.texts)

    def _chunk(self, conn: sqlite3.Connection) -> bool:
        """Read the next chunk that holds rows into the texts; True when the stream ended."""
        cid, texts = self.conversation_id, self.texts
        while self.lo <= self.hi:
            lo, hi = self.lo, min(self.lo + _PART - 1, self.hi)
            try:
                n, _, _, first, last, joined = conn.execute(_BODIES_JOINED, (cid, lo, hi)).fetchone()
            except sqlite3.DataError:  # longer joined than SQLite's longest string
                n, joined = -1, ""
            if n == 0:  # a gap in the seqs: on to the next row of the context, if any
                row = conn.execute(_NEXT_SEQ, (cid, hi + 1, self.hi)).fetchone() if hi < self.hi else None
                self.lo = row[0] if row is not None else self.hi + 1
                continue
            self.lo = hi + 1
            if n < 0 or joined.count(SEP) != n - 1:  # read row by row (damaged: found when decoded)
                found = conn.execute(f"SELECT seq, body {_CONTEXT_ROWS} ORDER BY seq", (cid, lo, hi)).fetchall()
                texts.add([unpack(r[1]) for r in found], len(found), [r[0] for r in found])
            elif last - first + 1 == n:
                texts.add(unpack_joined(joined), n, range(first, last + 1))
            else:  # integers joined with commas: a JSON array's inside
                seqs = json.loads(f"[{conn.execute(_CONTEXT_SEQS, (cid, lo, hi)).fetchone()[0]}]")
                texts.add(unpack_joined(joined), n, seqs)
            if self.lo <= self.hi:
                return False
        given = texts.given
        if given != len(texts):
            texts.fail(CorruptSession(f"Conversation {cid!r} in {self.location} holds {given} entries of its model "
                                      f"context, but its stored count says {len(texts)}: the file is damaged",
                                      location=self.location))
        else:
            texts.finish()
        return True


__all__ = ["STREAM_FROM", "Schedule", "read_context"]
