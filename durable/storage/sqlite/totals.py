"""A check of the `conversations` table (schema 9) against the rows it counts: each
conversation's context count, token total and entries with attachments, as kept by every commit
(`write.apply_rows`), against a recount of its entries. Read-only; for the invariant checker
(`durable.testing.invariants`) through `SessionReader.context_totals`.
"""

from __future__ import annotations

import sqlite3

from ..packing import ATTACHMENT_MARK
from ..retention import skip_tombstoned
from ..rows import CONTEXT_ROWS


def disagreeing(conn: sqlite3.Connection, path: str) -> list[str]:
    """Where the stored count, token total and attachments of each conversation's context
    disagree with a recount of its rows, one sentence each (conversations being deleted left out;
    attachments not recounted in an encrypted file: its bodies are sealed)."""
    sealed = conn.execute("SELECT count(*) FROM meta WHERE key = 'encryption'").fetchone()[0] > 0
    stored = {cid: (n, t, None if sealed else a) for cid, n, t, a in conn.execute(
        f"SELECT conversation_id, entries, tokens, attachments FROM conversations WHERE {skip_tombstoned('meta')}")}
    counted = {cid: (n, t, None if sealed else a) for cid, n, t, a in conn.execute(
        "SELECT conversation_id, count(*), CASE WHEN count(tokens) = count(*) THEN coalesce(sum(tokens), 0) END, "
        f"sum(instr(body, '{ATTACHMENT_MARK}') > 0) FROM entries WHERE {CONTEXT_ROWS} "
        f"AND {skip_tombstoned('meta')} GROUP BY conversation_id")}
    none = (0, 0, None if sealed else 0)
    return [f"The stored context totals of conversation {cid!r} in {path} (entries, tokens, attachments) are "
            f"{stored.get(cid)}, its rows count {counted.get(cid, none)}"
            for cid in sorted(stored.keys() | counted.keys()) if stored.get(cid) != counted.get(cid, none)]


__all__ = ["disagreeing"]
