"""The storage protocol: what the engine needs from a session store, in records, never in SQL.

A store holds four kinds of rows: tasks (by id), conversation entries (by conversation and seq,
append-only), submissions (by id) and one live document per conversation; and the bytes of the
images and files they reference, once per session by sha256 (`Batch.attachments`). A `Batch` is one
atomic change to any of them (entries may also be copied from a conversation into a new one:
`EntryCopy`): `commit(batch)` makes all of it durable or none of it. Backends may
group concurrent batches into one transaction, but each batch stays atomic on its own.

Reads the engine makes on its normal path are bounded by what is live, never by history:
`open()` returns only the non-terminal tasks, the unsettled submissions and, per conversation,
its last seq, live document and where its model context starts.

Every store (`SQLiteStorage`, `PostgresStorage`, `MemoryStorage`) keeps the same encoded JSON
(`durable.storage.rows`), so they accept and refuse exactly the same values.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple, Protocol, TypeGuard, runtime_checkable

from attrs import field

from .._frozen import define, frozen
from ..errors import CorruptSession, LockLost
from ..records import Live, StoredEntry, Submission, Task
from .retention import ROWS_PER_COMMIT, Ended, PruneReport


class RawContext(NamedTuple):
    """A model context as stored, undecoded (`Storage.get_context`): the seq and the codec's
    JSON text of each entry, in order, and their estimated tokens (`durable.tokens.stored_tokens`).

    `tokens` is their sum (an int) when every entry was counted; otherwise each entry's, None for
    an entry to decode at once (never counted: an old file's row the migration could not read),
    so that it is counted, or refused, before any request holds it. No text is looked into: damage
    inside an entry is found when the engine decodes it. (A named tuple rather than an attrs
    class: nothing to validate, and cheaper to import.)

    `attachments`: how many of the entries reference an image or a file, when the store knows
    (None: look). `bodies` (and `seqs`) may still be arriving from the store while they are read
    (`durable.storage.joined.StreamedTexts`): reading one not arrived yet waits for it, and
    raises the store's error if it never comes."""

    seqs: Sequence[int]
    bodies: Sequence[str]
    tokens: int | Sequence[int | None]
    attachments: int | None = None


@frozen
class EntryCopy:
    """Conversation `source`'s entries with `seq <= to_seq`, copied into conversation `target` at
    the same seqs as they are stored: the rows are copied by the store (SQL `INSERT ... SELECT`),
    never decoded nor encoded again (`Conversation.fork`). `target` must hold no entry yet."""

    source: str
    target: str
    to_seq: int


@define
class Batch:
    """One atomic change. Later writes of the same task/submission/live in a batch win.

    `barrier`: something outside the process will depend on this commit once it returns (a
    model request or an unsafe tool starts, a caller is told its input was accepted or its
    result is settled), so it must be on disk, with every commit before it, when `commit`
    returns. A batch with `barrier=False` (a *lazy* commit: a partial answer, a safe tool's
    result) is ordered and atomic like any other and survives a process kill, but a power cut
    may lose it until the next barrier is written. A store may make every commit a barrier.

    `first_in_line` (True unless said otherwise): no batch its sender sent before this one is
    still in flight. The commit line sends a change made while earlier ones are in flight with
    False, since it is built on them. A store that refused a batch for a passing cause (a full
    disk, an I/O error) holds back every later batch that is not first in line (refuses it with
    the same error, untried) until one first in line comes (`durable.storage.group_commit`), so
    the file never holds a later commit without an earlier one."""

    tasks: list[Task] = field(factory=list)
    entries: list[StoredEntry] = field(factory=list)
    submissions: list[Submission] = field(factory=list)
    live: dict[str, Live] = field(factory=dict)
    barrier: bool = True
    # The ids of inbox rows this commit consumes (a decision from durable.remote: see `Inbox`): a
    # store with an inbox deletes them in the same transaction; the others have none to delete.
    inbox: list[str] = field(factory=list)
    first_in_line: bool = True
    # Entries copied from one conversation into a new one (`EntryCopy`: a fork), after this
    # batch's own entries are written, in the same transaction.
    copies: list[EntryCopy] = field(factory=list)
    # Bytes of images and files the records of this batch reference (`durable.records.content`), by
    # sha256: (media type, bytes). Stored once per session: a store keeps the first write of a hash.
    attachments: dict[str, tuple[str, bytes]] = field(factory=dict)

    def __bool__(self) -> bool:
        return bool(self.tasks or self.entries or self.submissions or self.live or self.inbox or self.copies
                    or self.attachments)


@frozen
class ConversationState:
    last_seq: int
    live: Live
    last_compaction: StoredEntry | None  # where the model's context starts


@frozen
class Opened:
    """What `Storage.open` found; `warnings`: sentences for the host (little space left)."""

    conversations: dict[str, ConversationState]
    live_tasks: list[Task]
    unsettled: list[Submission]
    next_task_id: int
    warnings: tuple[str, ...] = ()


class Storage(Protocol):
    """A session store. `location` names it in every error message.

    Every method may raise `StorageError` subclasses. `commit` is cancellation-safe: once
    called, the batch is written (or refused) even if the caller is cancelled, and the outcome
    is visible to the next read.
    """

    location: str

    async def open(self) -> Opened:
        """Take ownership (refusing a second owner with `SessionLocked`), check or create the
        schema, and return what is live."""
        ...

    async def commit(self, batch: Batch) -> None: ...

    async def get_task(self, task_id: int) -> Task | None: ...

    async def find_tasks(
        self,
        *,
        kind: str | None = None,
        state: str | None = None,
        conversation_id: str | None = None,
        parent_id: int | None = None,
        limit: int | None = None,
    ) -> list[Task]:
        """Tasks matching every given filter, by id. `state` is a state tag ("running")."""
        ...

    async def get_entries(
        self, conversation_id: str, from_seq: int = 1, to_seq: int | None = None
    ) -> list[StoredEntry]: ...

    async def get_context(self, conversation_id: str, from_seq: int, to_seq: int) -> RawContext:
        """The entries with `from_seq <= seq <= to_seq` that a model context holds, in order and
        undecoded (`RawContext`): no compaction summary and no entry stored as never sent again
        (`durable.tokens.NOT_SENT`). The engine decodes each one when it is first read."""
        ...

    async def get_submission(self, submission_id: str) -> Submission | None: ...

    async def get_live(self, conversation_id: str) -> Live | None: ...

    async def get_attachments(self, hashes: Sequence[str]) -> dict[str, bytes]:
        """The stored bytes of the images and files of `hashes` (sha256 hex digests), by hash; a
        hash the store does not hold is left out. Read only when a request needs them."""
        ...

    async def check_integrity(self) -> list[str]:
        """What is damaged in the store, one line a problem; empty when it is sound. Runs beside
        the commits (it never holds them up); cancelling it stops the check."""
        ...

    async def close(self) -> None:
        """Release the file. Idempotent."""
        ...


@runtime_checkable
class Leased(Protocol):
    """A store owned by a lease that it may lose while open (`PostgresStorage`), as opposed to a
    store owned for as long as it is open (`SQLiteStorage`, `MemoryStorage`: they do not
    implement this). The engine asks it, through `ownership_deadline`, before starting work with
    an effect outside the process, and stops when `wait_lease_lost` returns."""

    def lease_deadline(self) -> float:
        """A `time.monotonic()` time before which the store surely owns its space (-inf: not,
        or no longer)."""
        ...

    @property
    def lease_lost(self) -> LockLost | None:
        """The `LockLost` the store learned, else None."""
        ...

    async def wait_lease_lost(self) -> LockLost:
        """Wait until the store learns it lost its ownership; return that `LockLost`."""
        ...


@frozen
class InboxDecision:
    """A decision another process put in a space's inbox (`durable.remote`: approve or deny the
    tool call `call_id`, waiting for approval): `arguments` the edited arguments (JSON text) or
    None, `reason` a denial's. `id` is its inbox row, deleted by the commit that applies it."""

    id: str
    call_id: str
    approve: bool
    arguments: str | None = None
    reason: str = ""
    created_at: float = 0.0

    @classmethod
    def of_row(cls, id: str, body: str, created_at: float, location: str) -> InboxDecision:
        """The decision of an inbox row (its JSON `body`); `CorruptSession` naming `location` when
        it cannot be read."""
        from . import sealing  # an encrypted file's decisions are sealed (`durable.storage.sqlite.inbox`)

        try:
            return cls(id, **json.loads(sealing.plain(body, location)), created_at=created_at)
        except (TypeError, ValueError) as exc:
            raise CorruptSession(f"A decision in the inbox of {location} cannot be read: {exc}",
                                 location=location) from None


@runtime_checkable
class Inbox(Protocol):
    """A store that other processes can submit into while it is owned (`PostgresStorage`, through
    `durable.remote`; `SQLiteStorage` takes decisions only, from `durable console`); `MemoryStorage`
    does not implement it. Its owner places
    each inbox input as a submission of the same id through the normal submit path; the store
    deletes the inbox row in the commit that writes that submission (so a crash before it leaves
    the row for the next owner, and a row is placed once)."""

    async def take_inbox(self, limit: int) -> list[Submission]:
        """Up to `limit` inbox inputs not yet placed, oldest first, as queued submissions (rows
        whose id is already a submission are deleted, not returned). Does not delete them."""
        ...

    async def wait_inbox(self) -> None:
        """Return once the inbox holds an input (at once if it does)."""
        ...

    async def take_decisions(self, limit: int) -> list[InboxDecision]:
        """Up to `limit` decisions on tool calls (`durable.remote` approve/deny), oldest first. Does
        not delete them: the commit that applies one (or drops it, refused) consumes its row
        (`Batch.inbox`), so a crash before it leaves the decision for the next owner."""
        ...


@runtime_checkable
class Retention(Protocol):
    """A store that can delete ended conversations (`durable.storage.retention`): `SQLiteStorage`,
    `PostgresStorage` and `MemoryStorage` implement it."""

    async def ended(self) -> list[Ended]:
        """Every ended conversation (no live task, no unsettled submission) and when it ended."""
        ...

    async def delete_conversations(self, ids: Sequence[str], *, rows_per_commit: int = ROWS_PER_COMMIT) -> PruneReport:
        """Delete every row of the idle conversations `ids` in commits of at most
        `rows_per_commit` rows, crash-safe; one that is not idle is left alone."""
        ...


_LEASED: dict[type, bool] = {}


def is_leased(storage: object) -> TypeGuard[Leased]:
    """`isinstance(storage, Leased)`, remembered per class: a runtime-checkable protocol is
    checked member by member on every call (~20 µs), and the engine asks before every model
    request and tool call."""
    cls = type(storage)
    found = _LEASED.get(cls)
    if found is None:
        found = _LEASED[cls] = isinstance(storage, Leased)
    return found


def ownership_deadline(storage: Storage) -> float:
    """A `time.monotonic()` time before which `storage` surely still owns what it opened: +inf for
    a store that owns it until closed (a locked file), the lease's local deadline otherwise."""
    return storage.lease_deadline() if is_leased(storage) else float("inf")


def ownership_lost(storage: Storage) -> LockLost | None:
    """The `LockLost` a leased store learned, else None (always None for a store without lease)."""
    return storage.lease_lost if is_leased(storage) else None
