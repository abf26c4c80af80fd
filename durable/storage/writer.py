"""The writer thread of an SQL store (`WriterThread`, the base of `SQLiteStorage` and
`PostgresStorage`): its queue of jobs, its loop (calls one at a time; commit jobs that queued up
together handed over as one group), and the crossing between it and the callers' event loops.

A caller makes its job, queues it and waits for it; the writer thread runs it and wakes the
caller through the caller's loop's non-blocking, thread-safe "call soon" (`thread_safe_caller`;
a blocking hand-off would serialise the writer behind the loop and defeat group commit). The
wait is shielded: once queued, a job runs to completion and its caller learns the outcome even
when cancelled meanwhile (the cancellation is delivered at the caller's next checkpoint).

How a group of commit jobs is written is the store's `_write_group`: for the SQL stores the one
policy of `durable.storage.group_commit` (`GroupCommitter`), on the store's primitives.
"""

from __future__ import annotations

import collections
import queue
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, Generic, TypeVar

import anyio
import sniffio

from ..codec import CodecError
from ..errors import CommitRefused, StorageClosed
from .protocol import Batch
from .rows import EncodedBatch, encode_batch

# --------------------------------------------------------------------------- waking a caller

_last: tuple[object, Callable[[Callable[[], object]], None]] | None = None
"""The caller made for the loop last asked (its trio token or asyncio loop, the caller): every
commit job asks for one, and a process runs one loop at a time as a rule, so one entry saves
remaking it per commit."""


def thread_safe_caller(library: str | None = None) -> Callable[[Callable[[], object]], None]:
    """Return `call(fn)`, usable from any thread, that runs `fn()` soon in the current loop.
    `call.loop` identifies that loop (callers with the same one can be woken with one call).
    `library`: the current async library, when the caller already asked sniffio."""
    global _last
    if library is None:
        library = sniffio.current_async_library()
    if library == "trio":
        import trio

        loop: Any = trio.lowlevel.current_trio_token()
    else:
        import asyncio

        loop = asyncio.get_running_loop()
    last = _last
    if last is not None and last[0] is loop:
        return last[1]
    if library == "trio":
        wake = _TrioWake.of_this_run().call

        def call(fn: Callable[[], object]) -> None:
            wake(fn)
    else:
        run_soon = loop.call_soon_threadsafe

        def call(fn: Callable[[], object]) -> None:
            try:
                run_soon(fn)
            except RuntimeError:  # the loop is closed: nobody is left to wake
                pass

    call.loop = loop  # type: ignore[attr-defined]  # a tag on the function: callers of one loop share a wake-up
    _last = (loop, call)
    return call


class _TrioWake:
    """How other threads wake one trio run: the functions they queue, and an eventfd (a pipe
    where there is none) that a system task of the run waits on, then runs them. Measured on
    this machine against trio's own `run_sync_soon` (a lock, a deque and a socket write, then
    its own task): ~40 µs of CPU per round trip to the writer thread instead of ~50. Once the
    run is over, a call runs nothing (its waiter is gone with the run)."""

    _made: Any = None  # the RunVar of the current run's wake, made on first use

    def __init__(self) -> None:
        import os

        self._lock = threading.Lock()
        self._queued: collections.deque[Callable[[], object]] = collections.deque()
        self._closed = False
        if hasattr(os, "eventfd"):
            self._read_fd = self._write_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        else:  # not Linux
            self._read_fd, self._write_fd = os.pipe()
            os.set_blocking(self._read_fd, False)
            os.set_blocking(self._write_fd, False)

    @classmethod
    def of_this_run(cls) -> _TrioWake:
        import trio

        if cls._made is None:
            cls._made = trio.lowlevel.RunVar("durable_writer_wake")
        wake: _TrioWake | None = cls._made.get(None)
        if wake is None:
            wake = cls()
            trio.lowlevel.spawn_system_task(wake._run, name="durable writer wake")
            cls._made.set(wake)
        return wake

    def call(self, fn: Callable[[], object]) -> None:
        """Run `fn()` soon in the run (from any thread)."""
        import os

        with self._lock:  # the descriptors are closed under it: never written once closed
            if self._closed:
                return
            self._queued.append(fn)
            try:
                os.write(self._write_fd, _ONE)
            except BlockingIOError:  # a full pipe: the run is woken already
                pass

    async def _run(self) -> None:
        import os

        import trio

        queued = self._queued
        try:
            while True:
                await trio.lowlevel.wait_readable(self._read_fd)
                try:
                    os.read(self._read_fd, 4096)
                except BlockingIOError:
                    pass
                while queued:
                    queued.popleft()()
        finally:
            with self._lock:
                self._closed = True
                os.close(self._read_fd)
                if self._write_fd != self._read_fd:
                    os.close(self._write_fd)


_ONE = (1).to_bytes(8, "little")  # what an eventfd is written (a pipe takes it as any 8 bytes)


# --------------------------------------------------------------------------- jobs


class Job:
    """One job for the writer thread: a call (`fn`), or a commit (`batch`, encoded there). Made
    by the task that will wait for it (`await job.wait()`), right before it is queued."""

    __slots__ = ("_action", "_call", "_event", "batch", "error", "fn", "result")

    def __init__(self, fn: Callable[[Any], Any] | None, batch: Batch | None):
        self.fn = fn
        self.batch = batch
        self.result: Any = None
        self.error: BaseException | None = None
        library = sniffio.current_async_library()
        self._call = thread_safe_caller(library)
        self._event: anyio.Event | None = None
        if library == "trio":
            import trio

            self._action: Callable[[], object] = partial(trio.lowlevel.reschedule, trio.lowlevel.current_task())
        else:
            self._event = anyio.Event()
            self._action = self._event.set

    async def wait(self) -> None:
        """Wait until the writer finished the job; cancellation waits too (see the module). On
        trio the caller parks itself, refusing aborts, and the writer reschedules it: no event
        and no cancel scope, less work on the loop thread per commit. On asyncio it waits on an
        `anyio.Event` in a shielded scope."""
        if self._event is None:
            import trio

            await trio.lowlevel.wait_task_rescheduled(_refuse_abort)
        else:
            with anyio.CancelScope(shield=True):
                await self._event.wait()

    def finish(self) -> None:
        """Wake the waiting caller (from the writer thread). Called once per job."""
        self._call(self._action)

    def encode(self, location: str) -> EncodedBatch | None:
        """A commit job's batch, encoded (on the writer thread); None when it cannot be: the job
        is then finished, refused with `CommitRefused` naming `location`."""
        try:
            assert self.batch is not None, "only commit jobs are encoded"
            return encode_batch(self.batch)
        except CodecError as exc:
            self.error = CommitRefused(f"A commit to {location} was refused: {exc}", location=location)
            self.error.__cause__ = exc
        except Exception as exc:  # noqa: BLE001 - not a batch of records at all
            self.error = CommitRefused(f"A commit to {location} was refused: {type(exc).__name__}: {exc}",
                                       location=location)
            self.error.__cause__ = exc
        self.finish()
        return None


def _refuse_abort(_: Any) -> Any:
    import trio

    return trio.lowlevel.Abort.FAILED  # shielded: the job's outcome is always waited for


def finish_all(jobs: list[Job]) -> None:
    """Wake the callers of many jobs: one hand-off to each event loop, not one per job."""
    if len(jobs) == 1:
        jobs[0].finish()
        return
    by_loop: dict[Any, tuple[Callable[[Callable[[], object]], None], list[Callable[[], object]]]] = {}
    for job in jobs:
        by_loop.setdefault(getattr(job._call, "loop", job._call), (job._call, []))[1].append(job._action)
    for call, actions in by_loop.values():
        call(partial(_run_all, actions))


def take_group(first: Job, jobs: queue.SimpleQueue[Job | None], limit: int) -> tuple[list[Job], Job | None]:
    """Group commit: `first` (a commit job) and the commit jobs queued right behind it, at most
    `limit`; the job that stopped the group (a call, or None: stop) is returned to run next.
    The calling writer thread must be the only one taking from `jobs`."""
    group = [first]
    while len(group) < limit and not jobs.empty():  # the writer is the only consumer: not empty,
        nxt = jobs.get_nowait()  # then a job is there (no `queue.Empty` raised per group)
        if nxt is None or nxt.batch is None:
            return group, nxt
        group.append(nxt)
    return group, None


def _run_all(actions: list[Callable[[], object]]) -> None:
    for action in actions:
        action()


# --------------------------------------------------------------------------- the thread

C = TypeVar("C")  # the connection the writer thread's jobs are given
T = TypeVar("T")
MAX_GROUP = 256  # commit jobs written in one transaction at most


class WriterThread(Generic[C]):
    """A store's writer thread: every read and write of the store is a job on its queue, run on
    the one thread that owns the connection. A store calls `_start_writer()` when it opens and
    `_stop_writer(close)` when it closes, and implements the thread's side: `_run_call` (a call
    job: run its function on the connection, then `finish` it), `_write_group` (commit jobs, one
    group: write them, then `finish` each) and `_writer_exit` (the thread ends: close the
    connection); `_next_job` may wait for the next job its own way (PostgreSQL renews its lease
    meanwhile)."""

    location: str
    _closed_what: str = "Storage"  # how the closed store is named: "<what> <location> is closed"

    def _init_writer(self) -> None:
        self._queue: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    def _start_writer(self) -> None:
        """A fresh queue and writer thread (a store can be opened again after it closed)."""
        self._closed = False
        self._queue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"durable-writer:{self.location}", daemon=True)
        self._thread.start()

    async def _call(self, fn: Callable[[C], T]) -> T:
        job = Job(fn, None)
        await self._submit(job)
        result: T = job.result  # what `fn` returned, on the writer thread
        return result

    async def _submit(self, job: Job) -> None:
        if self._closed or self._thread is None:
            raise StorageClosed(f"{self._closed_what} {self.location} is closed", location=self.location)
        self._queue.put(job)
        # Shielded: once queued, the job runs; a cancelled caller still learns its outcome here.
        await job.wait()
        if job.error is not None:
            raise job.error

    async def _stop_writer(self, close: Callable[[], None]) -> None:
        """Refuse new jobs, run `close` on the writer thread after every job queued before, and
        end the thread."""
        self._closed = True
        thread, self._thread = self._thread, None
        if thread is None:
            return
        done = Job(lambda _: close(), None)
        self._queue.put(done)
        self._queue.put(None)
        await done.wait()  # shielded, as every job's wait
        thread.join()

    def _run(self) -> None:
        carry: Job | None = None
        try:
            while True:
                job = carry if carry is not None else self._next_job()
                carry = None
                if job is None:
                    return
                if job.batch is None:
                    self._run_call(job)
                    continue
                group, carry = take_group(job, self._queue, MAX_GROUP)
                self._write_group(group)
        finally:
            self._writer_exit()

    def _next_job(self) -> Job | None:
        return self._queue.get()

    def _run_call(self, job: Job) -> None:
        raise NotImplementedError

    def _write_group(self, group: list[Job]) -> None:
        raise NotImplementedError

    def _writer_exit(self) -> None:
        raise NotImplementedError
