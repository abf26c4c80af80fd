"""The head of a session, and a change in the making.

The *head* is the state after every commit made so far in this process: the live tasks, the
unsettled submissions and, per conversation, its last seq, live document, model context and
queued inputs. Task code reads it (through the runtime) to build the next `Change`, so two
tasks editing the same live document never lose each other's edits. Only live things are kept:
nothing here grows with history except the context of a conversation that is never compacted.

A `Change` records the writes of one commit and checks each task move against its kind's
transition table before anything is written. It is handed to the commit line
(`durable.engine.session.Session.commit`), which applies it to the head and to the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from .._frozen import define, evolve
from ..errors import HarnessError, IllegalTransition
from ..records import EMPTY_LIVE, Entry, Live, StoredEntry, Submission, Task
from ..storage.protocol import Batch, EntryCopy, Opened
from .context import Context
from .transitions import Transitions


@define
class ConversationHead:
    id: str
    last_seq: int = 0
    live: Live = EMPTY_LIVE
    committed_live: Live = EMPTY_LIVE
    compaction: StoredEntry | None = None
    _context: Context | None = attrs.field(default=None, alias="context")  # None: empty, made on first use
    queued: list[str] = attrs.field(factory=list)  # submissions waiting for the next run
    context_loaded: bool = False
    stored: bool = False  # a live document of it is committed (it exists in the file)

    @property
    def context(self) -> Context:
        """The model context (see `durable.engine.context`): appended to by the commits of this
        process; replaced as a whole (by a compaction, a refused commit) by assigning entries."""
        if self._context is None:
            self._context = Context()
        return self._context

    @context.setter
    def context(self, entries: Iterable[StoredEntry]) -> None:
        self._context = entries if isinstance(entries, Context) else Context(entries)

    def unload(self) -> None:
        """Drop the context from memory: it is read from the store when next used."""
        self._context = None
        self.context_loaded = False


class Head:
    """The head of one session (see the module docstring)."""

    def __init__(self, opened: Opened, now: Callable[[], float], tables: Mapping[str, Transitions]) -> None:
        self.now = now
        self.tables = dict(tables)
        self.tasks: dict[int, Task] = {t.id: t for t in opened.live_tasks}
        # Child tasks ended while their parent lives: the parent reads their endings from here
        # instead of from the store; dropped once the parent ends.
        self.ended_children: dict[int, Task] = {}
        self.submissions: dict[str, Submission] = {s.id: s for s in opened.unsettled}
        self.convs: dict[str, ConversationHead] = {}
        self.deleting: set[str] = set()  # conversations being deleted (`durable.engine.retention`)
        for cid, state in opened.conversations.items():
            self.convs[cid] = ConversationHead(cid, state.last_seq, state.live, state.live, state.last_compaction,
                                               stored=True)
        for sub in sorted(opened.unsettled, key=lambda s: (s.created_at, s.id)):
            if sub.task_id is None:
                self.conversation(sub.conversation_id).queued.append(sub.id)
        self.next_task_id = opened.next_task_id

    def conversation(self, conversation_id: str) -> ConversationHead:
        conv = self.convs.get(conversation_id)
        if conv is None:
            conv = self.convs[conversation_id] = ConversationHead(conversation_id, context_loaded=True)
        return conv

    def new_task_id(self) -> int:
        tid = self.next_task_id
        self.next_task_id += 1
        return tid

    def change(self, *, barrier: bool = True) -> Change:
        return Change(self, barrier=barrier)

    def transitions(self, task: Task) -> Transitions:
        table = self.tables.get(task.kind)
        if table is None:
            raise HarnessError(f"Task {task.id} has kind {task.kind!r}, which this harness does not know")
        return table


class Change:
    """One commit in the making. Read the head through it, record writes, then hand it to
    `Runtime.commit` (task code) or `Session.commit` (the host API).

    `barrier` (True unless the task code that builds it says otherwise): something outside the
    process depends on this commit once it returns (a request is sent, an unsafe tool runs, a
    caller is answered), so the store puts it on disk before `commit` returns. A change with
    `barrier = False` is a *lazy* commit: ordered and atomic, safe from a process kill, made
    durable by the next barrier (see `Batch.barrier`)."""

    def __init__(self, head: Head, *, barrier: bool = True) -> None:
        self.head = head
        self.batch = Batch()
        self.barrier = barrier
        self.tasks: dict[int, Task] = {}  # the tasks this change writes, by id
        self.lives: dict[str, Live] = {}  # the live documents it writes, by conversation
        # Conversations it makes by copying another's entries (a fork): their last seq and summary.
        self.forks: dict[str, tuple[int, StoredEntry | None]] = {}

    def task(self, task_id: int) -> Task:
        return self.tasks.get(task_id) or self.head.tasks[task_id]

    def written(self, task_id: int) -> Task | None:
        """The task as this change writes it, if it does."""
        return self.tasks.get(task_id)

    def create_task(self, task: Task) -> Task:
        """Write a new task; its kind's table must allow its first position."""
        self.head.transitions(task).check_start(task, task.kind)
        task = evolve(task, updated_at=self.head.now())
        self.tasks[task.id] = task
        return task

    def put_task(self, task: Task, *, progress: bool | None = None, stamp: bool = True) -> Task:
        """Write a live task. The move must be in its kind's transition table
        (`IllegalTransition` otherwise). A changed checkpoint is durable progress and clears
        `restarts`; `progress=False` says it is not (streamed output, a written-back state).
        `updated_at` becomes now, unless `stamp=False` (crash handling: the charge of an open keeps
        the last time the task committed before its process died, the interrupt)."""
        old = self.tasks.get(task.id) or self.head.tasks.get(task.id)
        if old is None:
            raise IllegalTransition(f"Task {task.id} ({task.kind}) is not live in this session; it cannot change")
        self.head.transitions(task).check(old, task, task.kind)
        if progress is None:
            progress = old.checkpoint != task.checkpoint
        at = self.head.now() if stamp else task.updated_at
        if progress and task.restarts:
            task = evolve(task, restarts=0, updated_at=at)
        else:
            task = evolve(task, updated_at=at)
        self.tasks[task.id] = task
        return task

    def append(self, conversation_id: str, entry: Entry) -> int:
        conv = self.head.conversation(conversation_id)
        pending = sum(1 for e in self.batch.entries if e.conversation_id == conversation_id)
        seq = conv.last_seq + pending + 1
        self.batch.entries.append(StoredEntry(conversation_id, seq, entry))
        return seq

    def copy_entries(self, source: str, target: str, to_seq: int, compaction: StoredEntry | None) -> None:
        """Copy `source`'s entries up to `to_seq` into the new conversation `target`, as stored
        (`durable.storage.protocol.EntryCopy`); `compaction`: the last summary among them."""
        self.batch.copies.append(EntryCopy(source, target, to_seq))
        self.forks[target] = (to_seq, compaction)

    def put_submission(self, submission: Submission) -> None:
        self.batch.submissions.append(submission)

    def put_attachments(self, blobs: Mapping[str, tuple[str, bytes]]) -> None:
        """Store the bytes of images and files (sha256: (media type, bytes)) that a record of this
        change references, in its commit; bytes the store holds already are kept as they are."""
        self.batch.attachments.update(blobs)

    def consume_inbox(self, inbox_id: str) -> None:
        """This commit consumes the store's inbox row `inbox_id` (a decision from `durable.remote`):
        the store deletes it in the same transaction, so it is applied exactly once."""
        self.batch.inbox.append(inbox_id)

    def live(self, conversation_id: str) -> Live:
        return self.lives.get(conversation_id) or self.head.conversation(conversation_id).live

    def put_live(self, conversation_id: str, live: Live) -> None:
        self.lives[conversation_id] = live

    def edit_live(self, conversation_id: str, **changes: Any) -> Live:
        live = evolve(self.live(conversation_id), **changes)
        self.put_live(conversation_id, live)
        return live

    def __bool__(self) -> bool:
        return bool(self.tasks or self.lives or self.batch)


__all__ = ["Change", "ConversationHead", "Head"]
