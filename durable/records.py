"""The durable records of a session: plain, frozen values.

Everything the harness commits is one of these classes: tasks (with their state, outcome and
kind-specific checkpoint), conversation entries, submissions and the live document. They carry
no behaviour beyond small derived properties; a change is a new value (`attrs.evolve`). The only
place that knows their JSON shape is `durable.codec`.

Variants (task states, outcomes, checkpoint phases, entries) are separate classes joined in a
`Union`; the codec stores them with a tag field and refuses an unknown tag.

This module defines the tasks and submissions and is where every record is imported from: the
conversation entries are written in `durable.entries`, the live document in
`durable.live_records` and the reason vocabularies in `durable.reasons`, and all are re-exported
here.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from attrs import field

from ._frozen import frozen
from .entries import (
    AssistantEntry,
    CompactionEntry,
    Diagnostic,
    Entry,
    StoredEntry,
    ToolCall,
    ToolResultEntry,
    Usage,
    UserEntry,
)
from .live_records import (
    EMPTY_LIVE,
    CompactionFailure,
    DeferredLive,
    GenerationLive,
    Live,
    PartialMessage,
    RetryLive,
    Run,
    RunFailure,
    ToolSlot,
)
from .reasons import FailureReason, ModelStopReason, StopReason, UnansweredReason

Replay = Literal["safe", "unsafe"]
"""What a tool call may do after a crash cut it off: "safe" runs it again, "unsafe" never runs it a
second time (the model gets an error result saying it may have run)."""
StopMark = Literal["aborted", "interrupted"]
"""How the host stopped a run (`Task.stop`): an abort, or an interrupt by a new input."""


# --------------------------------------------------------------------------- task states and outcomes


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


# --------------------------------------------------------------------------- generation phases


@frozen
class AttemptFailure:
    """Why an attempt failed, as the live document shows it."""

    message: str
    kind: str
    provider: str | None = None
    status_code: int | None = None


@frozen
class DeferredJob:
    """A background job at the provider. `handle` is empty until the submit returned."""

    key: str
    handle: str | None = None


# Every generation phase but `tools` carries `rounds`: the tool rounds its run has made so far
# (bounded by `settings.max_tool_rounds`).


@frozen
class Prepare:
    """Generation phase: build the request of attempt `attempt` from the conversation."""

    attempt: int = 1
    rounds: int = 0


@frozen
class Request:
    """Generation phase: the request of attempt `attempt` is being sent and its answer streamed;
    `options` are the model options it was sent with."""

    attempt: int
    options: dict[str, Any] = field(factory=dict)
    rounds: int = 0


@frozen
class Poll:
    """Generation phase: a deferred answer is pending at the provider (`job`); the next poll is at
    `poll_at`."""

    attempt: int
    job: DeferredJob
    poll_at: float
    rounds: int = 0


@frozen
class Retry:
    """Generation phase: attempt `attempt` failed with `error`; the next attempt starts at `until`
    (the durable backoff). `job` is the deferred job the failed attempt had, if any."""

    attempt: int
    until: float
    error: AttemptFailure
    job: DeferredJob | None = None
    rounds: int = 0


@frozen
class ToolRound:
    """Waiting on the tool tasks of one assistant message (`assistant_seq`)."""

    assistant_seq: int
    calls: tuple[ToolCall, ...]
    pending: tuple[int, ...]
    round: int = 1


Phase = Union[Prepare, Request, Poll, Retry, ToolRound]


@frozen
class GenerationInput:
    """The input of a generation task (a run): the submissions it answers, in order."""

    submission_ids: tuple[str, ...]


@frozen
class ToolInput:
    """The committed intent of one tool call: what runs and whether it may run again."""

    call: ToolCall
    replay: Replay = "unsafe"
    client: bool = False
    deadline: float | None = None


@frozen
class CompactionInput:
    """The input of a compaction task: what started it (the host, the context threshold,
    or a context overflow reported by the model)."""

    trigger: Literal["manual", "threshold", "overflow"]


@frozen
class CancelInput:
    """An owed cancel: the deferred job of run `run_task_id` is to be cancelled at `provider`."""

    job: DeferredJob
    run_task_id: int
    provider: str | None = None


TaskInput = Union[GenerationInput, ToolInput, CompactionInput, CancelInput]
"""The committed intent of a task, one kind of input per task kind (`Task.input`)."""


@frozen
class ToolProgress:
    """A tool's committed partial output and, once it ended, the result for the model."""

    output: str = ""
    result: ToolResultEntry | None = None
    started: bool = False  # an unsafe tool's execute was cut off by a clean close


Checkpoint = Union[Prepare, Request, Poll, Retry, ToolRound, ToolProgress]


@frozen
class Task:
    """A unit of work the harness runs and commits: a generation (a run), a tool call, a compaction
    or an owed cancel.

    `state` is where it stands (pending, running, sleeping, waiting, terminal); `checkpoint` the
    committed position its kind resumes from; `restarts` how many times in a row a crash cut it
    off (0 again once it commits progress). `parent_id` is the task that started it (a tool's
    generation); `stop` is set when the host stopped its run. Times are the clock's seconds."""

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


# --------------------------------------------------------------------------- submissions


@frozen
class Queued:
    """Submission status: accepted and committed; waiting for a run to answer it."""

    pass


@frozen
class Answered:
    """The run that took this input ended with an answer (`done`)."""

    text: str = ""
    seq: int | None = None


@frozen
class Unanswered:
    """Submission status: the run that took this input ended without an answer; `reason` says why
    (`UnansweredReason`) and `detail` in a sentence."""

    reason: UnansweredReason
    detail: str


SubmissionStatus = Union[Queued, Answered, Unanswered]
"""Where a submission stands: queued until its run settles it, then answered or unanswered."""


@frozen
class Submission:
    """An input the host submitted to a conversation, and what became of it (`status`).

    `seq` is the seq of its user entry once a run took it; `task_id` the run (generation task)
    that took it. `settled` is true once it is answered or unanswered: it settles exactly once."""

    id: str
    conversation_id: str
    text: str
    seq: int | None = None  # the user entry's seq, once its run started
    status: SubmissionStatus = Queued()
    task_id: int | None = None
    created_at: float = 0.0

    @property
    def settled(self) -> bool:
        return not isinstance(self.status, Queued)


__all__ = [
    "EMPTY_LIVE",
    "Aborted",
    "Answered",
    "AssistantEntry",
    "AttemptFailure",
    "CancelInput",
    "Checkpoint",
    "CompactionEntry",
    "CompactionFailure",
    "CompactionInput",
    "DeferredJob",
    "DeferredLive",
    "Diagnostic",
    "Done",
    "Entry",
    "ErrorDetail",
    "ErrorInfo",
    "Failed",
    "FailureReason",
    "Faulted",
    "GenerationInput",
    "GenerationLive",
    "Live",
    "ModelStopReason",
    "Outcome",
    "PartialMessage",
    "Pending",
    "Phase",
    "Poll",
    "Prepare",
    "Queued",
    "Replay",
    "Request",
    "Retry",
    "RetryLive",
    "Run",
    "RunFailure",
    "Running",
    "Sleeping",
    "State",
    "StopMark",
    "StopReason",
    "StoredEntry",
    "Submission",
    "SubmissionStatus",
    "Task",
    "TaskInput",
    "Terminal",
    "ToolCall",
    "ToolInput",
    "ToolProgress",
    "ToolResultEntry",
    "ToolRound",
    "ToolSlot",
    "Unanswered",
    "UnansweredReason",
    "Usage",
    "UserEntry",
    "Waiting",
]
