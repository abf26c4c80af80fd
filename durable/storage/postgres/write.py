"""The PostgreSQL store's side of the group-commit policy (`durable.storage.group_commit`): its
primitives on the writer thread's connection (`PostgresWrites`), the one copy of its upsert SQL,
and what a failure means to the caller.

Every transaction is fenced (`durable.fence`: this epoch must hold an unexpired lease; it counts
the commit and extends the lease, and makes a lazy transaction `synchronous_commit = off`). A
transaction written as one (`write`) is ONE statement, one round trip: the fence, then an insert
per table that has rows, from arrays (an implicit transaction). After a broken connection, the
server is asked whether the transaction landed (the lease counts this epoch's commits): landed,
it is acknowledged; not landed, written again while the lease holds; unknowable, the store
commits nothing more (`CommitOutcomeUnknown`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...errors import (
    CommitFailed,
    CommitOutcomeUnknown,
    CommitRefused,
    DiskFull,
    LockLost,
    ServerUnavailable,
    StorageError,
)
from ..bodies import sealed
from ..held import HeldTexts
from ..packing import ATTACHMENT_MARK
from ..rows import CONTEXT_ROWS, EncodedBatch, context_totals, written_texts
from ..sealing import Sealer
from . import driver
from .driver import Link
from .lease import Lease, lost as why_lost, lost_error, resolve

_ATTEMPTS = 3  # transactions tried when the connection breaks before their COMMIT landed

# A value the driver cannot send (text that is not UTF-8, a number past its types): refused
# before anything of the statement reaches the server.
_UNSENDABLE = (ValueError, TypeError, OverflowError)

# A transaction's rows as ONE statement: `f` first (the fence, in a statement that begins a
# transaction: every insert reads its result, and it raises when the lease is not this epoch's;
# inside a fenced transaction, a constant), then an insert per table that has rows, from arrays.
# An upsert may touch a row once per statement: a group's rows are merged last write wins first
# (`group_commit.merged`).
_FENCE = "f AS MATERIALIZED (SELECT durable.fence(%(space)s, %(epoch)s, %(seconds)s, %(lazy)s) AS n)"
_FENCED = "f AS (SELECT 1::bigint AS n)"
_INSERTS = {
    "t": """t AS (
    INSERT INTO durable.tasks (space, id, conversation_id, kind, state, live, parent_id, body, texts)
    SELECT %(space)s, u.* FROM unnest(%(t_id)s::bigint[], %(t_cid)s::text[], %(t_kind)s::text[],
                                      %(t_state)s::text[], %(t_live)s::boolean[], %(t_parent)s::bigint[],
                                      %(t_body)s::text[], %(t_texts)s::text[]) AS u
    WHERE (SELECT n FROM f) > 0
    ON CONFLICT (space, id) DO UPDATE SET state = excluded.state, live = excluded.live, body = excluded.body,
                                          texts = excluded.texts)""",
    "e": """e AS (
    INSERT INTO durable.entries (space, conversation_id, seq, kind, body, tokens)
    SELECT %(space)s, u.* FROM unnest(%(e_cid)s::text[], %(e_seq)s::bigint[], %(e_kind)s::text[],
                                      %(e_body)s::text[], %(e_tokens)s::integer[]) AS u
    WHERE (SELECT n FROM f) > 0),
c AS (  -- the conversations' context totals (schema 9): added to (a NULL total stays NULL)
    INSERT INTO durable.conversations AS c (space, conversation_id, entries, tokens, attachments)
    SELECT %(space)s, u.* FROM unnest(%(c_cid)s::text[], %(c_entries)s::bigint[], %(c_tokens)s::bigint[],
                                      %(c_attachments)s::bigint[]) AS u
    WHERE (SELECT n FROM f) > 0
    ON CONFLICT (space, conversation_id) DO UPDATE SET entries = c.entries + excluded.entries,
                                                       tokens = c.tokens + excluded.tokens,
                                                       attachments = c.attachments + excluded.attachments)""",
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
    INSERT INTO durable.documents (space, conversation_id, body, texts)
    SELECT %(space)s, u.* FROM unnest(%(d_cid)s::text[], %(d_body)s::text[], %(d_texts)s::text[]) AS u
    WHERE (SELECT n FROM f) > 0
    ON CONFLICT (space, conversation_id) DO UPDATE SET body = excluded.body, texts = excluded.texts)""",
    # Long texts kept apart (durable.storage.texts): streams dropped, pieces upserted (never of a
    # dropped stream: one statement touches a row once).
    "p": """p AS (
    DELETE FROM durable.texts AS pc USING unnest(%(p_lo)s::bigint[], %(p_hi)s::bigint[]) AS u(lo, hi)
    WHERE pc.space = %(space)s AND pc.id BETWEEN u.lo AND u.hi AND (SELECT n FROM f) > 0)""",
    "q": """q AS (
    INSERT INTO durable.texts (space, id, body)
    SELECT %(space)s, u.* FROM unnest(%(q_id)s::bigint[], %(q_body)s::text[]) AS u
    WHERE (SELECT n FROM f) > 0
    ON CONFLICT (space, id) DO UPDATE SET body = excluded.body)""",
    "x": """x AS (  -- inbox rows the commit consumes (a decision from durable.remote, applied or refused)
    DELETE FROM durable.inbox WHERE space = %(space)s AND id = ANY(%(x_id)s::text[]) AND (SELECT n FROM f) > 0)""",
    # Images and files, once per space: the same bytes again write nothing.
    "a": """a AS (
    INSERT INTO durable.attachments (space, sha256, media_type, size, data)
    SELECT %(space)s, u.* FROM unnest(%(a_sha)s::text[], %(a_type)s::text[], %(a_size)s::bigint[],
                                      %(a_data)s::bytea[]) AS u
    WHERE (SELECT n FROM f) > 0
    ON CONFLICT (space, sha256) DO NOTHING)""",
}
_STATEMENTS: dict[tuple[bool, ...], str] = {}
# A fork (`EntryCopy`): a conversation's entries copied as stored, after the statement that wrote the
# transaction's own rows (a statement sees what the ones before it wrote).
_COPY = """INSERT INTO durable.entries (space, conversation_id, seq, kind, body, tokens)
SELECT space, %(target)s, seq, kind, body, tokens FROM durable.entries
 WHERE space = %(space)s AND conversation_id = %(source)s AND seq <= %(to_seq)s"""

_COPIED_TOTALS = f"""INSERT INTO durable.conversations AS c (space, conversation_id, entries, tokens, attachments)
SELECT %(space)s, %(target)s, count(*), CASE WHEN count(tokens) = count(*) THEN coalesce(sum(tokens), 0) END,
       CASE WHEN %(sealed)s THEN NULL ELSE count(*) FILTER (WHERE strpos(body, %(mark)s) > 0) END
  FROM durable.entries WHERE space = %(space)s AND conversation_id = %(source)s AND seq <= %(to_seq)s
   AND {CONTEXT_ROWS}
ON CONFLICT (space, conversation_id) DO UPDATE SET entries = c.entries + excluded.entries,
                                                   tokens = c.tokens + excluded.tokens,
                                                   attachments = c.attachments + excluded.attachments"""


def _statement(fence: bool, shape: tuple[bool, ...]) -> str:
    """The statement that writes the tables that have rows (`shape`: tasks, entries,
    submissions, documents, inbox rows consumed, pieces dropped, pieces written, attachments),
    beginning with the fence or inside a fenced transaction (one of 512, made once each)."""
    key = (fence, *shape)
    sql = _STATEMENTS.get(key)
    if sql is None:
        parts = [_FENCE if fence else _FENCED, *(_INSERTS[k] for k, has in zip("tesdxpqa", shape, strict=True) if has)]
        sql = _STATEMENTS[key] = "WITH " + ",\n".join(parts) + "\nSELECT n FROM f"
    return sql


class PostgresWrites:
    """The PostgreSQL primitives of the group-commit policy
    (`durable.storage.group_commit.Transactions`), on the connection of `link` and under `lease`.
    `commits` counts the transactions written (a group once); `fault`, for tests, is called on
    the writer thread at "before_commit" and "after_commit" of every transaction."""

    def __init__(self, link: Link, lease: Lease, *, location: str, reconnect_seconds: float) -> None:
        self.link = link
        self.lease = lease
        self.location = location
        self.reconnect_seconds = reconnect_seconds
        self.unknown: CommitOutcomeUnknown | None = None  # set: this store commits nothing more
        self.fault: Callable[[str, Any], None] | None = None
        self.commits = 0
        self.texts = HeldTexts()  # the long texts the space keeps apart (durable.storage.texts)
        self.sealer: Sealer | None = None  # set: the space is encrypted (`durable.storage.sealing`)

    def refusal(self) -> StorageError | None:
        return self.unknown or self.lease.lost

    def write(self, rows: EncodedBatch) -> None:
        if rows.copies:  # more than one statement: in a transaction of its own
            self.begin(rows.barrier)
            self.apply(rows)
            self.commit()
            return
        self.texts.begin()
        self._execute(True, rows, lazy=not rows.barrier)
        self.texts.commit()

    def begin(self, barrier: bool) -> None:
        conn = self.link.conn
        conn.execute("BEGIN")
        conn.execute(f"WITH {_FENCE} SELECT n FROM f", self._fence(lazy=not barrier))
        self.texts.begin()

    def apply(self, rows: EncodedBatch) -> None:
        self._execute(False, rows, lazy=False)

    def savepoint(self) -> None:
        self.link.conn.execute("SAVEPOINT batch")
        self.texts.savepoint()

    def rollback_to_savepoint(self) -> None:
        self.link.conn.execute("ROLLBACK TO SAVEPOINT batch")
        self.texts.rollback_to_savepoint()

    def release_savepoint(self) -> None:
        self.link.conn.execute("RELEASE SAVEPOINT batch")
        self.texts.release_savepoint()

    def commit(self) -> None:
        self.link.conn.execute("COMMIT")
        self.texts.commit()

    def rollback(self, failure: BaseException) -> None:
        self.texts.rollback()
        if self.link.conn is not None:
            driver.rollback(self.link.conn)

    def refused(self, failure: Exception) -> bool:
        psycopg = driver.import_psycopg()
        if isinstance(failure, psycopg.Error) and driver.is_connection_error(failure, self.link.conn):
            return False
        return _refused_for_its_rows(failure)

    def translate(self, failure: Exception) -> StorageError:
        loc = self.location
        state = getattr(failure, "sqlstate", None) or ""
        text = " ".join(str(failure).split())
        if state == "23505":
            diag: Any = getattr(failure, "diag", None)
            return CommitRefused(f"A commit to {loc} was refused and rolled back: UNIQUE constraint "
                                 f"{diag.constraint_name} violated ({diag.message_detail or text})", location=loc)
        if state == "53100":
            return DiskFull(f"A commit to {loc} was rolled back: the server's disk is full ({text})", location=loc)
        if _refused_for_its_rows(failure):
            return CommitRefused(f"A commit to {loc} was refused and rolled back: {text}", location=loc)
        return CommitFailed(f"A commit to {loc} failed and was rolled back ({text})", location=loc)

    def settle(self, attempt: Callable[[], None]) -> None:
        psycopg = driver.import_psycopg()
        lease = self.lease
        for _ in range(_ATTEMPTS):
            try:
                conn = self.link.ensure(time.monotonic() + self.reconnect_seconds)
            except ServerUnavailable:  # nothing was sent; if the lease has surely run out meanwhile, say so
                lost = lease.check_expiry(self.location)
                if lost is not None:
                    raise lost from None
                raise
            expected, sent = lease.commits + 1, time.monotonic()
            try:
                if self.fault is not None:
                    self.fault("before_commit", conn)
                attempt()
                if self.fault is not None:
                    self.fault("after_commit", conn)
            except psycopg.Error as exc:
                if not driver.is_connection_error(exc, conn):
                    if exc.sqlstate == driver.FENCE_SQLSTATE:
                        driver.rollback(conn)
                        raise self._lost(conn) from None
                    raise
                self.link.drop()
                landed = self._landed(expected)
                if landed is None:
                    self.unknown = CommitOutcomeUnknown(
                        f"The connection to the PostgreSQL server {self.link.server} broke during a commit to "
                        f"{self.location} and could not be made again within {self.reconnect_seconds:g} s, so "
                        f"whether the commit landed is unknown ({' '.join(str(exc).split())}). This store commits "
                        f"nothing more: open the space again", location=self.location)
                    raise self.unknown from exc
                if not landed:
                    if lease.lost is not None:
                        raise lease.lost from None
                    continue
                self.texts.commit()  # it landed: what it wrote of the texts is the space's now
            lease.commits = expected
            if lease.lost is None:
                lease.renewed(sent)
            self.commits += 1
            return
        raise CommitFailed(f"A commit to {self.location} was not written: the connection to the server broke "
                           f"{_ATTEMPTS} times before it landed", location=self.location)

    def _execute(self, fence: bool, rows: EncodedBatch, *, lazy: bool) -> None:
        totals = context_totals(rows.entries) if rows.entries else []  # of the plain bodies, before sealing
        rows, puts, drops = written_texts(rows, self.texts)
        if self.sealer is not None:  # an encrypted space (`durable.storage.postgres.keys`)
            rows, puts = sealed(rows, puts, self.sealer)
        tasks, entries, subs, docs = rows.tasks, rows.entries, rows.submissions, rows.live
        params = self._fence(lazy)
        if tasks:
            params.update(t_id=[t.id for t in tasks], t_cid=[t.conversation_id for t in tasks],
                          t_kind=[t.kind for t in tasks], t_state=[t.state for t in tasks],
                          t_live=[t.live for t in tasks], t_parent=[t.parent_id for t in tasks],
                          t_body=[t.body for t in tasks], t_texts=[t.texts for t in tasks])
        if entries:
            params.update(e_cid=[e[0] for e in entries], e_seq=[e[1] for e in entries],
                          e_kind=[e[2] for e in entries], e_body=[e[3] for e in entries],
                          e_tokens=[e[4] for e in entries])
            params.update(c_cid=[x[0] for x in totals], c_entries=[x[1] for x in totals],
                          c_tokens=[x[2] for x in totals], c_attachments=[x[3] for x in totals])
        if subs:
            params.update(s_id=[x[0] for x in subs], s_cid=[x[1] for x in subs], s_status=[x[2] for x in subs],
                          s_body=[x[3] for x in subs])
        if docs:
            params.update(d_cid=[x[0] for x in docs], d_body=[x[1] for x in docs], d_texts=[x[2] for x in docs])
        if rows.inbox:
            params.update(x_id=list(rows.inbox))
        if drops:
            params.update(p_lo=[x[0] for x in drops], p_hi=[x[1] for x in drops])
        if puts:
            params.update(q_id=[x[0] for x in puts], q_body=[x[1] for x in puts])
        if rows.attachments:
            params.update(a_sha=[x[0] for x in rows.attachments], a_type=[x[1] for x in rows.attachments],
                          a_size=[x[2] for x in rows.attachments], a_data=[x[3] for x in rows.attachments])
        shape = (bool(tasks), bool(entries), bool(subs), bool(docs), bool(rows.inbox), bool(drops), bool(puts),
                 bool(rows.attachments))
        self.link.conn.execute(_statement(fence, shape), params, prepare=True)
        for source, target, to_seq in rows.copies:
            copy = {"space": params["space"], "source": source, "target": target, "to_seq": to_seq,
                    "sealed": self.sealer is not None, "mark": ATTACHMENT_MARK}
            self.link.conn.execute(_COPY, copy)
            self.link.conn.execute(_COPIED_TOTALS, copy)

    def _fence(self, lazy: bool) -> dict[str, Any]:
        lease = self.lease
        return {"space": lease.space, "epoch": lease.epoch, "seconds": lease.seconds, "lazy": lazy}

    def _landed(self, expected: int) -> bool | None:
        """Whether this epoch's commit number `expected` landed, asked on a new connection."""
        psycopg = driver.import_psycopg()
        try:
            conn = self.link.ensure(time.monotonic() + self.reconnect_seconds)
        except ServerUnavailable:
            return None
        try:
            return resolve(conn, self.lease, expected, self.location)
        except psycopg.Error:
            self.link.drop()
            return None

    def _lost(self, conn: Any) -> LockLost:
        lease = self.lease
        try:
            return lease.lose(why_lost(conn, lease, self.location))
        except Exception:  # noqa: BLE001 - the reason is unknown; the lease is lost all the same
            return lease.lose(lost_error(lease, self.location, None))


def _refused_for_its_rows(exc: Any) -> bool:
    """A constraint (class 23) or a value the server or driver refuses (class 22, or none sent)."""
    if isinstance(exc, _UNSENDABLE):
        return True
    state = getattr(exc, "sqlstate", None) or ""
    return state.startswith(("22", "23")) or (not state and isinstance(exc, driver.import_psycopg().DataError))
