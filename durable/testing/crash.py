"""In-process crashes: a storage wrapper that stops the world the way `kill -9` does.

`CrashableStorage(inner)` passes every call through until it crashes: by `crash()`, or by itself
just before or just after its k-th commit (`crash_before=k` / `crash_after=k`). From then on
every call, and the result of every call in flight, hangs: nothing more is written, not even
what a clean close would write. A commit the inner store had already started still completes on
disk (as in a killed process whose write reached the file), but its caller never hears back.
Commits are numbered from 1 per `CrashableStorage` (one harness lifetime), counting every
`commit` handed to the inner store, the open's included; `history` describes each in a line, so
that a test can say what "commit 7" was.

`crash(harness)` crashes the harness's storage and abandons the harness: its runners are
cancelled where they hang, and leaving its `async with` block writes nothing. `release()` then
closes the inner store (freeing the file's lock, as the OS does for a dead process), so that a
new harness in the same test can reopen the file. `crashable_harness(path, ...)` does all that
for the common case: a harness on the file through a `CrashableStorage`, abandoned the moment the
storage crashes (no runner does what a dead process could not), the file released on the way out.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from ..engine.harness import Harness, HarnessState
from ..errors import StorageClosed
from ..models.protocol import Model
from ..records import Terminal
from ..storage.protocol import Batch, Opened
from ..storage.sqlite.store import SQLiteStorage

if TYPE_CHECKING:
    from ..storage.sqlite.store import Synchronous


class CrashableStorage:
    """A storage wrapper that can die. See the module docstring.

    `on_commit(number, batch)` is called after each commit the inner store acknowledged (before
    a `crash_after` crash at that number); `on_crash()` callbacks run synchronously at the moment
    of the crash. `in_flight` counts calls handed to the inner store that have not returned yet.
    """

    def __init__(
        self,
        inner: Any,
        *,
        crash_before: int | None = None,
        crash_after: int | None = None,
        on_commit: Callable[[int, Batch], None] | None = None,
        record: bool = True,
    ) -> None:
        self.inner = inner
        self.location = inner.location
        self.crash_before = crash_before
        self.crash_after = crash_after
        self.commit_calls = 0  # commits handed to the inner store
        self.crashed = anyio.Event()
        self._unhung = anyio.Event()
        self.on_commit = on_commit
        self.on_crash: list[Callable[[], None]] = []
        self.history: list[str] = []  # one line per commit handed to the inner store
        self.batches: list[Batch] = []  # the batches themselves (with `record=True`)
        self.returned: list[Batch] = []  # those whose inner commit returned (with `record=True`)
        self._record = record
        self.in_flight = 0
        self._quiet = anyio.Event()
        self._quiet.set()

    # ------------------------------------------------------------------ crashing

    def crash(self) -> None:
        """Crash now (idempotent): every call from here on hangs; `on_crash` callbacks run."""
        if self.crashed.is_set():
            return
        self.crashed.set()
        for callback in list(self.on_crash):
            callback()

    async def _hang(self) -> Any:
        # A dead process's calls never return. The one exception: a clean close that was cut off
        # waits in a shielded scope, where hanging would never end; `crash(harness)` unhangs it,
        # and its calls fail instead (the harness is abandoned by then, nothing acts on it).
        await self._unhung.wait()
        raise StorageClosed(f"The storage of {self.location} crashed", location=self.location)

    def unhang(self) -> None:
        """Make calls hanging after the crash raise `StorageClosed` (for a cut-off clean close)."""
        self._unhung.set()

    async def release(self) -> None:
        """After a crash: close the inner store, as the OS does for a killed process (an SQLite
        store leaves what lazy commits put beside its file there, not folded into it)."""
        with anyio.CancelScope(shield=True):
            if isinstance(self.inner, SQLiteStorage):
                await self.inner.close(fold=False)
            else:
                await self.inner.close()

    # ------------------------------------------------------------------ in-flight accounting

    def _enter(self) -> None:
        self.in_flight += 1
        if self._quiet.is_set():
            self._quiet = anyio.Event()

    def _leave(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self._quiet.set()

    async def wait_quiet(self) -> None:
        """Wait until no call is in flight in the inner store."""
        while self.in_flight:
            await self._quiet.wait()

    # ------------------------------------------------------------------ the storage protocol

    async def _pass(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.crashed.is_set():
            await self._hang()
        self._enter()
        try:
            result = await getattr(self.inner, name)(*args, **kwargs)
        finally:
            self._leave()
        if self.crashed.is_set():
            await self._hang()
        return result

    async def open(self) -> Opened:
        opened: Opened = await self._pass("open")
        return opened

    async def commit(self, batch: Batch) -> None:
        if self.crashed.is_set():
            await self._hang()
        number = self.commit_calls + 1
        if self.crash_before is not None and number >= self.crash_before:
            self.crash()
            await self._hang()
        self.commit_calls = number
        if self._record:
            self.history.append(describe_batch(batch))
            self.batches.append(batch)
        self._enter()
        try:
            await self.inner.commit(batch)
        finally:
            self._leave()
        if self._record:
            self.returned.append(batch)
        if self.on_commit is not None and not self.crashed.is_set():
            self.on_commit(number, batch)
        if self.crash_after is not None and number >= self.crash_after:
            self.crash()
        if self.crashed.is_set():
            await self._hang()

    async def get_task(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_task", *a, **k)

    async def find_tasks(self, *a: Any, **k: Any) -> Any:
        return await self._pass("find_tasks", *a, **k)

    async def get_entries(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_entries", *a, **k)

    async def get_context(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_context", *a, **k)

    async def get_submission(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_submission", *a, **k)

    async def check_integrity(self) -> list[str]:
        result: list[str] = await self._pass("check_integrity")
        return result

    async def get_live(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_live", *a, **k)

    async def get_attachments(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_attachments", *a, **k)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        # Anything else a store offers (e.g. `call_in_writer`) passes through uncounted.
        return getattr(self.inner, name)

    async def close(self) -> None:
        if self.crashed.is_set():
            await self._hang()
        await self.inner.close()


def crash(harness: Harness) -> None:
    """Crash `harness` now: its storage hangs and the harness is abandoned (no clean close).
    Idempotent. Its runners are cancelled where they hang; the calls that still wait in a
    shielded scope (a clean close's commit, a refused commit putting the head back) then fail
    instead of hanging forever: nothing acts on them, and nothing more is written."""
    storage = harness.storage
    if isinstance(storage, CrashableStorage):
        storage.crash()
    if harness.state not in (HarnessState.CRASHED, HarnessState.NEW):
        harness.abandon()
    if isinstance(storage, CrashableStorage):
        storage.unhang()


def abandon_on_crash(harness: Any) -> None:
    """Make a crash of `harness.storage` (a `CrashableStorage`) abandon the harness at once, in
    the same step, so that no runner goes on after the moment of death."""
    storage = harness.storage
    if not isinstance(storage, CrashableStorage):
        raise TypeError(f"The storage of this harness is a {type(storage).__name__}, not a CrashableStorage")
    storage.on_crash.append(lambda: crash(harness))


@asynccontextmanager
async def crashable_harness(
    path: str | os.PathLike[str] | Any,
    *,
    model: Model,
    tools: Iterable[Any] = (),
    settings: Any = None,
    clock: Any = None,
    report: Any = None,
    crash_before: int | None = None,
    crash_after: int | None = None,
    on_commit: Callable[[int, Batch], None] | None = None,
    synchronous: Synchronous = "EXTERNAL",
) -> AsyncIterator[Any]:
    """Open a harness on the session file `path` (or on a storage object, e.g. a `MemoryStorage`)
    through a `CrashableStorage`, as `async with crashable_harness(...) as h:`.

    The harness is abandoned in the very step its storage crashes (`crash_before` /
    `crash_after`, or `crash(h)` in the block), and the rest of the block is cancelled at its
    next `await`, as the death of the process would end it: code after the crash does not run,
    and leaving the block this way is not an error. Leaving the block after a crash writes
    nothing and releases the file, so the next `crashable_harness` on the same path reopens it
    as a new process would. A crash during the open commit (the one that charges interrupted
    tasks) yields a dead harness: every call on it raises `HarnessClosed`. Without a crash,
    leaving the block is a clean close. `h.storage` is the `CrashableStorage` (its `crashed`
    event, `commit_calls` and `history`)."""
    from .._open import open_harness
    from ..storage.sqlite.store import SQLiteStorage

    if isinstance(path, (str, os.PathLike)):
        inner: Any = SQLiteStorage(path, synchronous=synchronous)
    else:
        inner = path
    store = CrashableStorage(inner, crash_before=crash_before, crash_after=crash_after, on_commit=on_commit)
    h = open_harness(store, model=model, tools=tools, settings=settings, clock=clock, report=report)
    opened = False
    try:
        with anyio.CancelScope() as opening:
            # A crash during the open commit (it charges interrupted tasks) stops the opening.
            store.on_crash.append(lambda: None if opened else opening.cancel())
            async with h:
                opened = True
                abandon_on_crash(h)
                try:
                    yield h
                finally:
                    if store.crashed.is_set():
                        crash(h)
        if not opened:
            h.abandon()
            yield h  # a harness that died while opening: every call raises HarnessClosed
    finally:
        if store.crashed.is_set():
            await store.release()


# --------------------------------------------------------------------------- describing commits


def describe_batch(batch: Batch) -> str:
    """One line saying what a commit writes: task states, entries, submissions, live documents,
    the bytes of images and files (their hash's first 12 digits), and `[lazy]` at the end for a
    commit that is not a barrier (see `Batch.barrier`)."""
    from .. import codec

    parts: list[str] = []
    for task in {t.id: t for t in batch.tasks}.values():
        state = codec.tag_of(task.state.outcome if isinstance(task.state, Terminal) else task.state)
        phase = codec.tag_of(task.checkpoint) if task.checkpoint is not None else "-"
        extra = f" restarts={task.restarts}" if task.restarts else ""
        extra += f" stop={task.stop}" if task.stop else ""
        parts.append(f"task {task.id} {task.kind} {state}/{phase}{extra}")
    for stored in batch.entries:
        parts.append(f"entry {stored.conversation_id}#{stored.seq} {entry_kind(stored.entry)}")
    for sub in {s.id: s for s in batch.submissions}.values():
        parts.append(f"submission {sub.id} {codec.tag_of(sub.status)}")
    for cid in batch.live:
        parts.append(f"live {cid}")
    for sha, (media_type, data) in batch.attachments.items():
        parts.append(f"attachment {sha[:12]} {media_type} {len(data)} bytes")
    return ("; ".join(parts) or "(empty)") + ("" if batch.barrier else " [lazy]")


def entry_kind(entry: Any) -> str:
    """"user", "assistant:stop", "tool_result:error", "compaction"..."""
    from .. import records as r

    if isinstance(entry, r.UserEntry):
        return "user"
    if isinstance(entry, r.AssistantEntry):
        return f"assistant:{entry.stop_reason}"
    if isinstance(entry, r.ToolResultEntry):
        return "tool_result:error" if entry.is_error else "tool_result"
    return "compaction"
