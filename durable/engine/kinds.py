"""The task-kind contract: the one interface through which the engine drives a kind of task.

A kind declares, and the engine calls nothing else:

- `name` and `transitions`: its state machine as data (checked on every commit);
- `phases`: the handler of each checkpoint phase. The scheduler looks the task's phase up and
  awaits its handler, which commits the task's next position and returns the task as it now
  stands (or None when the runner has nothing more to do: terminal, or waiting on others);
- `stop`: the abort handler, run when the host stopped the task (`task.stop` is set);
- `resume_interrupted`: what happens to a task cut off by a crash below the restart limit;
- `end_at_limit` and `fault_stop`: its visible endings when cut off `restart_limit` times (the
  decision is the engine's recovery, never the kind's);
- `fault`: how it ends when its code raised; `written_back`: how a clean close leaves it.

Host operations that start or stop work (submit, abort/interrupt, compact, client-tool results)
go through the `RunService` the task layer provides. Endings must be single commits with no
effect outside the process, so that a crash loop in them cannot go on forever: work outside
(cancelling a provider's job) is recorded as a task of its own in the ending commit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from attrs import frozen

from .._frozen import evolve
from ..records import ErrorInfo, Faulted, Pending, StopMark, Submission, Task, Terminal
from .transitions import Transitions

if TYPE_CHECKING:
    from .runtime import Runtime
    from .session import Change

PhaseHandler = Callable[["Runtime", Task], Awaitable[Task | None]]


@frozen
class Resumed:
    """What a kind made of a task cut off below the restart limit: the task to go on with (None
    when it ended), and what the `task_interrupted` report says."""

    task: Task | None
    reason: Literal["interrupted", "not_rerun"]
    detail: str


class TaskKind:
    """Base class of the task kinds. Subclasses set `name`, `transitions` and `phases`."""

    name: ClassVar[str]
    transitions: ClassVar[Transitions]
    phases: Mapping[type[object], PhaseHandler]

    async def stop(self, rt: Runtime, task: Task) -> None:
        """The abort handler. Kinds the host cannot stop never have `task.stop` set."""
        raise NotImplementedError(f"Task {task.id} ({self.name}) has no abort handler")

    async def resume_interrupted(self, rt: Runtime, task: Task, restarts: int) -> Resumed:
        """A task cut off `restarts` times (below the limit): by default its phase runs again."""
        return Resumed(task, "interrupted", f"The {self.name} task runs again")

    async def end_at_limit(self, rt: Runtime, task: Task, restarts: int) -> str:
        """End a task cut off `restarts >= restart_limit` times, visibly, in one commit; return
        the detail of the `task_interrupted` report."""
        raise NotImplementedError

    async def fault_stop(self, rt: Runtime, task: Task, detail: str) -> None:
        """End a task whose abort handler was cut off `restart_limit` times (faulted), in one
        commit."""
        raise NotImplementedError(f"Task {task.id} ({self.name}) has no abort handler")

    def fault(self, rt: Runtime, change: Change, task: Task, error: ErrorInfo) -> None:
        """Write the task's ending when its code raised (`error` says what)."""
        change.put_task(evolve(task, state=Terminal(Faulted(error))))

    def written_back(self, task: Task) -> Task:
        """How a clean close leaves a task that was running: `pending`, checkpoint kept."""
        return evolve(task, state=Pending())


class RunService(Protocol):
    """What the host API asks of the task layer: starting and stopping runs, compactions and
    client tool results."""

    def begin_run(self, rt: Runtime, change: Change, conversation_id: str, subs: list[Submission]) -> Task: ...

    async def stop_run(self, rt: Runtime, conversation_id: str, reason: StopMark) -> None: ...

    async def compact(self, rt: Runtime, conversation_id: str) -> int: ...

    async def submit_client_result(self, rt: Runtime, call_id: str, content: str, is_error: bool) -> None: ...


__all__ = ["PhaseHandler", "Resumed", "RunService", "TaskKind"]
