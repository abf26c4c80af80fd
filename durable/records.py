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
"""What a tool call may do after a crash cut it off: "safe" runs it again, "unsafe" never
runs it a second time (the model gets an error result saying it may have run)."""
UnansweredReason = Literal["model_error", "interrupted", "restart_limit", "aborted", "faulted"]
"""Why a run ended without an answer (`Unanswered.reason`, `RunFailure.reason`)."""
FailureReason = Literal["exception", "model_error", "interrupted", "restart_limit", "timeout"]
"""Why a task failed or faulted (`ErrorDetail.reason`)."""
StopMark = Literal["aborted", "interrupted"]
"""How the host stopped a run (`Task.stop`): an abort, or an interrupt by a new input."""


# --------------------------------------------------------------------------- conversation entries


@frozen
class Usage:
    """Tokens a model call used, as the provider reported them (0 when it did not). `a + b` adds them up."""

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
    """A note attached to a tool result (for the host and the logs, not sent to the model):
    its `severity`, a stable `code` and a sentence."""

    severity: Literal["error", "warning", "info"]
    code: str
    message: str


@frozen
class UserEntry:
    """An input of the host, in the conversation. `submission_id` is the submission it came from
    (None for an entry written without one)."""

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
    """The result of one tool call, as the model reads it: `content` (text), with `is_error`
    when the call failed (bad arguments, an unknown tool, an exception, an interruption)."""

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
"""Every kind of conversation entry."""


@frozen
class StoredEntry:
    """An entry at its place in a conversation (`seq` counts from 1 per conversation)."""

    conversation_id: str
    seq: int
    entry: Entry


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


@frozen
class Running:
    """State: an invocation owns the task. A task found `running` when a file is opened was cut off
    by a crash: the open charges it (`restarts + 1`) and makes it `pending`."""


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
"""Where a task stands."""


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
    """Generation phase: build the request of attempt `attempt` from the conversation."""

    attempt: int = 1


@frozen
class Request:
    """Generation phase: the request of attempt `attempt` is being sent and its answer streamed;
    `options` are the model options it was sent with."""

    attempt: int
    options: dict[str, Any] = field(factory=dict)


@frozen
class Poll:
    """Generation phase: a deferred answer is pending at the provider (`job`); the next poll is at
    `poll_at`."""

    attempt: int
    job: DeferredJob
    poll_at: float


@frozen
class Retry:
    """Generation phase: attempt `attempt` failed with `error`; the next attempt starts at `until`
    (the durable backoff). `job` is the deferred job the failed attempt had, if any."""

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
"""The checkpoint phases of a generation task."""


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
"""What a task was started with, one class per kind."""


@frozen
class ToolProgress:
    """A tool's committed partial output and, once it ended, the result for the model."""

    output: str = ""
    result: ToolResultEntry | None = None
    started: bool = False  # an unsafe tool's execute was cut off by a clean close


Checkpoint = Union[Prepare, Request, Poll, Retry, ToolRound, ToolProgress]
"""The committed position a task resumes from: a generation's phase, or a tool's progress."""


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


@frozen
class Answered:
    """The run that took this input ended with an answer (`done`)."""


@frozen
class Unanswered:
    """Submission status: the run that took this input ended without an answer; `reason` says why
    (`UnansweredReason`) and `detail` in a sentence."""

    reason: UnansweredReason
    detail: str


SubmissionStatus = Union[Queued, Answered, Unanswered]
"""What became of a submission."""


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


# --------------------------------------------------------------------------- live document


@frozen
class Run:
    """The run a conversation is busy with: its generation task and the submissions it answers."""

    task_id: int
    inputs: tuple[str, ...]


@frozen
class PartialMessage:
    """The committed part of an answer being streamed: text, tool calls and usage so far."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()


@frozen
class RetryLive:
    """A retry the live document shows: attempt `attempt` failed with `error` (`kind`, and the
    provider's name and HTTP status when known); the next attempt starts at `at`."""

    attempt: int
    at: float
    error: str
    kind: str
    provider: str | None = None
    status_code: int | None = None


@frozen
class DeferredLive:
    """A deferred answer the live document shows: the next poll is at `poll_at`."""

    poll_at: float


@frozen
class GenerationLive:
    """The generation a live document shows: its attempt, the partial answer, and a pending retry
    or deferred poll."""

    attempt: int
    message: PartialMessage = PartialMessage()
    retry: RetryLive | None = None
    deferred: DeferredLive | None = None


@frozen
class ToolSlot:
    """A tool call the live document shows: its call id, tool name and task, the output committed so
    far, and its status."""

    call_id: str
    name: str
    task_id: int
    output: str = ""
    status: Literal["running", "waiting", "done", "error"] = "running"


@frozen
class RunFailure:
    """The last run of a conversation that ended without an answer: its task, inputs, `reason`
    and `detail`, and the first input's text (to show next to it)."""

    task_id: int
    inputs: tuple[str, ...]
    reason: UnansweredReason
    detail: str
    first: str | None = None


@frozen
class CompactionFailure:
    """A compaction that failed: its task, what triggered it and the error. The conversation
    goes on uncompacted."""

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
"""The live document of an idle conversation."""


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
