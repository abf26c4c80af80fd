"""The runtime: what task code sees of the harness, and nothing more.

Task kinds read the head of the session, build a change and commit it through `commit`, which is
the only way task code writes: it starts runners for the tasks the change made runnable, and it
retries a commit the store refused for a passing cause (disk full, an I/O error) instead of
letting the task run again from the file. Runners are reached through the `Runners` interface
that the scheduler implements; the runtime never sees the harness.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from .._frozen import evolve
from ..errors import StorageError
from ..models.protocol import Model
from ..records import Checkpoint, Pending, Running, State, Task, TaskInput
from ..settings import Settings
from ..tools import ToolRegistry
from .clock import Clock
from .progress import ProgressFlusher
from .reports import ErrorReport, Reporter
from .session import Change, Session


class Runners(Protocol):
    """The scheduler, as the runtime uses it."""

    def spawn(self, task_id: int) -> None: ...

    async def cancel(self, task_id: int) -> None: ...


class Runtime:
    """See the module docstring. One per harness, made when the harness opens."""

    def __init__(self, session: Session, *, model: Model, tools: ToolRegistry, settings: Settings,
                 clock: Clock, report: Reporter, runners: Runners, progress: ProgressFlusher) -> None:
        self.session = session
        self.model = model
        self.tools = tools
        self.settings = settings
        self.clock = clock
        self.report = report
        self._runners = runners
        self.progress = progress  # the flush schedule of streaming progress (its task is the harness's)

    def now(self) -> float:
        return self.clock.now()

    def change(self, *, barrier: bool = True) -> Change:
        """A change to build; `barrier=False` makes it a lazy commit (see `Change`)."""
        return self.session.change(barrier=barrier)

    async def commit(self, change: Change, *, retry: bool = True) -> None:
        """Commit a change, then start runners for the tasks it made runnable. Task code commits
        with `retry`: a transient refusal is reported and the commit tried again (see
        `Session.commit`); if cancelled, the commit in flight completes and the retries stop.
        The host API commits without: the caller gets the refusal (its input was not accepted)."""

        def refused(exc: StorageError) -> None:
            owners = ", ".join(f"task {t.id} ({t.kind})" for t in change.batch.tasks) or "A commit"
            self.report(ErrorReport(f"{owners[0].upper()}{owners[1:]} could not commit and will try again: {exc}",
                                    raw=repr(exc), topic="commit"))

        await self.session.commit(change, retry=refused if retry else None)
        for task in change.batch.tasks:
            if not task.terminal:
                self._runners.spawn(task.id)

    async def mark_running(self, task: Task, *, barrier: bool = False) -> Task:
        """Commit `running` (if it is not) before work whose interruption must be charged; a
        lazy commit unless `barrier` (the work has an effect outside the process that a power
        cut must not hide: an unsafe tool)."""
        if isinstance(task.state, Running):
            return task
        change = self.change(barrier=barrier)
        task = change.put_task(evolve(task, state=Running()), progress=False)
        await self.commit(change)
        return task

    def new_task(self, change: Change, *, conversation_id: str, kind: str, input: TaskInput,
                 checkpoint: Checkpoint | None = None, parent_id: int | None = None,
                 state: State = Pending()) -> Task:
        now = self.now()
        task = Task(self.session.new_task_id(), conversation_id, kind, input, state, checkpoint,
                    parent_id=parent_id, created_at=now, updated_at=now)
        return change.create_task(task)

    async def sleep_until(self, deadline: float, name: str) -> None:
        await self.clock.sleep_until(deadline, name)

    async def wait_tasks(self, task_ids: Iterable[int]) -> None:
        for tid in task_ids:
            await self.session.task_done_event(tid).wait()

    async def cancel_runner(self, task_id: int) -> None:
        """Cancel the task's runner and wait until it has stopped (its in-flight commit completes)."""
        await self._runners.cancel(task_id)

    async def restart_runner(self, task_id: int) -> None:
        """Cancel the task's runner and start a new one, which reads the task afresh from the head."""
        await self._runners.cancel(task_id)
        self._runners.spawn(task_id)


__all__ = ["Runners", "Runtime"]
