"""Writing a group of commits to PostgreSQL, on the store's writer thread (see
durable.storage.postgres): one fenced transaction for the whole group, one statement (one round
trip);
if a batch is refused, again with each batch in its own savepoint; after a broken connection, the
server is asked whether the transaction landed, and it is acknowledged, written again, or reported
unknowable. Also the snapshot read of every row of a space (`read_rows`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..errors import CommitFailed, CommitOutcomeUnknown, DiskFull, LockLost, ServerUnavailable, StorageError
from . import _pg_driver, _pg_lease
from ._jobs import Job, finish_all
from .protocol import EncodedBatch
from .reader import StoredRows

if TYPE_CHECKING:
    from .postgres import PostgresStorage

_ATTEMPTS = 3  # transactions tried for one group when the connection breaks before its COMMIT landed


# A value the driver cannot send (text that is not UTF-8, a number past its types): refused
# before anything of the statement reaches the server.
_UNSENDABLE = (ValueError, TypeError, OverflowError)


class _NotLanded(Exception):
    """The connection broke and the transaction did not land; the lease still holds: write again."""


def write_group(store: PostgresStorage, group: list[Job]) -> None:
    """Write the commit jobs of `group` and finish each with its own outcome."""
    refusal: StorageError | None = store._unknown or store._lease.lost
    if refusal is not None:
        _fail(group, refusal)
        return
    group = [job for job in group if job.encode(store.location)]
    if not group:
        return
    lazy = all(not getattr(job.batch, "barrier", True) for job in group)
    for _ in range(_ATTEMPTS):
        try:
            errors = _transaction(store, group, lazy)
        except _NotLanded:
            continue
        except StorageError as exc:
            _fail(group, exc)
            return
        for job, error in zip(group, errors, strict=True):
            job.error = error
        finish_all(group)
        return
    _fail(group, CommitFailed(f"A commit to {store.location} was not written: the connection to the server broke "
                              f"{_ATTEMPTS} times before it landed", location=store.location))


def fail_unfinished(store: PostgresStorage, group: list[Job], exc: BaseException) -> None:
    """The writer's safety net: every job of a group that raised unexpectedly learns it failed
    (a transaction in progress is rolled back: nothing of it committed)."""
    if store._conn is not None:
        _pg_driver.rollback(store._conn)
    error = CommitFailed(f"A commit to {store.location} failed: {type(exc).__name__}: {exc}", location=store.location)
    error.__cause__ = exc
    _fail([job for job in group if job.error is None], error)  # those refused on encoding were told


def _fail(group: list[Job], error: BaseException) -> None:
    for job in group:
        job.error = error
    finish_all(group)


def _transaction(store: PostgresStorage, group: list[Job], lazy: bool) -> list[StorageError | None]:
    """One fenced transaction for the group; returns each job's error (None: committed)."""
    psycopg = _pg_driver.import_psycopg()
    lease = store._lease
    try:
        conn = store._ensure_conn(time.monotonic() + store.reconnect_seconds)
    except ServerUnavailable:  # nothing was sent; if the lease has surely run out meanwhile, say so
        lost = lease.check_expiry(store.location)
        if lost is not None:
            raise lost from None
        raise
    expected = lease.commits + 1
    errors: list[StorageError | None] = [None] * len(group)
    sent = time.monotonic()
    try:
        if store._fault is not None:
            store._fault("before_commit", conn)
        try:
            _one_statement(store, conn, _merged([job.encoded for job in group if job.encoded is not None]), lazy)
        except (psycopg.Error, *_UNSENDABLE) as exc:
            if isinstance(exc, psycopg.Error) and (
                    _pg_driver.is_connection_error(exc, conn) or exc.sqlstate == _pg_driver.FENCE_SQLSTATE):
                raise
            _pg_driver.rollback(conn)
            if len(group) == 1:
                return [_translate(store, exc)]
            _with_savepoints(store, conn, group, lazy, errors)
        if store._fault is not None:
            store._fault("after_commit", conn)
    except psycopg.Error as exc:
        if not _pg_driver.is_connection_error(exc, conn):
            _pg_driver.rollback(conn)
            if exc.sqlstate == _pg_driver.FENCE_SQLSTATE:
                raise _lost(store, conn) from None
            raise _translate(store, exc) from exc
        store._drop_connection()
        landed = _resolve(store, expected)
        if landed is None:
            store._unknown = CommitOutcomeUnknown(
                f"The connection to the PostgreSQL server {store.server} broke during a commit to {store.location} "
                f"and could not be made again within {store.reconnect_seconds:g} s, so whether the commit landed is "
                f"unknown ({' '.join(str(exc).split())}). This store commits nothing more: open the space again",
                location=store.location)
            raise store._unknown from exc
        if not landed:
            if lease.lost is not None:
                raise lease.lost from None
            raise _NotLanded from exc
    lease.commits = expected
    if lease.lost is None:
        lease.renewed(sent)
        store._next_renew = sent + store.renew_seconds
    store.commits += 1
    return errors


# The whole group as ONE statement (autocommit: one implicit transaction, one round trip): the
# fence first (every insert reads its result, and it raises when the lease is not this epoch's),
# then an insert per table that has rows, from arrays. An upsert may touch a row once per
# statement: the group's rows are merged last-write-wins per key first (`_merged`).
_FENCE = "f AS MATERIALIZED (SELECT durable.fence(%(space)s, %(epoch)s, %(seconds)s, %(lazy)s) AS n)"
_INSERTS = {
    "t": """t AS (
    INSERT INTO durable.tasks (space, id, conversation_id, kind, state, live, parent_id, body)
    SELECT %(space)s, u.* FROM unnest(%(t_id)s::bigint[], %(t_cid)s::text[], %(t_kind)s::text[],
                                      %(t_state)s::text[], %(t_live)s::boolean[], %(t_parent)s::bigint[],
                                      %(t_body)s::text[]) AS u
    WHERE (SELECT n FROM f) > 0
    ON CONFLICT (space, id) DO UPDATE SET state = excluded.state, live = excluded.live, body = excluded.body)""",
    "e": """e AS (
    INSERT INTO durable.entries (space, conversation_id, seq, kind, body, tokens)
    SELECT %(space)s, u.* FROM unnest(%(e_cid)s::text[], %(e_seq)s::bigint[], %(e_kind)s::text[],
                                      %(e_body)s::text[], %(e_tokens)s::integer[]) AS u
    WHERE (SELECT n FROM f) > 0)""",
    "s": """s AS (
    INSERT INTO durable.submissions (space, id, conversation_id, status, body)
    SELECT %(space)s, u.id, u.cid, u.status, u.body
      FROM unnest(%(s_id)s::text[], %(s_cid)s::text[], %(s_status)s::text[], %(s_body)s::text[])
           WITH ORDINALITY AS u(id, cid, status, body, i)
     WHERE (SELECT n FROM f) > 0
     ORDER BY u.i
    ON CONFLICT (space, id) DO UPDATE SET status = excluded.status, body = excluded.body),
i AS (  -- an inbox row (durable.remote) is gone in the commit that places it as a submission
    DELETE FROM durable.inbox WHERE space = %(space)s AND id = ANY(%(s_id)s::text[]) AND (SELECT n FROM f) > 0)""",
    "d": """d AS (
    INSERT INTO durable.documents (space, conversation_id, body)
    SELECT %(space)s, u.* FROM unnest(%(d_cid)s::text[], %(d_body)s::text[]) AS u
    WHERE (SELECT n FROM f) > 0
    ON CONFLICT (space, conversation_id) DO UPDATE SET body = excluded.body)""",
    "x": """x AS (  -- inbox rows the commit consumes (a decision from durable.remote, applied or refused)
    DELETE FROM durable.inbox WHERE space = %(space)s AND id = ANY(%(x_id)s::text[]) AND (SELECT n FROM f) > 0)""",
}
_STATEMENTS: dict[tuple[bool, ...], str] = {}


def _statement(shape: tuple[bool, bool, bool, bool, bool]) -> str:
    """The commit statement for the tables that have rows (one of 32, made once each)."""
    sql = _STATEMENTS.get(shape)
    if sql is None:
        parts = [_FENCE, *(_INSERTS[key] for key, has in zip("tesdx", shape, strict=True) if has)]
        sql = _STATEMENTS[shape] = "WITH " + ",\n".join(parts) + "\nSELECT n FROM f"
    return sql


def _one_statement(store: PostgresStorage, conn: Any, enc: EncodedBatch, lazy: bool) -> None:
    """The whole transaction in one statement (one round trip); see `_statement`."""
    lease = store._lease
    tasks, entries, subs, docs = enc.tasks, enc.entries, enc.submissions, enc.live
    params: dict[str, Any] = {"space": lease.space, "epoch": lease.epoch, "seconds": lease.seconds, "lazy": lazy}
    if tasks:
        params.update(t_id=[t.id for t in tasks], t_cid=[t.conversation_id for t in tasks],
                      t_kind=[t.kind for t in tasks], t_state=[t.state for t in tasks], t_live=[t.live for t in tasks],
                      t_parent=[t.parent_id for t in tasks], t_body=[t.body for t in tasks])
    if entries:
        params.update(e_cid=[e[0] for e in entries], e_seq=[e[1] for e in entries], e_kind=[e[2] for e in entries],
                      e_body=[e[3] for e in entries], e_tokens=[e[4] for e in entries])
    if subs:
        params.update(s_id=[x[0] for x in subs], s_cid=[x[1] for x in subs], s_status=[x[2] for x in subs],
                      s_body=[x[3] for x in subs])
    if docs:
        params.update(d_cid=[x[0] for x in docs], d_body=[x[1] for x in docs])
    if enc.inbox:
        params.update(x_id=list(enc.inbox))
    shape = (bool(tasks), bool(entries), bool(subs), bool(docs), bool(enc.inbox))
    conn.execute(_statement(shape), params, prepare=True)


def _with_savepoints(store: PostgresStorage, conn: Any, group: list[Job], lazy: bool,
                     errors: list[StorageError | None]) -> None:
    """The group again, each batch in its own savepoint: a batch refused for what it holds (a
    constraint, a value the server refuses) is rolled back alone. Fills `errors`."""
    psycopg = _pg_driver.import_psycopg()
    lease = store._lease
    conn.execute("BEGIN")
    conn.execute("SELECT durable.fence(%s, %s, %s, %s)", (lease.space, lease.epoch, lease.seconds, lazy))
    for i, job in enumerate(group):
        assert job.encoded is not None
        conn.execute("SAVEPOINT batch")
        try:
            _apply(conn, lease.space, job.encoded)
        except (psycopg.Error, *_UNSENDABLE) as exc:
            if isinstance(exc, psycopg.Error) and (
                    _pg_driver.is_connection_error(exc, conn) or not _refused_for_its_rows(exc)):
                raise
            conn.execute("ROLLBACK TO SAVEPOINT batch")
            errors[i] = _translate(store, exc)
        conn.execute("RELEASE SAVEPOINT batch")
    conn.execute("COMMIT")


def _refused_for_its_rows(exc: Any) -> bool:
    """A constraint (class 23) or a value the server or driver refuses (class 22, or none sent)."""
    if isinstance(exc, _UNSENDABLE):
        return True
    state = getattr(exc, "sqlstate", None) or ""
    return state.startswith(("22", "23")) or (not state and isinstance(exc, _pg_driver.import_psycopg().DataError))


def _apply(conn: Any, space: str, enc: EncodedBatch) -> None:
    with conn.cursor() as cur:
        if enc.tasks:
            cur.executemany(
                "INSERT INTO durable.tasks (space, id, conversation_id, kind, state, live, parent_id, body) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (space, id) DO UPDATE "
                "SET state = excluded.state, live = excluded.live, body = excluded.body",
                [(space, t.id, t.conversation_id, t.kind, t.state, t.live, t.parent_id, t.body) for t in enc.tasks])
        if enc.entries:
            cur.executemany("INSERT INTO durable.entries (space, conversation_id, seq, kind, body, tokens) "
                            "VALUES (%s, %s, %s, %s, %s, %s)", [(space, *e) for e in enc.entries])
        if enc.submissions:
            cur.executemany(
                "INSERT INTO durable.submissions (space, id, conversation_id, status, body) "
                "VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (space, id) DO UPDATE SET status = excluded.status, body = excluded.body",
                [(space, *s) for s in enc.submissions])
            cur.execute("DELETE FROM durable.inbox WHERE space = %s AND id = ANY(%s::text[])",
                        (space, [s[0] for s in enc.submissions]))
        if enc.live:
            cur.executemany(
                "INSERT INTO durable.documents (space, conversation_id, body) VALUES (%s, %s, %s) "
                "ON CONFLICT (space, conversation_id) DO UPDATE SET body = excluded.body",
                [(space, *d) for d in enc.live])
        if enc.inbox:
            cur.execute("DELETE FROM durable.inbox WHERE space = %s AND id = ANY(%s::text[])", (space, list(enc.inbox)))


def _merged(batches: list[EncodedBatch]) -> EncodedBatch:
    """The rows of several encoded batches as one, in order; a later task, submission or live
    document of the same key replaces the earlier one in its place (as if written one by one).
    Entries are kept as they are: a seq twice is refused, and the group is then written again
    batch by batch."""
    if len(batches) == 1:
        return batches[0]
    return EncodedBatch(
        tuple({t.id: t for b in batches for t in b.tasks}.values()),
        tuple(e for b in batches for e in b.entries),
        tuple({s[0]: s for b in batches for s in b.submissions}.values()),
        tuple({d[0]: d for b in batches for d in b.live}.values()),
        inbox=tuple(x for b in batches for x in b.inbox),
    )


def _resolve(store: PostgresStorage, expected: int) -> bool | None:
    """Whether this epoch's commit number `expected` landed, asked on a new connection."""
    psycopg = _pg_driver.import_psycopg()
    try:
        conn = store._ensure_conn(time.monotonic() + store.reconnect_seconds)
    except ServerUnavailable:
        return None
    try:
        return _pg_lease.resolve(conn, store._lease, expected, store.location)
    except psycopg.Error:
        store._drop_connection()
        return None


def _lost(store: PostgresStorage, conn: Any) -> LockLost:
    lease = store._lease
    try:
        return lease.lose(_pg_lease.lost(conn, lease, store.location))
    except Exception:  # noqa: BLE001 - the reason is unknown; the lease is lost all the same
        return lease.lose(_pg_lease.lost_error(lease, store.location, None))


def _translate(store: PostgresStorage, exc: Any) -> StorageError:
    loc = store.location
    state = getattr(exc, "sqlstate", None) or ""
    text = " ".join(str(exc).split())
    if state == "23505":
        diag = exc.diag
        return CommitFailed(f"A commit to {loc} was refused and rolled back: UNIQUE constraint "
                            f"{diag.constraint_name} violated ({diag.message_detail or text})", location=loc)
    if state == "53100":
        return DiskFull(f"A commit to {loc} was rolled back: the server's disk is full ({text})", location=loc)
    if _refused_for_its_rows(exc):
        return CommitFailed(f"A commit to {loc} was refused and rolled back: {text}", location=loc)
    return CommitFailed(f"A commit to {loc} failed and was rolled back ({text})", location=loc)


def read_rows(conn: Any, space: str) -> StoredRows:
    """Every row of `space`, one snapshot, in the order `reader.decode_rows` expects."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        tasks = conn.execute("SELECT id, conversation_id, kind, state, live, parent_id, body FROM durable.tasks "
                             "WHERE space = %s ORDER BY id", (space,)).fetchall()
        entries = conn.execute("SELECT conversation_id, seq, kind, body FROM durable.entries WHERE space = %s "
                               "ORDER BY conversation_id COLLATE \"C\", seq", (space,)).fetchall()
        subs = conn.execute("SELECT id, conversation_id, status, body FROM durable.submissions WHERE space = %s "
                            "ORDER BY ord", (space,)).fetchall()
        docs = conn.execute("SELECT conversation_id, body FROM durable.documents WHERE space = %s "
                            "ORDER BY conversation_id COLLATE \"C\"", (space,)).fetchall()
    return StoredRows(tasks, entries, subs, docs)
