"""Decisions on tool calls waiting for approval, put into a space's inbox by another process.

One way for every writer of a decision (`durable.remote.RemoteSpace.approve`/`deny` and the
console over PostgreSQL): `put_decision` runs one transaction holding an advisory lock on the
space's decisions, refuses a call that no live document lists as waiting for approval or that
already has a decision in the inbox (two deciders at once: one wins, the other is told with
`ApprovalRejected`), inserts the row with its `decision` and notifies `durable_inbox`. The owner
applies a decision once, in the commit that deletes its row.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from ...errors import ApprovalRejected
from ...records import ApprovalSlot
from .. import rows
from . import driver


def waiting(c: Any, space: str, location: str, call_id: str) -> ApprovalSlot | None:
    """The approval slot of `call_id` in the space's live documents, if one waits."""
    if not driver.storable(call_id):
        return None
    found = c.execute("SELECT conversation_id, body FROM durable.documents WHERE space = %s", (space,)).fetchall()
    return next((slot for cid, body in found for slot in rows.live(body, cid, location).approvals
                 if slot.call_id == call_id), None)


def put_decision(c: Any, space: str, location: str, did: str, decision: dict[str, Any],
                 check: Callable[[ApprovalSlot], None] | None = None) -> None:
    """Put `decision` (`call_id`, `approve`, `arguments`, `reason`) on the waiting call in the
    inbox of `space` as the row `did`, in one transaction on the connection `c`; `check(slot)`
    may refuse it (edited arguments against the tool's schema). A row `did` already there (a
    first try whose connection broke during COMMIT) is success. Raises `ApprovalRejected`."""
    call_id = str(decision["call_id"])
    with c.transaction():
        c.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"durable.console.decisions:{space}",))
        if c.execute("SELECT 1 FROM durable.inbox WHERE space = %s AND id = %s", (space, did)).fetchone():
            return
        slot = waiting(c, space, location, call_id)
        if slot is None:
            raise ApprovalRejected(f"No tool call {call_id} waits for a decision in {location}; nothing was decided",
                                   call_id=call_id)
        if check is not None:
            check(slot)
        for (earlier,) in c.execute("SELECT decision FROM durable.inbox WHERE space = %s AND decision IS NOT NULL",
                                    (space,)).fetchall():
            if _call_of(earlier) == call_id:
                raise ApprovalRejected(f"Tool call {call_id} in {location} was already decided (another decision "
                                       "is in its inbox); nothing was decided", call_id=call_id, tool=slot.tool)
        body = json.dumps(decision, ensure_ascii=False)
        c.execute("INSERT INTO durable.inbox (space, id, conversation_id, text, created_at, decision) "
                  "VALUES (%s, %s, '', '', %s, %s)", (space, did, time.time(), body))
        c.execute("SELECT pg_notify('durable_inbox', %s)", (space,))


def _call_of(decision: str) -> object:
    try:
        return json.loads(decision).get("call_id")
    except (ValueError, AttributeError):
        return None


__all__ = ["put_decision", "waiting"]
