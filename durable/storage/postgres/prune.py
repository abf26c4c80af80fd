"""Retention in a PostgreSQL space (`durable.storage.retention`): the ended conversations and their
deletion in bounded, fenced commits behind tombstones (`durable.meta` rows keyed by the space and
the conversation), on the store's writer thread. Plain deletes: the server reuses the space
(autovacuum); nothing to give back by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import rows, sweep
from ..group_commit import _transaction
from ..retention import CONVERSATION_TABLES, TOMBSTONE, Ended, PruneReport
from ..sealing import PREFIX, opened_row
from .write import PostgresWrites


def _prefix(space: str) -> str:
    return f"{TOMBSTONE}{len(space)}:{space}:"


def skip_tombstoned(space: str) -> tuple[str, tuple[str, ...]]:
    """An SQL condition leaving out the rows of the space's conversations being deleted, and its
    arguments (readers add it)."""
    prefix = _prefix(space)
    return ("conversation_id NOT IN (SELECT substr(key, length(%s) + 1) FROM durable.meta "
            "WHERE left(key, length(%s)) = %s)", (prefix, prefix, prefix))


def tombstoned(conn: Any, space: str) -> list[str]:
    prefix = _prefix(space)
    return [cid for (cid,) in conn.execute(
        "SELECT substr(key, length(%s) + 1) FROM durable.meta WHERE left(key, length(%s)) = %s",
        (prefix, prefix, prefix))]


def ended(conn: Any, space: str, location: str) -> list[Ended]:
    """Every ended conversation of the space (idle, not being deleted), with when it ended."""
    busy = {cid for (cid,) in conn.execute(
        "SELECT conversation_id FROM durable.tasks WHERE space = %s AND live UNION "
        "SELECT conversation_id FROM durable.submissions WHERE space = %s AND status = 'queued'", (space, space))}
    busy |= set(tombstoned(conn, space))
    found = conn.execute(
        "SELECT d.conversation_id, t.id, t.body FROM durable.documents d LEFT JOIN LATERAL ("
        "SELECT id, body FROM durable.tasks t WHERE t.space = d.space AND t.conversation_id = d.conversation_id "
        "ORDER BY id DESC LIMIT 1) t ON true WHERE d.space = %s ORDER BY d.conversation_id", (space,)).fetchall()
    return [Ended(cid, 0.0 if tid is None else rows.updated_at(body, tid, location))
            for cid, tid, body in found if cid not in busy]


def tombstone(w: PostgresWrites, ids: Sequence[str]) -> PruneReport:
    """One commit: tombstones for the idle ones of `ids` and their live documents deleted."""
    space, prefix = w.lease.space, _prefix(w.lease.space)
    done: list[int] = []

    def attempt() -> None:
        w.begin(True)
        conn = w.link.conn
        busy = {cid for (cid,) in conn.execute(
            "SELECT conversation_id FROM durable.tasks WHERE space = %s AND live UNION "
            "SELECT conversation_id FROM durable.submissions WHERE space = %s AND status = 'queued'", (space, space))}
        idle = [cid for cid in ids if cid not in busy]
        drops = []
        for cid in idle:
            drops += w.texts.write(f"live:{cid}", {})[1]
            w.texts.forget(cid)
        conn.execute("INSERT INTO durable.meta (key, value) SELECT %s || c, '' FROM unnest(%s::text[]) c "
                     "ON CONFLICT (key) DO NOTHING", (prefix, idle))
        # Their context totals (schema 9) first: bookkeeping of rows a tombstone hides, not a row counted.
        conn.execute("DELETE FROM durable.conversations WHERE space = %s AND conversation_id = ANY(%s)", (space, idle))
        cur = conn.execute("DELETE FROM durable.documents WHERE space = %s AND conversation_id = ANY(%s)",
                           (space, idle))
        for lo, hi in drops:
            conn.execute("DELETE FROM durable.texts WHERE space = %s AND id BETWEEN %s AND %s", (space, lo, hi))
        done[:] = [cur.rowcount, len(idle)]
        w.commit()

    _settled(w, attempt)
    return PruneReport(rows=done[0], commits=1) if done[1] else PruneReport()


def delete_some(w: PostgresWrites, limit: int, conn: Any) -> PruneReport:
    """One commit: up to `limit` rows of the space's tombstoned conversations deleted; when none is
    left, their tombstones instead. An empty report, and no transaction, when there was nothing
    to do (read on `conn`, the store's connection)."""
    space, prefix = w.lease.space, _prefix(w.lease.space)
    if not tombstoned(conn, space):
        return PruneReport()
    out: list[PruneReport] = []

    def attempt() -> None:
        conn = w.link.conn
        ids = tombstoned(conn, space)
        w.begin(True)
        left = limit
        for table in CONVERSATION_TABLES:
            if left <= 0:
                break
            left -= conn.execute(
                f"DELETE FROM durable.{table} WHERE ctid IN (SELECT ctid FROM durable.{table} "
                "WHERE space = %s AND conversation_id = ANY(%s) LIMIT %s)", (space, ids, left)).rowcount
        deleted = limit - left
        gone: tuple[str, ...] = ()
        if not deleted:
            conn.execute("DELETE FROM durable.meta WHERE left(key, length(%s)) = %s", (prefix, prefix))
            gone = tuple(ids)
        w.commit()
        out[:] = [PruneReport(gone, deleted, 1)]

    _settled(w, attempt)
    return out[0]


def sweep_some(w: PostgresWrites, limit: int, conn: Any) -> PruneReport:
    """One commit: up to `limit` of the space's attachments that no row references deleted
    (`durable.storage.sweep`), the references read again in that transaction (the space's lease
    makes the store the only writer). An empty report, and no transaction, when every attachment
    is referenced (read on `conn`, the store's connection)."""
    space = w.lease.space
    if not _doomed(conn, w, limit):
        return PruneReport()
    out: list[PruneReport] = []

    def attempt() -> None:
        w.begin(True)
        conn = w.link.conn
        doomed = _doomed(conn, w, limit)
        conn.execute("DELETE FROM durable.attachments WHERE space = %s AND sha256 = ANY(%s::text[])", (space, doomed))
        w.commit()
        out[:] = [PruneReport(rows=len(doomed), commits=1, attachments=len(doomed))]

    _settled(w, attempt)
    return out[0]


def _doomed(conn: Any, w: PostgresWrites, limit: int) -> list[str]:
    space, sealer = w.lease.space, w.sealer
    stored = [sha for (sha,) in conn.execute("SELECT sha256 FROM durable.attachments WHERE space = %s", (space,))]
    if not stored:
        return []
    kept: set[str] = set()
    for table in ("tasks", "submissions", "documents", "texts", "entries"):
        kept |= sweep.referenced(opened_row(table, body, w.location) for (body,) in conn.execute(
            f"SELECT body FROM durable.{table} WHERE space = %s AND (strpos(body, %s) > 0 OR left(body, %s) = %s)",
            (space, sweep.MARK, len(PREFIX), PREFIX)))
    if sealer is not None:  # stored under keyed ids (`durable.storage.sealing.Sealer.attachment_ids`)
        kept = set(sealer.attachment_ids(kept))
    return sweep.unreferenced(stored, kept, limit)


def finish(w: PostgresWrites, limit: int, conn: Any) -> PruneReport:
    """Finish the deletions a crash cut off, and sweep the attachments they left unreferenced."""
    report = PruneReport()
    while (step := delete_some(w, limit, conn)).commits:
        report = report.plus(step)
    if report.commits:
        while (step := sweep_some(w, limit, conn)).commits:
            report = report.plus(step)
    return report


def _settled(w: PostgresWrites, attempt: Any) -> None:
    """One fenced transaction (`group_commit._transaction`); its failure raised as the store's error."""
    failure = _transaction(w, attempt)
    if failure is not None:
        raise w.translate(failure) from failure
