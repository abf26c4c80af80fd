"""Tasks: the durable state machines every kind shares, and the two open variants kinds extend.

A `Task` has a kind, an owner conversation, a `state` (pending, running, sleeping, waiting,
terminal with an outcome), the kind's committed `input` and `checkpoint`, and a `restarts`
counter. `TaskInput` and `Checkpoint` are open: each task kind subclasses them with its own
records and registers their tags with the codec (`durable.engine.kinds.TaskKind`), so a kind is
one module and these classes never list the kinds.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from attrs import field

from .._frozen import OMITTED_WHEN_DEFAULT, frozen
from .reasons import FailureReason

Replay = Literal["safe", "unsafe"]
"""What a tool call may do after a crash cut it off: "safe" runs it again, "unsafe" never runs it a
second time (the model gets an error result saying it may have run)."""
StopMark = Literal["aborted", "interrupted", "archived"]
"""How the host stopped a run (`Task.stop`): an abort, an interrupt by a new input, or the
conversation being archived (`Conversation.archive()`)."""


class TaskInput:
    """Base of every kind's input record: the committed intent of a task (`Task.input`). Stored
    with the kind's name as its tag."""

    __slots__ = ()


class Checkpoint:
    """Base of every kind's checkpoint records: the committed position a task resumes from
    (`Task.checkpoint`); its tag is the task's phase."""

    __slots__ = ()


# --------------------------------------------------------------------------- outcomes


@frozen
class ErrorDetail:
    """The machine-readable part of an error: why the task failed (`FailureReason`)."""

    reason: FailureReason


@frozen
class ErrorInfo:
    """An error a task ended with: a sentence for people (`message`) and its `detail`."""

    message: str
    detail: ErrorDetail


@frozen
class Done:
    """Outcome: the task finished; `result` is what it produced (a tool's result, a summary...)."""

    result: Any = None


@frozen
class Failed:
    """Outcome: the task ended with an error it could report (`error` says which and why)."""

    error: ErrorInfo


@frozen
class Aborted:
    """Outcome: the host stopped the task (an abort, or an interrupt by a new input)."""

    pass


@frozen
class Faulted:
    """Outcome: the harness gave up on the task: its code raised, or its abort handler was cut off
    `restart_limit` times in a row (`error` says which)."""

    error: ErrorInfo


Outcome = Union[Done, Failed, Aborted, Faulted]
"""How a task ended (`Terminal.outcome`)."""


# --------------------------------------------------------------------------- states


@frozen
class Pending:
    """State: the task is ready to run; its runner picks it up (after a crash or a clean close too)."""

    pass


@frozen
class Running:
    """State: an invocation owns the task. A task found `running` when a file is opened was cut off
    by a crash: the open charges it (`restarts + 1`) and makes it `pending`."""

    pass


@frozen
class Sleeping:
    """State: the task waits, durably, until the clock reaches `until` (a retry backoff, a poll)."""

    until: float


@frozen
class Waiting:
    """Waiting on child tasks (`on` lists their ids) or on the host (`on` is empty, `client`)."""

    on: tuple[int, ...] = ()
    client: bool = False


@frozen
class Terminal:
    """State: the task ended, with its `outcome`; it never changes again."""

    outcome: Outcome


State = Union[Pending, Running, Sleeping, Waiting, Terminal]
"""Where a task stands (`Task.state`)."""


@frozen
class DeferredJob:
    """A background job at the provider. `handle` is empty until the submit returned. `model`:
    the member of a `FallbackModel` that started it (its index), which polls and cancels it."""

    key: str
    handle: str | None = None
    model: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class Task:
    """A unit of work the harness runs and commits: a generation (a run), a tool call, a compaction,
    an owed cancel, or a task of a kind the host added.

    `state` is where it stands; `checkpoint` the committed position its kind resumes from;
    `restarts` how many times in a row a crash cut it off (0 again once it commits progress).
    `parent_id` is the task that started it (a tool's generation); `stop` is set when the host
    stopped its run. Times are the clock's seconds."""

    id: int
    conversation_id: str
    kind: str
    input: TaskInput
    state: State = Pending()
    checkpoint: Checkpoint | None = None
    restarts: int = 0
    parent_id: int | None = None
    stop: StopMark | None = None  # set when the host stopped the run
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def terminal(self) -> bool:
        return isinstance(self.state, Terminal)

    @property
    def outcome(self) -> Outcome | None:
        return self.state.outcome if isinstance(self.state, Terminal) else None


__all__ = [
    "Aborted",
    "Checkpoint",
    "DeferredJob",
    "Done",
    "ErrorDetail",
    "ErrorInfo",
    "Failed",
    "Faulted",
    "Outcome",
    "Pending",
    "Replay",
    "Running",
    "Sleeping",
    "State",
    "StopMark",
    "Task",
    "TaskInput",
    "Terminal",
    "Waiting",
]
