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

from attrs import field, frozen

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
# How the host stopped a run (`Task.stop`): an abort, or an interrupt by a new input.
StopMark = Literal["aborted", "interrupted"]


# --------------------------------------------------------------------------- task states and outcomes


@frozen
class ErrorDetail:
    reason: FailureReason


@frozen
class ErrorInfo:
    message: str
    detail: ErrorDetail


@frozen
class Done:
    result: Any = None


@frozen
class Failed:
    error: ErrorInfo


@frozen
class Aborted:
    pass


@frozen
class Faulted:
    error: ErrorInfo


Outcome = Union[Done, Failed, Aborted, Faulted]


@frozen
class Pending:
    pass


@frozen
class Running:
    pass


@frozen
class Sleeping:
    until: float


@frozen
class Waiting:
    """Waiting on child tasks (`on` lists their ids) or on the host (`on` is empty, `client`)."""

    on: tuple[int, ...] = ()
    client: bool = False


@frozen
class Terminal:
    outcome: Outcome


State = Union[Pending, Running, Sleeping, Waiting, Terminal]


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
    attempt: int = 1
    rounds: int = 0


@frozen
class Request:
    attempt: int
    options: dict[str, Any] = field(factory=dict)
    rounds: int = 0


@frozen
class Poll:
    attempt: int
    job: DeferredJob
    poll_at: float
    rounds: int = 0


@frozen
class Retry:
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
    trigger: Literal["manual", "threshold", "overflow"]


@frozen
class CancelInput:
    """An owed cancel: the deferred job of run `run_task_id` is to be cancelled at `provider`."""

    job: DeferredJob
    run_task_id: int
    provider: str | None = None


TaskInput = Union[GenerationInput, ToolInput, CompactionInput, CancelInput]


@frozen
class ToolProgress:
    """A tool's committed partial output and, once it ended, the result for the model."""

    output: str = ""
    result: ToolResultEntry | None = None
    started: bool = False  # an unsafe tool's execute was cut off by a clean close


Checkpoint = Union[Prepare, Request, Poll, Retry, ToolRound, ToolProgress]


@frozen
class Task:
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
    pass


@frozen
class Answered:
    """The run that took this input ended with an answer (`done`): `text` is the final assistant
    message and `seq` its entry in the conversation. (A file written before they were stored
    loads them as "" and None.)"""

    text: str = ""
    seq: int | None = None


@frozen
class Unanswered:
    reason: UnansweredReason
    detail: str


SubmissionStatus = Union[Queued, Answered, Unanswered]


@frozen
class Submission:
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
