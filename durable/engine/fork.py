"""Forking a conversation (`Conversation.fork`): a new conversation whose history is another's up
to a seq, made by one commit that copies the entry rows as stored (`Change.copy_entries`: SQL
`INSERT ... SELECT`, never decoded nor encoded again) and writes the new live document.

The fork point must be behind any active run of the source: a run's entries start at its first
input's seq, so a fork at a seq before it is taken whole, and one at or after it is refused. It
must not split a tool round either (a call copied without its result).
"""

from __future__ import annotations

from ..errors import ForkRefused, InvalidInput
from ..inputs import check_conversation_id
from ..records import EMPTY_LIVE, CompactionEntry, Live, StoredEntry, ToolResultEntry
from .session import Session


async def fork(session: Session, source: str, new_id: str, at_seq: int | None) -> None:
    """Commit the fork of `source` as `new_id` up to `at_seq` (None: every entry); see the module."""
    check_conversation_id(new_id)
    location = session.storage.location
    what = f"Conversation {source!r} cannot be forked as {new_id!r} in {location}"
    conv = session.conversation(source)
    if at_seq is not None and (isinstance(at_seq, bool) or not isinstance(at_seq, int) or at_seq < 0):
        raise InvalidInput(f"{what}: at_seq must be a seq (an int >= 0), not {at_seq!r}")
    if at_seq is not None and at_seq > conv.last_seq:
        raise InvalidInput(f"{what}: at_seq {at_seq} is past its last entry (seq {conv.last_seq})")
    if new_id == source or await _exists(session, new_id):
        raise ForkRefused(f"{what}: conversation {new_id!r} exists")
    to_seq = conv.last_seq if at_seq is None else at_seq
    after = await session.storage.get_entries(source, to_seq + 1, to_seq + 1) if to_seq < conv.last_seq else []
    if after and isinstance(after[0].entry, ToolResultEntry):
        raise InvalidInput(f"{what}: seq {to_seq + 1} answers a tool call before at_seq {to_seq}, so the fork would "
                           f"hold a call without its result; fork before the call's message or after its results")
    compaction = await _last_compaction(session, source, to_seq)
    run = conv.live.run  # read after the last await: the change below is built without one
    if run is not None:
        start = _run_start(session, run.inputs)
        if at_seq is None or start is None or at_seq >= start:
            where = "" if start is None else f" from seq {start}"
            raise ForkRefused(f"{what}: {source!r} has an active run (task {run.task_id}){where} at that point; "
                              f"fork before its input, or wait for it to end")
    if _exists_in_head(session, new_id):
        raise ForkRefused(f"{what}: it changed while the fork was prepared; try again")
    change = session.change()
    change.copy_entries(source, new_id, to_seq, compaction)
    change.put_live(new_id, Live(forked_from=source, forked_at=to_seq))
    await session.commit(change)


def _run_start(session: Session, inputs: tuple[str, ...]) -> int | None:
    """The seq of the first input of an active run (where its entries start), if known."""
    seqs = [sub.seq for sid in inputs if (sub := session.submissions.get(sid)) is not None and sub.seq is not None]
    return min(seqs, default=None)


def _exists_in_head(session: Session, conversation_id: str) -> bool:
    conv = session.convs.get(conversation_id)
    return conv is not None and bool(conv.last_seq or conv.queued or conv.live != EMPTY_LIVE)


async def _exists(session: Session, conversation_id: str) -> bool:
    return _exists_in_head(session, conversation_id) or await session.storage.get_live(conversation_id) is not None


async def _last_compaction(session: Session, source: str, to_seq: int) -> StoredEntry | None:
    """The last compaction summary of `source` at or before `to_seq`: the one the head knows, or,
    when that one is later (a fork before it), found among the entries before it."""
    last = session.conversation(source).compaction
    if last is None or last.seq <= to_seq:
        return last
    found = [e for e in await session.storage.get_entries(source, 1, to_seq) if isinstance(e.entry, CompactionEntry)]
    return found[-1] if found else None


__all__ = ["fork"]
