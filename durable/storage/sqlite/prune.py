"""Retention in a session file (`durable.storage.retention`): the ended conversations, their
deletion in bounded commits behind tombstones (`meta` rows `deleting:<id>`), and giving the space
back to the file system. Every function runs on the store's writer thread (`SQLiteWrites`).

Space: a file made by this version has `auto_vacuum = INCREMENTAL` (`opening.connect`), so a
prune ends with `PRAGMA incremental_vacuum` and a truncating checkpoint: the file shrinks. A file
made before cannot switch without rewriting itself: a prune reports the bytes a full `VACUUM`
would give back (`reclaimable`), and `vacuum` (`durable prune --vacuum`) rewrites it when asked,
switching it to incremental vacuum on the way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import NoReturn

from .. import rows, sweep
from ..retention import CONVERSATION_TABLES, TOMBSTONE, TOMBSTONES, Ended, PruneReport, tombstoned_sql
from ..sealing import PREFIX, opened_row
from .failures import translate
from .write import SQLiteWrites

_TOMBSTONED = tombstoned_sql("meta")
_SWEPT = ("tasks", "submissions", "documents", "texts", "entries")  # every table of bodies (`keys._BODIES`)


def tombstoned(conn: sqlite3.Connection) -> list[str]:
    """The conversations whose deletion is under way."""
    return [cid for (cid,) in conn.execute(_TOMBSTONED)]


def ended(conn: sqlite3.Connection, path: str) -> list[Ended]:
    """Every ended conversation of the file (idle, not being deleted), with when it ended."""
    busy = {cid for (cid,) in conn.execute(
        "SELECT DISTINCT conversation_id FROM tasks INDEXED BY tasks_live WHERE live = 1")}
    busy |= {cid for (cid,) in conn.execute(
        "SELECT DISTINCT conversation_id FROM submissions INDEXED BY submissions_open WHERE status = 'queued'")}
    busy |= set(tombstoned(conn))
    last = dict(conn.execute("SELECT conversation_id, MAX(id) FROM tasks GROUP BY conversation_id").fetchall())
    out = []
    for (cid,) in conn.execute("SELECT conversation_id FROM documents ORDER BY conversation_id").fetchall():
        if cid in busy:
            continue
        tid = last.get(cid)
        at = 0.0
        if tid is not None:
            (body,) = conn.execute("SELECT body FROM tasks WHERE id = ?", (tid,)).fetchone()
            at = rows.updated_at(body, tid, path)
        out.append(Ended(cid, at))
    return out


def tombstone(w: SQLiteWrites, ids: Sequence[str]) -> PruneReport:
    """One commit: tombstones for `ids` and their live documents deleted (with their texts); a
    conversation that is not idle (a live task, a queued submission) is left alone."""
    conn = _conn(w)
    held = w.texts
    busy = {cid for (cid,) in conn.execute(  # never anything live, whoever asked
        "SELECT conversation_id FROM tasks INDEXED BY tasks_live WHERE live = 1 UNION "
        "SELECT conversation_id FROM submissions INDEXED BY submissions_open WHERE status = 'queued'")}
    ids = [cid for cid in ids if cid not in busy]
    if not ids:
        return PruneReport()
    w.begin(True)
    try:
        conn.executemany("INSERT OR IGNORE INTO meta (key, value) VALUES (?, '')", [(TOMBSTONE + c,) for c in ids])
        drops = []
        for cid in ids:
            drops += held.write(f"live:{cid}", {})[1]
            held.forget(cid)
        deleted = conn.executemany("DELETE FROM documents WHERE conversation_id = ?", [(c,) for c in ids]).rowcount
        # Their context totals (schema 9) with them: bookkeeping of rows a tombstone hides, not a row counted.
        conn.executemany("DELETE FROM conversations WHERE conversation_id = ?", [(c,) for c in ids])
        if drops:
            conn.executemany("DELETE FROM texts WHERE id BETWEEN ? AND ?", drops)
        w.commit()
    except BaseException as exc:  # noqa: BLE001 - rolled back, then raised again
        _failed(w, exc)
    return PruneReport(rows=deleted, commits=1)


def delete_some(w: SQLiteWrites, limit: int) -> PruneReport:
    """One commit: up to `limit` rows of the tombstoned conversations deleted, table by table
    (`CONVERSATION_TABLES`); when none is left, their tombstones go instead. Returns an empty
    report when there was nothing to do."""
    conn = _conn(w)
    ids = tombstoned(conn)
    if not ids:
        return PruneReport()
    w.begin(True)
    try:
        left = limit
        for table in CONVERSATION_TABLES:
            if left <= 0:
                break
            if table == "entries":  # WITHOUT ROWID: by its key, a conversation at a time
                for cid in ids:
                    if left <= 0:
                        break
                    left -= conn.execute(
                        "DELETE FROM entries WHERE conversation_id = ? AND seq IN (SELECT seq FROM entries "
                        "WHERE conversation_id = ? ORDER BY seq LIMIT ?)", (cid, cid, left)).rowcount
            else:
                left -= conn.execute(
                    f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} "
                    f"WHERE conversation_id IN ({_TOMBSTONED}) LIMIT ?)", (left,)).rowcount
        deleted = limit - left
        done: tuple[str, ...] = ()
        if not deleted:
            conn.execute(f"DELETE FROM meta WHERE {TOMBSTONES}")
            done = tuple(ids)
        w.commit()
    except BaseException as exc:  # noqa: BLE001 - rolled back, then raised again
        _failed(w, exc)
    return PruneReport(done, deleted, 1)


def sweep_some(w: SQLiteWrites, limit: int) -> PruneReport:
    """One commit: up to `limit` attachments that no row references deleted (`durable.storage.
    sweep`), the references read again in that transaction. An empty report, and no transaction,
    when every attachment is referenced."""
    conn = _conn(w)
    if conn.execute("SELECT 1 FROM attachments LIMIT 1").fetchone() is None or not _doomed(w, limit):
        return PruneReport()
    w.begin(True)
    try:
        doomed = _doomed(w, limit)
        conn.executemany("DELETE FROM attachments WHERE sha256 = ?", [(k,) for k in doomed])
        w.commit()
    except BaseException as exc:  # noqa: BLE001 - rolled back, then raised again
        _failed(w, exc)
    return PruneReport(rows=len(doomed), commits=1, attachments=len(doomed))


def sweep_all(w: SQLiteWrites, limit: int) -> PruneReport:
    """`sweep_some` until every attachment left is referenced."""
    report = PruneReport()
    while (step := sweep_some(w, limit)).commits:
        report = report.plus(step)
    return report


def _doomed(w: SQLiteWrites, limit: int) -> list[str]:
    conn, path = _conn(w), w.path
    kept: set[str] = set()
    for table in _SWEPT:
        bodies = [b for (b,) in conn.execute(f"SELECT body FROM {table} WHERE substr(body, 1, {len(PREFIX)}) = ? "
                                             f"OR instr(body, ?) > 0", (PREFIX, sweep.MARK))]
        kept |= sweep.referenced(opened_row(table, b, path) for b in bodies)
    if w.sealer is not None:  # stored under keyed ids (`durable.storage.sealing.Sealer.attachment_ids`)
        kept = set(w.sealer.attachment_ids(kept))
    return sweep.unreferenced([k for (k,) in conn.execute("SELECT sha256 FROM attachments")], kept, limit)


def reclaim(w: SQLiteWrites) -> PruneReport:
    """Give the free pages back to the file system (incremental vacuum, then a truncating
    checkpoint), or, for a file without incremental vacuum, say how many bytes a `VACUUM` would."""
    conn = _conn(w)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:  # 2: INCREMENTAL
        return PruneReport(reclaimable=free * page)
    try:
        before = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.executescript("PRAGMA incremental_vacuum")  # stepped to the end (one `execute` frees a page)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        after = conn.execute("PRAGMA page_count").fetchone()[0]
    except sqlite3.Error as exc:
        raise translate(exc, "A vacuum of", w.path) from exc
    return PruneReport(reclaimed=(before - after) * page)


def vacuum(w: SQLiteWrites) -> PruneReport:
    """Rewrite the whole file (`VACUUM`), switched to incremental vacuum: slow, and it needs free
    disk space as large as the file; only ever run when asked (`durable prune --vacuum`)."""
    conn = _conn(w)
    w.lock.check()
    try:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        before = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        after = conn.execute("PRAGMA page_count").fetchone()[0]
    except sqlite3.Error as exc:
        raise translate(exc, "A vacuum of", w.path) from exc
    return PruneReport(reclaimed=(before - after) * page)


def finish(w: SQLiteWrites, limit: int) -> PruneReport:
    """Finish the deletions a crash cut off (at open: at most one group of conversations), and
    sweep the attachments they left unreferenced."""
    report = PruneReport()
    while True:
        step = delete_some(w, limit)
        if not step.commits:
            return report.plus(sweep_all(w, limit)) if report.commits else report
        report = report.plus(step)


def _conn(w: SQLiteWrites) -> sqlite3.Connection:
    return w._conn()


def _failed(w: SQLiteWrites, exc: BaseException) -> NoReturn:
    w.rollback(exc)
    if isinstance(exc, sqlite3.Error):
        raise translate(exc, "A prune of", w.path) from exc
    raise exc
