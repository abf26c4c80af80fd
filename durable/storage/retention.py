"""Retention: which ended conversations a prune deletes, and what it reports (docs/spec.md §6).

A conversation is *ended* when it is idle: no live task and no unsettled submission; its end is
the `updated_at` of its last task. Every store (`Retention`) lists its ended conversations
(`ended`) and deletes a chosen few (`delete_conversations`) in bounded commits: first one commit
marks them as being deleted (a *tombstone* each) and drops their live documents, so that they
are gone for every reader at once; then commits of at most `rows_per_commit` rows delete their
submissions, tasks and entries; a last one drops the tombstones. A crash between two commits
leaves a consistent store: readers skip the rows of a tombstoned conversation, and the next open
or prune finishes its deletion. Nothing live is ever deleted.

`CONVERSATION_TABLES` lists every table whose rows belong to a conversation (by its
`conversation_id` column); a store deletes them all, in that order. Attachments belong to no one
conversation (shared by hash): once the rows are gone, a sweep deletes those no row references
any more (`durable.storage.sweep`), in commits of at most `rows_per_commit` attachments.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._frozen import frozen

ROWS_PER_COMMIT = 500
"""Rows a prune deletes in one transaction at most (its commits stay short: the owner's own
commits go on between them)."""

TOMBSTONE = "deleting:"
"""The prefix of a `meta` key that marks a conversation as being deleted (the rest is its id)."""

TOMBSTONES = f"key >= '{TOMBSTONE}' AND key < '{TOMBSTONE[:-1]}{chr(ord(TOMBSTONE[-1]) + 1)}'"
"""The SQL condition on a `meta` table's `key` that selects every tombstone (a range of its key)."""


def tombstoned_sql(meta: str) -> str:
    """A query of the ids of the conversations being deleted, in the `meta` table named `meta`."""
    return f"SELECT substr(key, {len(TOMBSTONE) + 1}) FROM {meta} WHERE {TOMBSTONES}"


def skip_tombstoned(meta: str) -> str:
    """An SQL condition that leaves out the rows of conversations being deleted (readers add it)."""
    return f"conversation_id NOT IN ({tombstoned_sql(meta)})"


CONVERSATION_TABLES = ("submissions", "tasks", "entries")
"""The tables whose rows belong to a conversation, deleted in this order after its live document.
A table added later is appended here: a prune deletes its rows too (attachments are swept)."""


@frozen
class Ended:
    """An ended conversation: its id and when it ended (clock seconds; 0.0 if it has no task)."""

    conversation_id: str
    ended_at: float


@frozen
class PruneReport:
    """What a prune (or a delete) did: `conversations` deleted, `rows` deleted, in `commits`
    transactions; `reclaimed` bytes given back to the file system; `reclaimable` bytes a full
    `VACUUM` would give back (a file made without incremental vacuum: `durable prune --vacuum`);
    `attachments`: attachments deleted because no row left references them (`durable.storage.
    sweep`; counted in `rows` too)."""

    conversations: tuple[str, ...] = ()
    rows: int = 0
    commits: int = 0
    reclaimed: int = 0
    reclaimable: int = 0
    attachments: int = 0

    def plus(self, other: PruneReport) -> PruneReport:
        return PruneReport(self.conversations + other.conversations, self.rows + other.rows,
                           self.commits + other.commits, self.reclaimed + other.reclaimed, other.reclaimable,
                           self.attachments + other.attachments)


def choose(ended: Sequence[Ended], *, ended_before: float | None, keep_last: int = 0) -> list[str]:
    """The ids of `ended` conversations a prune deletes: those that ended before `ended_before`
    (None: any), except the `keep_last` that ended last."""
    if keep_last < 0:
        raise ValueError(f"keep_last must be 0 or more, not {keep_last}")
    newest_first = sorted(ended, key=lambda e: (e.ended_at, e.conversation_id), reverse=True)
    return sorted(e.conversation_id for e in newest_first[keep_last:]
                  if ended_before is None or e.ended_at < ended_before)


def groups(ids: Sequence[str], rows_per_commit: int) -> list[list[str]]:
    """`ids` in groups tombstoned by one commit each (two rows a conversation: its tombstone and
    its live document)."""
    if rows_per_commit < 2:
        raise ValueError(f"rows_per_commit must be 2 or more, not {rows_per_commit}")
    size = rows_per_commit // 2
    return [list(ids[i:i + size]) for i in range(0, len(ids), size)]


__all__ = ["CONVERSATION_TABLES", "ROWS_PER_COMMIT", "TOMBSTONE", "TOMBSTONES", "Ended", "PruneReport", "choose",
           "groups", "skip_tombstoned", "tombstoned_sql"]
