"""The durable records of a session: plain, frozen values.

Everything the harness commits is one of these classes: tasks (with their state, outcome and
kind-specific checkpoint), conversation entries, submissions and the live document. They carry
no behaviour beyond small derived properties; a change is a new value (`attrs.evolve`). The only
place that knows their JSON shape is `durable.codec`.

Variants (task states, outcomes, checkpoint phases, entries) are separate classes joined in a
`Union`; the codec stores them with a tag field and refuses an unknown tag.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from attrs import field, frozen

ModelStopReason = Literal["stop", "tool_use", "length", "error"]
"""How a model's response ended (`durable.models.FinalMessage.stop_reason`)."""
StopReason = Literal[ModelStopReason, "aborted"]
"""How a stored assistant entry ended: what a model may return, or "aborted" for a partial kept
after an interruption."""
Replay = Literal["safe", "unsafe"]
# Why a run ended without an answer (`Unanswered.reason`, `RunFailure.reason`).
UnansweredReason = Literal["model_error", "interrupted", "restart_limit", "aborted", "faulted"]
# Why a task failed or faulted (`ErrorDetail.reason`).
FailureReason = Literal["exception", "model_error", "interrupted", "restart_limit", "timeout"]
# How the host stopped a run (`Task.stop`): an abort, or an interrupt by a new input.
StopMark = Literal["aborted", "interrupted"]


# --------------------------------------------------------------------------- conversation entries


@frozen
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@frozen
class ToolCall:
    """One call the model asked for. `arguments` is the raw JSON text the model produced."""

    id: str
    name: str
    arguments: str


@frozen
class Diagnostic:
    severity: Literal["error", "warning", "info"]
    code: str
    message: str


@frozen
class UserEntry:
    text: str
    submission_id: str | None = None


@frozen
class AssistantEntry:
    """A model message. `stop_reason` "aborted" marks a partial kept after an interruption; such
    entries stay in the conversation but are never sent to the model again."""

    text: str
    stop_reason: StopReason
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    error: str | None = None
    attempt: int = 1
    interrupted: bool = False  # a partial of an attempt the host's death cut off (charged once)


@frozen
class ToolResultEntry:
    call_id: str
    tool_name: str
    content: str
    is_error: bool = False
    diagnostics: tuple[Diagnostic, ...] = ()


@frozen
class CompactionEntry:
    """A summary that replaces every entry before `first_kept_seq` in the model's context."""

    summary: str
    first_kept_seq: int
    usage: Usage = Usage()


Entry = Union[UserEntry, AssistantEntry, ToolResultEntry, CompactionEntry]


@frozen
class StoredEntry:
    """An entry at its place in a conversation (`seq` counts from 1 per conversation)."""

    conversation_id: str
    seq: int
    entry: Entry


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


@frozen
class Prepare:
    attempt: int = 1


@frozen
class Request:
    attempt: int
    options: dict[str, Any] = field(factory=dict)


@frozen
class Poll:
    attempt: int
    job: DeferredJob
    poll_at: float


@frozen
class Retry:
    attempt: int
    until: float
    error: AttemptFailure
    job: DeferredJob | None = None


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


# --------------------------------------------------------------------------- live document


@frozen
class Run:
    task_id: int
    inputs: tuple[str, ...]


@frozen
class PartialMessage:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()


@frozen
class RetryLive:
    attempt: int
    at: float
    error: str
    kind: str
    provider: str | None = None
    status_code: int | None = None


@frozen
class DeferredLive:
    poll_at: float


@frozen
class GenerationLive:
    attempt: int
    message: PartialMessage = PartialMessage()
    retry: RetryLive | None = None
    deferred: DeferredLive | None = None


@frozen
class ToolSlot:
    call_id: str
    name: str
    task_id: int
    output: str = ""
    status: Literal["running", "waiting", "done", "error"] = "running"


@frozen
class RunFailure:
    task_id: int
    inputs: tuple[str, ...]
    reason: UnansweredReason
    detail: str
    first: str | None = None


@frozen
class CompactionFailure:
    task_id: int
    trigger: str
    error: str


@frozen
class Live:
    """What a UI renders for one conversation; only committed values ever appear here."""

    run: Run | None = None
    generation: GenerationLive | None = None
    tools: tuple[ToolSlot, ...] = ()
    run_failure: RunFailure | None = None
    compaction_failure: CompactionFailure | None = None
    compactions: int = 0

    @property
    def busy(self) -> bool:
        return self.run is not None


EMPTY_LIVE = Live()


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
