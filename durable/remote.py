"""The host API from another process: submit into, wait on and follow a PostgreSQL session space
that some other process owns (or that nobody owns right now).

`RemoteSpace(dsn, space)` never takes the space's lease. `submit` puts the input in the space's
inbox (`durable.inbox`): committed there, it is acknowledged (it survives any crash from then
on), and a `NOTIFY durable_inbox` (payload: the space) is sent for anything that listens. The
space's owner (a harness on `PostgresStorage`, resumed) places each inbox input as a submission
of the same id, queued behind an active run, through its normal submit path, in one commit that
also deletes the inbox row (durable.engine.inbox): exactly once, even across crashes. Nobody
owning the space, a worker (`durable worker`) takes it over, since an inbox input is live work.

`approve` / `deny` put a decision on a tool call waiting for approval in the same inbox, applied
by the owner as `Harness.approve` / `deny` in a commit that deletes its row (exactly once).
`status`, `wait` and `follow` read what the owner committed, polling every `poll_seconds`: `wait`
returns what `SubmissionHandle.wait()` returns on the owner; `follow` yields the committed live
document now, then each change it sees (polling may skip a document replaced within one interval).

psycopg runs synchronously in a worker thread, one connection per `RemoteSpace` (made again once
if it broke); every error is a `DurableError` naming the server (never its password) and the space.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, TypeVar

import anyio

from .errors import ApprovalRejected, ServerUnavailable, StorageError, UnknownSubmission
from .inputs import answer_text, check_conversation_id, check_text
from .records import EMPTY_LIVE, ApprovalSlot, Live, Queued, SubmissionStatus
from .storage import rows as _rows
from .storage.postgres import decisions as _pg_decisions, driver as _pg_driver, schema as _pg_schema
from .tools.arguments import check_edit

T = TypeVar("T")

_STATUS = """SELECT (SELECT body FROM durable.submissions WHERE space = %(space)s AND id = %(id)s),
                    EXISTS (SELECT 1 FROM durable.inbox WHERE space = %(space)s AND id = %(id)s)"""


class RemoteSpace:
    """A session space seen from a process that does not own it. See the module docstring.

    `async with RemoteSpace(dsn, "alice") as space: sid = await space.submit("hi");
    status = await space.wait(sid)`."""

    def __init__(self, dsn: str, space: str = "default", *, poll_seconds: float = 0.1,
                 connect_timeout: float = 10.0) -> None:
        if not poll_seconds > 0:
            raise ValueError(f"poll_seconds must be positive, not {poll_seconds!r}")
        self.server, self._password, self.location = _pg_driver.space_at(dsn, space)
        self._dsn = dsn
        self.space = space
        self.poll_seconds = poll_seconds
        self.connect_timeout = connect_timeout
        self._conn: Any = None
        self._lock = threading.Lock()

    async def __aenter__(self) -> RemoteSpace:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ host API

    async def submit(self, text: str, conversation_id: str = "root") -> str:
        """Put an input in the space's inbox; returns its submission id once it is committed
        (acknowledged: it will be answered or settled unanswered by an owner, now or later)."""
        check_text(text, check_conversation_id(conversation_id), plain=True)  # the inbox's text column
        sid = f"sub_{uuid.uuid4().hex[:16]}"
        now = time.time()

        def insert(c: Any) -> None:
            with c.transaction():
                c.execute("INSERT INTO durable.leases (space) VALUES (%s) ON CONFLICT (space) DO NOTHING",
                          (self.space,))  # a space nobody opened yet: a worker finds it by its lease row
                # ON CONFLICT: a retry after a connection broke during COMMIT (an id placed and
                # deleted meanwhile is inserted again, and deleted unplaced by the owner's take).
                c.execute("INSERT INTO durable.inbox (space, id, conversation_id, text, created_at) "
                          "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (space, id) DO NOTHING",
                          (self.space, sid, conversation_id, text, now))
                c.execute("SELECT pg_notify('durable_inbox', %s)", (self.space,))
        await self._run(insert, "submitting an input")
        return sid

    async def approve(self, call_id: str, arguments: Mapping[str, Any] | None = None) -> None:
        """Approve the tool call `call_id`, waiting for approval in this space, to run with edited
        `arguments` (a JSON object) or, None, the model's. Returns once the decision is committed
        in the inbox; the owner applies it (now, or once a harness owns the space) exactly as
        `Harness.approve` does. Raises `ApprovalRejected` at once when no call of that id waits
        for a decision in the space's live documents or another decision on it is in the inbox
        (two deciders at once: one wins), and `EditRejected` (an `ApprovalRejected`) when the
        edited arguments do not match the tool's schema kept with the waiting call (checked with
        the validator the owner checks with, in the transaction that puts the decision); one the
        owner refuses later (a call waiting since before its schema was kept) is reported there
        and dropped."""
        text = None
        if arguments is not None:
            try:
                text = json.dumps(dict(arguments), ensure_ascii=False)
            except (TypeError, ValueError) as exc:
                raise ApprovalRejected(f"Tool call {call_id} was not approved: the edited arguments are not a JSON "
                                       f"object ({exc})", call_id=str(call_id)) from None

        def check(slot: ApprovalSlot) -> None:
            check_edit(slot, call_id, text)

        await self._decide(call_id, {"call_id": call_id, "approve": True, "arguments": text, "reason": ""}, check)

    async def deny(self, call_id: str, reason: str = "") -> None:
        """Deny the tool call `call_id`, waiting for approval in this space, for `reason` (the
        model reads it), as `Harness.deny` does; see `approve`."""
        await self._decide(call_id, {"call_id": call_id, "approve": False, "arguments": None, "reason": str(reason)})

    async def _decide(self, call_id: str, decision: dict[str, Any],
                      check: Callable[[ApprovalSlot], None] | None = None) -> None:
        if not isinstance(call_id, str):
            raise ApprovalRejected(f"No tool call {call_id} waits for a decision in {self.location}; nothing was "
                                   f"decided", call_id=str(call_id))
        did = f"dec_{uuid.uuid4().hex[:16]}"
        await self._run(lambda c: _pg_decisions.put_decision(c, self.space, self.location, did, decision, check),
                        "deciding a tool call")

    async def status(self, submission_id: str) -> SubmissionStatus:
        """`Queued()` while the input waits in the inbox or as a queued submission; the settled
        status (`Answered`, `Unanswered`) once it is. Raises `UnknownSubmission`."""
        if not _pg_driver.storable(submission_id):
            raise UnknownSubmission(f"Submission {submission_id!r} does not exist in {self.location}")
        body, in_inbox = await self._run(  # one statement: one snapshot (a row moving is seen once)
            lambda c: c.execute(_STATUS, {"space": self.space, "id": submission_id}).fetchone(), "reading a status")
        if body is not None:
            return _rows.submission(body, submission_id, self.location).status
        if in_inbox:
            return Queued()
        raise UnknownSubmission(f"Submission {submission_id} does not exist in {self.location}")

    async def wait(self, submission_id: str) -> SubmissionStatus:
        """Wait until the submission settles; returns `Answered(text, seq)` or `Unanswered(reason, detail)`."""
        while isinstance(status := await self.status(submission_id), Queued):
            await anyio.sleep(self.poll_seconds)
        return status

    async def answer(self, submission_id: str) -> str:
        """`wait`, then the answer's text; raises `SubmissionUnanswered` when it got none."""
        return answer_text(await self.wait(submission_id), submission_id, self.location)

    async def live(self, conversation_id: str = "root") -> Live:
        """The conversation's live document as committed (empty before its first input)."""
        body = await self._live_body(conversation_id)
        return EMPTY_LIVE if body is None else _rows.live(body, conversation_id, self.location)

    async def follow(self, conversation_id: str = "root") -> AsyncIterator[Live]:
        """The committed live document now, then each change seen (polling; never ends: break)."""
        last: str | bool | None = False
        while True:
            body = await self._live_body(conversation_id)
            if body != last:
                last = body
                yield EMPTY_LIVE if body is None else _rows.live(body, conversation_id, self.location)
            await anyio.sleep(self.poll_seconds)

    async def close(self) -> None:
        """Close the connection (a later call makes a new one). Idempotent."""
        def drop() -> None:
            with self._lock:
                self._drop()
        await anyio.to_thread.run_sync(drop)

    # ------------------------------------------------------------------ plumbing

    async def _live_body(self, conversation_id: str) -> str | None:
        if not _pg_driver.storable(conversation_id):
            return None
        row = await self._run(lambda c: c.execute(
            "SELECT body FROM durable.documents WHERE space = %s AND conversation_id = %s",
            (self.space, conversation_id)).fetchone(), "reading a live document")
        return None if row is None else str(row[0])

    async def _run(self, fn: Callable[[Any], T], what: str) -> T:
        return await anyio.to_thread.run_sync(self._in_thread, fn, what)

    def _in_thread(self, fn: Callable[[Any], T], what: str) -> T:
        psycopg = _pg_driver.import_psycopg()
        with self._lock:
            for attempt in (1, 2):  # once more on a new connection if it broke (every call is idempotent)
                if self._conn is None or self._conn.closed or self._conn.broken:
                    self._drop()
                    conn = _pg_driver.connect(self._dsn, server=self.server, space=self.space,
                                              password=self._password, connect_timeout=self.connect_timeout,
                                              lease_seconds=None)
                    try:
                        _pg_schema.migrate(conn, self.location)
                    except BaseException:
                        _pg_driver.close_quietly(conn)
                        raise
                    self._conn = conn
                try:
                    return fn(self._conn)
                except psycopg.Error as exc:
                    detail = _pg_driver.hide(" ".join(str(exc).split()), self._password)
                    if not _pg_driver.is_connection_error(exc, self._conn):
                        _pg_driver.rollback(self._conn)
                        raise StorageError(f"{what.capitalize()} in {self.location} failed: {detail}",
                                           location=self.location) from None
                    self._drop()
                    if attempt == 2:
                        raise ServerUnavailable(f"The connection to the PostgreSQL server {self.server} for "
                                                f"{self.location} was lost {what} ({detail})",
                                                location=self.location) from None
        raise AssertionError("unreachable")

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            _pg_driver.close_quietly(conn)


__all__ = ["RemoteSpace"]
