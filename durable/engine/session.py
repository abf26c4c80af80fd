"""The commit line: the one way to change a session, and what observers see of it.

A change (`durable.engine.head.Change`) is built without any `await` between reading the head and
handing its batch to the store, so changes are applied to the head, written by the store and
published to observers in one order: the commit line. The store may group several changes into
one transaction. Observers (live snapshots, `follow()`, waiters on submissions and tasks) only
ever see what is committed, never the head.

A refused commit is either raised (the host API: the head is put back to what the store holds)
or tried again (task code: what the task did stays in memory, so an unsafe tool that ran is never
run again because its result could not be written). The file holds a prefix of the commit order
also under refusals: a change refused for a passing cause (a full disk, an I/O error) holds back
every later one until it lands or gives up (the store refuses the later ones already queued; the
line sends none past it), and is sent again as it was, in its place, once every change before it
finished; one refused for what it holds (`CommitRefused`) is raised at once and holds back
nothing. A change that gives up lets the later ones go on as built; the head is put back for
what it touched.

Invariant: a task's `restarts` counter is cleared by any commit that changes its checkpoint
(durable progress), and by nothing else.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Protocol

import anyio
import attrs
from anyio.streams.memory import MemoryObjectSendStream

from ..codec import CodecError
from ..errors import CommitFailed, CommitRefused, DiskFull, StorageClosed, StorageError
from ..records import EMPTY_LIVE, CompactionEntry, Live, StoredEntry, Submission
from ..storage import rows as _rows
from ..storage.protocol import Batch, Opened, Storage
from ..tokens import in_context
from . import tracing
from .context import Context
from .head import Change, Head
from .idle import IdleContexts
from .transitions import Transitions

Retry = Callable[[StorageError, float], None]
"""How task code hears of a refusal its commit will try again: the error, and the seconds of
`disk_full_patience` left (inf when the disk is not full)."""


class Watcher(Protocol):
    """Told of every batch as it is published, in commit order, and of the close (see
    `durable.engine.streaming`)."""

    def committed(self, batch: Batch) -> None: ...

    def closed(self) -> None: ...


class Session(Head):
    """The commit line of one session over its store (see the module docstring)."""

    def __init__(self, storage: Storage, opened: Opened, now: Callable[[], float],
                 tables: Mapping[str, Transitions], *, disk_full_patience: float = 60.0) -> None:
        super().__init__(opened, now, tables)
        self.storage = storage
        self.commit_count = 0
        self._issued = 0
        self._durable: dict[int, tuple[Change, bool]] = {}  # finished commits by number, and whether they held
        self._published = 0
        # Tasks ended and submissions settled in the head by commits not yet published: their
        # waiters must wait for the commit, not take the head's word for it.
        self._ending: dict[int, int] = {}
        self._settling: dict[str, int] = {}
        self._task_done: dict[int, anyio.Event] = {}
        self._settled: dict[str, _Settling] = {}
        self._followers: list[tuple[str, MemoryObjectSendStream[Live]]] = []
        self.watchers: list[Watcher] = []
        self._placing: dict[str, tuple[anyio.Lock, int]] = {}  # submission id -> its lock, and its users
        self.disk_full_patience = disk_full_patience
        # Changes refused for a passing cause and not finished yet, by number: set when they finish.
        self._refused: dict[int, anyio.Event] = {}
        self._moved: anyio.Event | None = None  # set whenever `_published` moves on, while anyone waits
        self._stop = anyio.Event()  # `stop_retrying()`: commits are no longer tried again
        self.idle = IdleContexts(now)  # contexts of idle conversations dropped (`durable.engine.idle`)

    @asynccontextmanager
    async def placing(self, submission_id: str) -> AsyncIterator[None]:
        """Hold the submission id while an input of that id is looked up and placed: a second
        placing of the same id waits until the first committed (or gave up), then finds it."""
        lock, users = self._placing.get(submission_id) or (anyio.Lock(), 0)
        self._placing[submission_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._placing[submission_id]
            if users == 1:
                del self._placing[submission_id]
            else:
                self._placing[submission_id] = (lock, users - 1)

    # ------------------------------------------------------------------ the model context

    async def load_context(self, conversation_id: str) -> Context:
        """The model context of a conversation: loaded once (from its last compaction, undecoded),
        then kept up to date by the commits of this process."""
        conv = self.conversation(conversation_id)
        if not conv.context_loaded:
            summary = conv.compaction.entry if conv.compaction else None
            start = summary.first_kept_seq if isinstance(summary, CompactionEntry) else 1
            upto = conv.last_seq  # the store holds every entry up to it (commits are queued in order)
            rows = await self.storage.get_context(conversation_id, start, upto)
            if not conv.context_loaded:  # another task may have loaded it meanwhile
                location = self.storage.location

                def decode(seq: int, body: str) -> StoredEntry:
                    return _rows.entry(conversation_id, seq, body, location)

                context = Context.stored(rows, decode)
                for stored in conv.context:  # appended by commits made while it loaded
                    if stored.seq > upto:
                        context.append(stored)
                conv.context = context
                conv.context_loaded = True
        self.idle.used(self, conversation_id, hold=bool(self._refused))
        return conv.context

    # ------------------------------------------------------------------ the commit line

    @tracing.commit
    async def commit(self, change: Change, *, retry: Retry | None = None) -> None:
        """Apply `change` to the head and make it durable. If cancelled after this call started,
        the commit still completes (the store shields it); observers see it either way.

        If the store refuses the commit, nothing of it is on disk. Without `retry` (the host
        API), the head is put back to what the store holds for everything the change touched and
        the error is raised. With `retry` (task code), a transient refusal is reported through
        `retry(error, patience_left)` and the same batch is sent again after a backoff (what the
        task did stays in memory: an unsafe tool that ran is never run again because its result
        could not be written); cancelling the wait, `stop_retrying()`, or a full disk that lasts
        `disk_full_patience` seconds (`DiskFull` then says so) gives up, as without `retry`. A
        refusal that is not transient (`CommitRefused`, a lost lock, a closed or damaged store)
        is raised at once.

        The file only ever holds a prefix of the commit order, refusals included (see the
        module docstring): a change sent after one that was refused for a passing cause waits
        until that one lands or gives up, and a refused one is sent again in its place, once
        every change before it has finished."""
        for task in change.tasks.values():
            change.batch.tasks.append(task)
        change.batch.live.update(change.lives)
        change.batch.barrier = change.barrier
        self._issued += 1
        number = self._issued
        self._apply_to_head(change)
        for task in change.batch.tasks:
            if task.terminal:
                self._ending[task.id] = number
        for sub in change.batch.submissions:
            if sub.settled:
                self._settling[sub.id] = number
        batch = change.batch
        delay = 0.05
        refused = False  # the store refused this change at least once: nothing of it is on disk
        attempts = 0
        full_since: float | None = None
        try:
            if self._refused:  # shielded: once issued, a change reaches the store
                with anyio.CancelScope(shield=True):
                    await self._behind_refused(number)
            batch.first_in_line = self._published == number - 1
            while True:
                try:
                    await self.storage.commit(batch)
                    break
                except StorageError as exc:
                    refused = True
                    attempts += 1
                    if retry is None or not _transient(exc, attempts) or self._stop.is_set():
                        raise
                    self._refused.setdefault(number, anyio.Event())
                    left = math.inf
                    if isinstance(exc, DiskFull):
                        now = anyio.current_time()
                        full_since = now if full_since is None else full_since
                        left = self.disk_full_patience - (now - full_since)
                        if left <= 0:
                            raise _gave_up(exc, now - full_since) from exc
                    retry(exc, left)
                    with anyio.move_on_after(min(delay, left)):  # cancelling this wait gives the commit up
                        await self._stop.wait()
                    if self._stop.is_set():
                        raise
                    delay = min(delay * 2, 5.0)
                    await self._finished_before(number)  # then it is sent again in its place
                    batch = attrs.evolve(batch, first_in_line=True)
        except BaseException as exc:
            if refused and not isinstance(exc, StorageClosed):
                # Put the head back first: until then the marks of what this change ended or
                # settled keep waiters waiting, instead of taking the head's word for an ending
                # that never reached the store.
                with anyio.CancelScope(shield=True):
                    await self._resync(change)
            self._finish(number, change, False)
            raise
        self._finish(number, change, True)

    def stop_retrying(self) -> None:
        """Give up every commit being tried again, and any later one at its first refusal (a
        close, or a harness that stops): each raises the refusal it last met."""
        self._stop.set()

    def _finish(self, number: int, change: Change, held: bool) -> None:
        self._durable[number] = (change, held)
        refused = self._refused.pop(number, None)
        if refused is not None:
            refused.set()
        self._publish()

    async def _behind_refused(self, number: int) -> None:
        """Wait until no change issued before `number` stands refused (being tried again): the
        store must never write a later change before it."""
        while True:
            earlier = [event for n, event in self._refused.items() if n < number]
            if not earlier:
                return
            await earlier[0].wait()

    async def _finished_before(self, number: int) -> None:
        """Wait until every change issued before `number` has finished (landed or given up)."""
        while self._published < number - 1:
            if self._moved is None:
                self._moved = anyio.Event()
            await self._moved.wait()

    async def _resync(self, change: Change) -> None:
        """Put the head back to the store's values for what a refused change touched. Entry seqs
        it used are not reused (a gap is harmless: readers order by seq), since commits built
        after it may already have taken the next ones."""
        try:
            for task in change.batch.tasks:
                self.ended_children.pop(task.id, None)
                stored = await self.storage.get_task(task.id)
                if stored is None or stored.terminal:
                    self.tasks.pop(task.id, None)
                else:
                    self.tasks[task.id] = stored
            for sub in change.batch.submissions:
                stored_sub = await self.storage.get_submission(sub.id)
                queued = self.conversation(sub.conversation_id).queued
                if stored_sub is None or stored_sub.settled:
                    self.submissions.pop(sub.id, None)
                    if sub.id in queued:
                        queued.remove(sub.id)
                else:
                    self.submissions[sub.id] = stored_sub
            failed = {(e.conversation_id, e.seq) for e in change.batch.entries}
            for conv in self.convs.values():
                if failed:
                    conv.context = [e for e in conv.context if (e.conversation_id, e.seq) not in failed]
            for cid in change.forks:
                self.convs.pop(cid, None)  # a fork refused: nothing of it is there
            for cid in change.batch.live:
                self.conversation(cid).live = await self.storage.get_live(cid) or EMPTY_LIVE
        except StorageError:
            pass  # the store cannot even be read: the next commit will fail and say why

    def _apply_to_head(self, change: Change) -> None:
        for task in change.tasks.values():
            if task.terminal:
                self.tasks.pop(task.id, None)
                if task.parent_id is not None and task.parent_id in self.tasks:
                    self.ended_children[task.id] = task
                for child in [c for c in self.ended_children.values() if c.parent_id == task.id]:
                    del self.ended_children[child.id]  # its parent ended: nobody reads it again
            else:
                self.tasks[task.id] = task
        for stored in change.batch.entries:
            conv = self.conversation(stored.conversation_id)
            conv.last_seq = max(conv.last_seq, stored.seq)
            entry = stored.entry
            if isinstance(entry, CompactionEntry):
                conv.compaction = stored
                conv.context = [e for e in conv.context if e.seq >= entry.first_kept_seq]
            elif in_context(entry):
                conv.context.append(stored)
        for cid, (to_seq, compaction) in change.forks.items():  # its context is read from the store
            conv = self.conversation(cid)
            conv.last_seq, conv.compaction, conv.context, conv.context_loaded = to_seq, compaction, [], False
        for sub in change.batch.submissions:
            queued = self.conversation(sub.conversation_id).queued
            if sub.settled:
                self.submissions.pop(sub.id, None)
            else:
                self.submissions[sub.id] = sub
            if sub.settled or sub.task_id is not None:
                if sub.id in queued:
                    queued.remove(sub.id)
            elif sub.id not in queued:
                queued.append(sub.id)
        for cid, live in change.lives.items():
            self.conversation(cid).live = live

    def _publish(self) -> None:
        moved = False
        while self._published + 1 in self._durable:
            moved = True
            self._published += 1
            change, held = self._durable.pop(self._published)
            for task in change.batch.tasks:
                if task.terminal and self._ending.get(task.id) == self._published:
                    del self._ending[task.id]
            for sub in change.batch.submissions:
                if sub.settled and self._settling.get(sub.id) == self._published:
                    del self._settling[sub.id]
            if not held:
                continue
            self.commit_count += 1
            for task in change.batch.tasks:
                if task.terminal:
                    event = self._task_done.pop(task.id, None)
                    if event is not None:
                        event.set()
            for sub in change.batch.submissions:
                if sub.settled:
                    settling = self._settled.pop(sub.id, None)
                    if settling is not None:
                        settling.record = sub
                        settling.event.set()
            for cid, live in change.batch.live.items():
                conv = self.conversation(cid)
                conv.committed_live, conv.stored = live, True
                for follow_cid, stream in list(self._followers):
                    if follow_cid == cid:
                        try:
                            stream.send_nowait(live)
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                            self._followers.remove((follow_cid, stream))
            for watcher in list(self.watchers):
                watcher.committed(change.batch)
        if moved and self._moved is not None:  # wake those waiting for the changes before theirs to finish
            self._moved.set()
            self._moved = None


    # ------------------------------------------------------------------ observing

    def ending_in_flight(self, task_id: int) -> bool:
        """Whether the task's ending is in the head but not yet written (its commit may still be
        refused, and the task put back)."""
        return task_id in self._ending

    def task_done_event(self, task_id: int) -> anyio.Event:
        """Set once the task's ending is committed (at once for a task that ended before)."""
        event = self._task_done.get(task_id)
        if event is None:
            event = anyio.Event()
            if task_id not in self.tasks and task_id not in self._ending:
                event.set()  # ended (or unknown): kept nowhere, so asking again and again holds nothing
            else:
                self._task_done[task_id] = event
        return event

    def unsettled(self, submission_id: str) -> bool:
        """Whether the submission is known here and not settled on disk yet (in the head, or
        settled by a commit not yet written)."""
        return submission_id in self.submissions or submission_id in self._settling

    async def wait_settled(self, submission_id: str) -> Submission | None:
        """Wait until the submission's settling is committed; returns the settled record as
        committed, or None when there is nothing to wait for here (it settled before this
        process, or is unknown: the store says which) or the waiters were released."""
        if not self.unsettled(submission_id):
            return None
        settling = self._settled.get(submission_id)
        if settling is None:
            settling = self._settled[submission_id] = _Settling()
        await settling.event.wait()
        return settling.record

    async def follow(self, conversation_id: str) -> AsyncIterator[Live]:
        """The committed live document now, then after every commit that changes it."""
        send, receive = anyio.create_memory_object_stream[Live](math.inf)
        entry = (conversation_id, send)
        self._followers.append(entry)
        send.send_nowait(self.conversation(conversation_id).committed_live)
        try:
            async with receive:
                async for live in receive:
                    yield live
        finally:
            if entry in self._followers:
                self._followers.remove(entry)
            send.close()

    def release_waiters(self) -> None:
        """Wake every waiter on a task or a submission (the harness lost its file: they find out
        from the harness, not from here)."""
        for event in [*self._task_done.values(), *(s.event for s in self._settled.values())]:
            event.set()

    def close_followers(self) -> None:
        """End every `follow()` stream (at close)."""
        for _, stream in self._followers:
            stream.close()
        self._followers.clear()
        for watcher in self.watchers:
            watcher.closed()
        self.watchers.clear()


class _Settling:
    """The waiters of one submission: woken with its settled record once that is committed."""

    __slots__ = ("event", "record")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.record: Submission | None = None


IO_ERROR_ATTEMPTS = 8  # a refusal other than a full disk is tried this often (~10 s), then given up


def _transient(exc: StorageError, attempts: int) -> bool:
    """A refusal that may pass, as opposed to one that never will (`CommitRefused`: a value that
    cannot be stored; a lost lock, a read-only, closed or damaged store). A full disk is waited
    out for `disk_full_patience` seconds (see `Session.commit`); another I/O error only
    `IO_ERROR_ATTEMPTS` times, so a permanent one that looks transient still ends visibly."""
    if isinstance(exc, DiskFull):
        return True
    return (isinstance(exc, CommitFailed) and not isinstance(exc, CommitRefused)
            and not isinstance(exc.__cause__, CodecError) and attempts < IO_ERROR_ATTEMPTS)


def _gave_up(exc: DiskFull, waited: float) -> DiskFull:
    """The error a commit gives up with once the disk stayed full for its patience."""
    return DiskFull(f"{exc}. The disk stayed full for {waited:.0f} s (disk_full_patience): durable stops starting "
                    f"work; nothing acknowledged is lost: free some space and open the session again",
                    location=exc.location)
