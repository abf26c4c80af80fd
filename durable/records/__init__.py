"""The durable records of a session: plain, frozen values, the ground floor of the library.

Everything the harness commits is built from these: tasks (`tasks`), conversation entries
(`entries`) and their content parts (`content`), submissions (`submissions`), the live document
(`live`), usage totals (`usage`) and
the reason vocabularies (`reasons`). They carry no behaviour beyond small derived properties; a
change is a new value. The only place that knows their JSON shape is `durable.codec`. The task
kinds add their own input and checkpoint records (`durable.tasks`), registered with the codec by
the kind.
"""

from __future__ import annotations

from .content import Attachment, Part, TextPart
from .entries import (
    AssistantEntry,
    CompactionEntry,
    Diagnostic,
    Entry,
    Reasoning,
    StoredEntry,
    ToolCall,
    ToolResultEntry,
    Usage,
    UserEntry,
    reasoning_text,
)
from .live import (
    EMPTY_LIVE,
    ApprovalSlot,
    CompactionFailure,
    ConversationInfo,
    DeferredLive,
    GenerationLive,
    Live,
    ParentCall,
    PartialMessage,
    RetryLive,
    Run,
    RunFailure,
    ToolSlot,
    rolled_up,
)
from .model_settings import ModelSettings
from .reasons import FailureReason, ModelStopReason, StopReason, UnansweredReason
from .submissions import Answered, Queued, Submission, SubmissionStatus, Unanswered
from .tasks import (
    Aborted,
    Checkpoint,
    DeferredJob,
    Done,
    ErrorDetail,
    ErrorInfo,
    Failed,
    Faulted,
    Outcome,
    Pending,
    Replay,
    Running,
    Sleeping,
    State,
    StopMark,
    Task,
    TaskInput,
    Terminal,
    Waiting,
)
from .usage import EMPTY_USAGE, ModelUsage, UsageTotals

__all__ = [
    "EMPTY_LIVE",
    "EMPTY_USAGE",
    "Aborted",
    "Answered",
    "ApprovalSlot",
    "AssistantEntry",
    "Attachment",
    "Checkpoint",
    "CompactionEntry",
    "CompactionFailure",
    "ConversationInfo",
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
    "GenerationLive",
    "Live",
    "ModelSettings",
    "ModelStopReason",
    "ModelUsage",
    "Outcome",
    "ParentCall",
    "Part",
    "PartialMessage",
    "Pending",
    "Queued",
    "Reasoning",
    "Replay",
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
    "TextPart",
    "ToolCall",
    "ToolResultEntry",
    "ToolSlot",
    "Unanswered",
    "UnansweredReason",
    "Usage",
    "UsageTotals",
    "UserEntry",
    "Waiting",
    "reasoning_text",
    "rolled_up",
]
