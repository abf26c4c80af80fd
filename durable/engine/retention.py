"""Deleting ended conversations from a running harness (`Harness.prune`, `Conversation.delete`):
the store deletes them in bounded commits (`durable.storage.retention`), while the head refuses
new input to them and never offers one it holds live (docs/spec.md §6)."""

from __future__ import annotations

from typing import Protocol

from ..errors import ConversationNotEnded, HarnessError
from ..storage.protocol import Retention, Storage
from ..storage.retention import ROWS_PER_COMMIT, PruneReport, choose
from .session import Session


class Host(Protocol):
    """What a prune uses of its harness."""

    storage: Storage

    @property
    def session(self) -> Session: ...

    def _check_open(self) -> None: ...


async def prune(h: Host, *, ended_before: float | None, keep_last: int = 0, only: str | None = None,
                rows_per_commit: int = ROWS_PER_COMMIT) -> PruneReport:
    """Delete the ended conversations that ended before `ended_before` (clock seconds; None: any)
    except the `keep_last` that ended last; `only`: that one conversation, `ConversationNotEnded`
    when it is not idle. Conversations live in the head (a run, a queued input, a live task, an
    input in flight) are never deleted; input submitted to one while it is deleted is refused."""
    h._check_open()
    storage = h.storage
    if not isinstance(storage, Retention):
        raise HarnessError(f"The store {storage.location} cannot delete conversations")
    ended = await storage.ended()
    session = h.session
    busy = {t.conversation_id for t in session.tasks.values()} | session.deleting
    busy |= {cid for cid, conv in session.convs.items() if conv.live.run is not None or conv.queued}
    busy |= {s.conversation_id for s in session.submissions.values()}
    if only is not None:
        ended = [e for e in ended if e.conversation_id == only]
        if not ended or only in busy:
            raise ConversationNotEnded(f"Conversation {only!r} in {storage.location} is not ended (it has a live "
                                       f"task or an unsettled input, or does not exist); nothing was deleted")
    ids = [cid for cid in choose(ended, ended_before=ended_before, keep_last=keep_last) if cid not in busy]
    session.deleting.update(ids)  # no await since `busy` was read: nothing slipped in between
    report = await storage.delete_conversations(ids, rows_per_commit=rows_per_commit)
    session.deleting.difference_update(ids)  # left set if the store failed: its rows may be half gone
    for cid in report.conversations:
        session.convs.pop(cid, None)
    return report


__all__ = ["PruneReport", "prune"]
