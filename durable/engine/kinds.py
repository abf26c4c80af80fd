"""The task-kind contract: the one interface through which the engine drives a kind of task.

A kind is one class, declared in one module (`class MyKind(TaskKind)`): its `name` (once), its
`input` and `checkpoints` records (registered with the codec when the class is defined: the
open registry, `known_kinds()`), its `transitions` table (positions), the handler of each phase
(`phases`), and its answers to the engine (stop, crash, fault, close) and to the views (a line
for people, the fields `durable inspect` shows, the invariants a checker holds it to).

The scheduler awaits the handler of a task's phase, which commits the task's next position and
returns the task as it now stands (or None: terminal, or waiting on others). Task code reaches
the harness only through `durable.engine.runtime.Runtime`. Endings at the restart limit must be
single commits with no effect outside the process (a crash loop in them cannot go on forever):
work outside (cancelling a provider's job) is a task of its own, created in the ending commit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from .. import codec
from .._frozen import evolve, frozen
from ..content import Parts
from ..errors import HarnessError
from ..records import Checkpoint, ErrorInfo, Faulted, Pending, State, StopMark, Submission, Task, TaskInput, Terminal
from .transitions import Transitions

if TYPE_CHECKING:  # the runtime and the commit line are what a kind's code is handed
    from .head import Change
    from .runtime import Runtime

PhaseHandler = Callable[["Runtime", Task], Awaitable[Task | None]]

_KINDS: dict[str, type[TaskKind]] = {}

codec.warm()  # the codec hooks of an open and a first turn: made with the engine, not by a reader


def known_kinds() -> Mapping[str, type[TaskKind]]:
    """Every kind defined in this process, by name (what the codec can read)."""
    return _KINDS


def kind_class(name: str) -> type[TaskKind] | None:
    return _KINDS.get(name)


@frozen
class Resumed:
    """What a kind made of a task cut off below the restart limit: the task to go on with (None
    when it ended), and what the `task_interrupted` report says."""

    task: Task | None
    reason: Literal["interrupted", "not_rerun"]
    detail: str


class TaskKind:
    """Base class of the task kinds (see the module docstring). A subclass that sets `name` is
    registered when it is defined; its `input` is stored with the kind's name as its tag and its
    `checkpoints` with theirs. `warm` makes their codec hooks at import (records a first turn
    writes)."""

    name: ClassVar[str]
    input: ClassVar[type[TaskInput]]
    checkpoints: ClassVar[Mapping[str, type[Checkpoint]]] = {}
    transitions: ClassVar[Transitions]
    warm: ClassVar[bool] = False
    phases: Mapping[type[object], PhaseHandler]
    """The handler of each checkpoint class (`type(None)` for a task without one)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            return
        known = _KINDS.get(cls.name)
        if known is not None:
            raise HarnessError(f"Task kind {cls.name!r} is defined twice: by {known.__module__}.{known.__qualname__} "
                               f"and by {cls.__module__}.{cls.__qualname__}")
        try:
            codec.register_variants([(TaskInput, cls.name, cls.input),
                                     *((Checkpoint, tag, record) for tag, record in cls.checkpoints.items())],
                                    warm=cls.warm)
        except ValueError as exc:
            raise HarnessError(f"Task kind {cls.name!r} ({cls.__module__}.{cls.__qualname__}): {exc}") from None
        _KINDS[cls.name] = cls

    # ------------------------------------------------------------------ starting

    def initial(self, input: TaskInput) -> tuple[State, Checkpoint | None]:
        """Where a task the host starts (`Harness.start_task`) begins: `pending`, no checkpoint."""
        return Pending(), None

    # ------------------------------------------------------------------ stops, crashes, faults

    async def stop(self, rt: Runtime, task: Task) -> None:
        """The abort handler. Kinds the host cannot stop never have `task.stop` set."""
        raise NotImplementedError(f"Task {task.id} ({self.name}) has no abort handler")

    async def resume_interrupted(self, rt: Runtime, task: Task, restarts: int) -> Resumed:
        """A task cut off `restarts` times (below the limit): by default its phase runs again."""
        return Resumed(task, "interrupted", f"The {self.name} task runs again")

    async def end_at_limit(self, rt: Runtime, task: Task, restarts: int, past: bool) -> str:
        """End a task cut off `restarts` times, at the restart limit (`past`: beyond it, its
        ending was cut off too), visibly, in one commit; return the detail of the
        `task_interrupted` report."""
        raise NotImplementedError(f"Task {task.id} ({self.name}) has no ending at the restart limit")

    async def fault_stop(self, rt: Runtime, task: Task, detail: str) -> None:
        """End a task whose abort handler was cut off `restart_limit` times (faulted), in one commit."""
        raise NotImplementedError(f"Task {task.id} ({self.name}) has no abort handler")

    async def fault(self, rt: Runtime, change: Change, task: Task, error: ErrorInfo) -> None:
        """Write in `change` the task's ending when its code raised (`error` says what), with
        whatever must end with it (a generation's open tool round)."""
        change.put_task(evolve(task, state=Terminal(Faulted(error))))

    def written_back(self, task: Task) -> Task:
        """How a clean close leaves a task that was running: `pending`, checkpoint kept."""
        return evolve(task, state=Pending())

    # ------------------------------------------------------------------ what others see

    @classmethod
    def deadline(cls, task: Task) -> float | None:
        """The durable deadline a task waiting on the host holds (the harness's `wake()` and the
        invariant checker read it); None: it waits without one."""
        return None

    @classmethod
    def describe(cls, task: Task) -> str:
        """A few words for people: "generation", "tool save_note, unsafe"..."""
        return cls.name

    @classmethod
    def phase_label(cls, task: Task) -> str | None:
        """The phase a view names for the task ("request"), or None when the kind has none to name."""
        return None

    @classmethod
    def attempt_lost(cls, task: Task) -> bool:
        """Whether a crash at the task's position costs an attempt (a request cut off mid-answer)."""
        return False

    @classmethod
    def details(cls, task: Task) -> dict[str, Any]:
        """The kind's own fields `durable inspect` shows for a task, JSON-ready."""
        return {}

    @classmethod
    def check(cls, task: Task) -> list[str]:
        """Violations of the kind's own invariants that the task record alone shows (the
        invariant checker adds them to the generic ones); one sentence each."""
        return []


class RunService(Protocol):
    """What the host API asks of the task layer: starting and stopping runs, compactions, client
    tool results and decisions on tool calls waiting for approval."""

    def begin_run(self, rt: Runtime, change: Change, conversation_id: str, subs: list[Submission]) -> Task: ...

    async def stop_run(self, rt: Runtime, conversation_id: str, reason: StopMark) -> None: ...

    async def archive(self, rt: Runtime, conversation_id: str) -> None:
        """Archive the conversation (its active run ends `unanswered{archived}`), committed when this
        returns."""
        ...

    async def unarchive(self, rt: Runtime, conversation_id: str) -> None: ...

    async def compact(self, rt: Runtime, conversation_id: str) -> int: ...

    async def submit_client_result(self, rt: Runtime, call_id: str, content: Parts, is_error: bool) -> None:
        """Answer the client tool call `call_id` with `content` (text, parts, bytes to store:
        `durable.content.content_parts`); `ToolResultRejected` when no such call waits."""
        ...

    async def decide(self, rt: Runtime, call_id: str, *, approve: bool, arguments: Any = None,
                     reason: str = "", inbox: str | None = None) -> None:
        """Approve (with `arguments`, edited, or None: as the model gave them) or deny (with
        `reason`) the tool call `call_id`, committed when this returns; raises `ApprovalRejected`
        (changing nothing) for a call that waits for no decision or invalid edited arguments.
        `inbox`: the store's inbox row the decision came from, consumed by the deciding commit."""
        ...


__all__ = ["PhaseHandler", "Resumed", "RunService", "TaskKind", "kind_class", "known_kinds"]
