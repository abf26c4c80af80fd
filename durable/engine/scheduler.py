"""The scheduler: one runner per live task, driving it through its kind's declared phases.

Every non-terminal task has at most one *runner* (an anyio task in the harness's task group). A
runner that sleeps or waits holds no durable claim: only `running` in the file means "an
invocation owns it". A runner first hands a task that was cut off (`restarts > 0`) to recovery,
runs the abort handler when the host stopped the task, then looks up the handler of the task's
phase in its kind and awaits it, until the handler returns None.

Faults: an exception from task code faults that task alone (the kind writes its ending, a report
says why). A refused commit never reaches here as a reason to run a task again: the runtime
retries it while it may pass (see `Runtime.commit`). A store that refuses for good (damaged,
read-only, an I/O error that persists) faults the task with reason `storage_error`, so its run
ends visibly; if even that ending cannot be written, or the lock was lost, or a full disk lasted
past `disk_full_patience` (`DiskFull` reaches here only then: the runtime waits it out before),
the harness is broken: its runners stop, nothing else is started (no request is sent, no tool
runs) and every wait ends with the store's error. Nothing is written for a full disk: its tasks
stay as the file holds them, and resume when the session is opened again with space.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import sniffio

from ..codec import CodecError
from ..errors import CommitFailed, DiskFull, HarnessError, LockLost, StorageClosed, StorageError
from ..records import ErrorDetail, ErrorInfo, Task
from . import recovery, tracing
from .kinds import TaskKind
from .reports import ErrorReport, FaultReason, Reporter, TaskFaulted, TaskRef
from .runtime import Runtime
from .transitions import phase_of


def _storage_error(exc: BaseException) -> StorageError | None:
    """The StorageError behind `exc`, also when it comes wrapped in an exception group."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            found = _storage_error(sub)
            if found is not None:
                return found
    return None


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


class Scheduler:
    """Runners for the tasks of one session. `start()` lets runners begin (the harness's
    `resume`); until then `spawn` does nothing and `start` spawns every live task."""

    def __init__(self, rt: Runtime, kinds: Mapping[str, TaskKind], report: Reporter,
                 task_group: anyio.abc.TaskGroup, on_broken: Callable[[StorageError], None]) -> None:
        self.rt = rt
        rt.attach(self)  # the runtime's commits start runners here
        self._on_broken = on_broken
        self.kinds = dict(kinds)
        self.report = report
        self._tg = task_group
        # A runner has `cancel()` (that runner alone) and `wait()`: an anyio task handle, or on
        # trio a `_TrioRunner` in the scheduler's own nursery (`serve`).
        self._runners: dict[int, anyio.TaskHandle[None] | _TrioRunner] = {}
        self._nursery: Any = None
        self._started = False
        self._stopped = False

    async def serve(self) -> None:
        """On trio, the nursery runners are started in once this runs (in the harness's task
        group, which cancels it; until then runners are anyio task handles); elsewhere nothing.
        An anyio task handle costs ~40 µs a runner on trio (a task group's `start_soon` makes one
        too), a trio task with a cancel scope of its own ~10."""
        if sniffio.current_async_library() != "trio":
            return
        import trio

        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                await trio.sleep_forever()
        finally:
            self._nursery = None

    def start(self) -> None:
        self._started = True
        for task in sorted(self.rt.live_tasks(), key=lambda t: t.id):
            self.spawn(task.id)

    def spawn(self, task_id: int) -> None:
        if not self._started or self._stopped or task_id in self._runners or self.rt.task(task_id) is None:
            return
        # A runner is registered only once it is started: `stop` waits for every registered one.
        # Starting one fails while the harness's task group is being cancelled (its scope around
        # `async with` cancelled, and a host call in that close, an abort, restarts a runner):
        # the nursery is closed to new arrivals then, and nothing starts again in this process
        # (the file keeps the task; the next open runs it).
        try:
            if self._nursery is not None:
                runner = _TrioRunner()
                self._nursery.start_soon(runner.run, self._run, task_id, name=f"durable task {task_id}")
                self._runners[task_id] = runner
            else:
                self._runners[task_id] = self._tg.create_task(self._run(task_id), name=f"durable task {task_id}")
        except RuntimeError:  # "Nursery is closed to new arrivals"
            self._stopped = True

    async def cancel(self, task_id: int) -> None:
        runner = self._runners.get(task_id)
        if runner is not None:
            runner.cancel()
            await runner.wait()

    def cancel_all(self) -> None:
        """Cancel every runner without waiting (from inside a runner too); none starts again."""
        self._stopped = True
        for runner in self._runners.values():
            runner.cancel()

    async def stop(self) -> None:
        """Cancel every runner and wait for them (their commits in flight complete); no new
        runner starts afterwards."""
        self._stopped = True
        runners = list(self._runners.values())
        for runner in runners:
            runner.cancel()
        for runner in runners:
            await runner.wait()

    async def _run(self, task_id: int) -> None:
        try:
            task = self.rt.task(task_id)
            if task is not None:
                await self._guarded(task)
        finally:
            # Until here the entry keeps `spawn` from starting a second runner for the task.
            self._runners.pop(task_id, None)

    @tracing.task_run
    async def _guarded(self, task: Task) -> None:
        """Drive the task; sort what escapes. Cancellation is not caught."""
        try:
            await self._drive(task)
        except Exception as exc:  # noqa: BLE001 - sorted below
            err = _storage_error(exc)
            if err is None or (isinstance(err, CommitFailed) and isinstance(err.__cause__, CodecError)):
                await self._fault(task.id, exc, "exception")  # a bug in task code, or a value never storable
            elif isinstance(err, (LockLost, StorageClosed, DiskFull)):
                self.report(ErrorReport(f"Task {task.id} ({task.kind}) stopped: {err}", TaskRef.of(task), repr(err),
                                        topic="storage"))
                if isinstance(err, (LockLost, DiskFull)):
                    self._on_broken(err)
            else:  # a store that refuses for good (damaged, read-only, an I/O error that persists)
                await self._fault(task.id, exc, "storage_error", err)

    async def _drive(self, task: Task) -> None:
        rt = self.rt
        kind = self.kinds.get(task.kind)
        if kind is None:
            raise HarnessError(f"Task {task.id} has kind {task.kind!r}, which this harness does not know")
        current: Task | None = task
        if task.restarts:
            current = await recovery.recover(rt, kind, task)
        if current is not None and current.stop is not None:
            await kind.stop(rt, current)
            return
        while current is not None:
            handler = kind.phases.get(type(current.checkpoint))
            if handler is None:
                raise HarnessError(f"Task {current.id} ({kind.name}) has no handler for its "
                                   f"{phase_of(current)} phase")
            current = await handler(rt, current)

    async def _fault(self, task_id: int, raised: Exception, reason: FaultReason,
                     storage: StorageError | None = None) -> None:
        """End the task as its kind says for a fault, visibly. When the store itself refuses
        (`storage`) and even that ending cannot be written, the harness is broken: every wait
        ends with the store's error."""
        task = self.rt.task(task_id)
        if task is None:
            return
        exc = _unwrap(raised)
        if storage is not None:
            message = f"Task {task_id} ({task.kind}) stopped: {storage}"
        else:
            message = f"Task {task_id} ({task.kind}) raised {type(exc).__name__}: {exc}"
        self.report(ErrorReport(message, TaskRef.of(task), repr(exc), topic="task" if storage is None else "storage"))
        kind = self.kinds.get(task.kind)
        if kind is None:  # no table to check an ending against: it stays as the file holds it
            return
        change = self.rt.change()
        await kind.fault(self.rt, change, task, ErrorInfo(message, ErrorDetail(reason)))
        try:
            await self.rt.commit(change, retry=storage is None)
        except StorageError as err:  # it stays as the file holds it; a reopen runs it again
            self.report(ErrorReport(f"Task {task_id} ({task.kind}) could not be marked faulted: {err}",
                                    TaskRef.of(task), repr(err), topic="storage"))
            if storage is not None:
                self._on_broken(storage)
            return
        self.report(TaskFaulted(TaskRef.of(task), reason, message))


class _TrioRunner:
    """A runner on trio: its cancel scope, and an event made only when someone waits for it."""

    __slots__ = ("_done", "_finished", "_scope")

    def __init__(self) -> None:
        import trio

        self._scope = trio.CancelScope()
        self._finished = False
        self._done: Any = None

    async def run(self, body: Callable[[int], Awaitable[None]], task_id: int) -> None:
        try:
            with self._scope:
                await body(task_id)
        finally:
            self._finished = True
            if self._done is not None:
                self._done.set()

    def cancel(self) -> None:
        self._scope.cancel()

    async def wait(self) -> None:
        if not self._finished:
            if self._done is None:
                self._done = anyio.Event()
            await self._done.wait()


__all__ = ["Scheduler"]
