"""durable: an LLM agent harness whose every step is committed to one SQLite file, so the agent
survives the death of its process.

    async with durable.open_harness("agent.sqlite", model=model, tools=tools) as h:
        sub = await h.root.submit("Hello")
        print(await sub.answer())

`durable.sync` offers the same harness to programs that are not async. The public namespace is
`__all__`; the records every task shares are in `durable.records`, those a task kind keeps for
itself (generation phases, tool progress) beside the kind, in `durable.tasks`.
"""

from typing import TYPE_CHECKING

from .content import File as File, Image as Image
from .errors import (
    ApprovalRejected as ApprovalRejected,
    AttachmentError as AttachmentError,
    AttachmentTooLarge as AttachmentTooLarge,
    BackgroundJobsUnsupported as BackgroundJobsUnsupported,
    CommitFailed as CommitFailed,
    CommitRefused as CommitRefused,
    ConversationArchived as ConversationArchived,
    ConversationBusy as ConversationBusy,
    ConversationNotEnded as ConversationNotEnded,
    CorruptSession as CorruptSession,
    DiskFull as DiskFull,
    DurableError as DurableError,
    EditRejected as EditRejected,
    EncryptionUnsupported as EncryptionUnsupported,
    ForkRefused as ForkRefused,
    HarnessClosed as HarnessClosed,
    HarnessError as HarnessError,
    IllegalTransition as IllegalTransition,
    InvalidHistory as InvalidHistory,
    InvalidInput as InvalidInput,
    InvalidModelSettings as InvalidModelSettings,
    LockLost as LockLost,
    MissingExtra as MissingExtra,
    NotASession as NotASession,
    RetryTool as RetryTool,
    SchemaTooNew as SchemaTooNew,
    SessionLocked as SessionLocked,
    SessionReadOnly as SessionReadOnly,
    StorageClosed as StorageClosed,
    StorageError as StorageError,
    SubmissionUnanswered as SubmissionUnanswered,
    ToolArgumentError as ToolArgumentError,
    ToolDefinitionError as ToolDefinitionError,
    ToolResultRejected as ToolResultRejected,
    UnknownSubmission as UnknownSubmission,
    UnknownTask as UnknownTask,
    UnknownTaskKind as UnknownTaskKind,
    UnsafeSessionFile as UnsafeSessionFile,
    UnsupportedModelSetting as UnsupportedModelSetting,
    WrongKey as WrongKey,
)
from .prices import Price as Price, Prices as Prices
from .records import (
    Aborted as Aborted,
    Answered as Answered,
    ApprovalSlot as ApprovalSlot,
    AssistantEntry as AssistantEntry,
    Attachment as Attachment,
    Checkpoint as Checkpoint,
    CompactionEntry as CompactionEntry,
    CompactionFailure as CompactionFailure,
    ConversationInfo as ConversationInfo,
    DeferredLive as DeferredLive,
    Diagnostic as Diagnostic,
    Done as Done,
    Entry as Entry,
    ErrorDetail as ErrorDetail,
    ErrorInfo as ErrorInfo,
    Failed as Failed,
    FailureReason as FailureReason,
    Faulted as Faulted,
    GenerationLive as GenerationLive,
    Live as Live,
    ModelSettings as ModelSettings,
    ModelStopReason as ModelStopReason,
    ModelUsage as ModelUsage,
    Outcome as Outcome,
    ParentCall as ParentCall,
    PartialMessage as PartialMessage,
    Pending as Pending,
    Queued as Queued,
    Replay as Replay,
    RetryLive as RetryLive,
    Run as Run,
    RunFailure as RunFailure,
    Running as Running,
    Sleeping as Sleeping,
    State as State,
    StopMark as StopMark,
    StopReason as StopReason,
    StoredEntry as StoredEntry,
    Submission as Submission,
    SubmissionStatus as SubmissionStatus,
    Task as Task,
    TaskInput as TaskInput,
    Terminal as Terminal,
    TextPart as TextPart,
    ToolCall as ToolCall,
    ToolResultEntry as ToolResultEntry,
    ToolSlot as ToolSlot,
    Unanswered as Unanswered,
    UnansweredReason as UnansweredReason,
    Usage as Usage,
    UsageTotals as UsageTotals,
    UserEntry as UserEntry,
    Waiting as Waiting,
)
from .settings import (
    Compaction as Compaction,
    Progress as Progress,
    RetryPolicy as RetryPolicy,
    Settings as Settings,
    StreamSettings as StreamSettings,
    UsageLimits as UsageLimits,
    WhenBusy as WhenBusy,
)

if TYPE_CHECKING:  # what `__getattr__` loads at run time, as type checkers must see it (`X as X`: re-exported)
    from durable import sync as sync  # (mypy 1.x does not see the relative form of this one)

    from ._open import open_harness as open_harness
    from .codec import CodecError as CodecError
    from .engine.clock import Clock as Clock, FakeClock as FakeClock, SystemClock as SystemClock
    from .engine.conversation import Conversation as Conversation, SubmissionHandle as SubmissionHandle
    from .engine.harness import Harness as Harness, HarnessState as HarnessState, Wake as Wake
    from .engine.head import Change as Change
    from .engine.instructions import PrepareContext as PrepareContext
    from .engine.kinds import Resumed as Resumed, TaskKind as TaskKind
    from .engine.reports import (
        ErrorReport as ErrorReport,
        FaultReason as FaultReason,
        InterruptReason as InterruptReason,
        ModelFallback as ModelFallback,
        Report as Report,
        ReportCallback as ReportCallback,
        TaskFaulted as TaskFaulted,
        TaskInterrupted as TaskInterrupted,
        TaskRef as TaskRef,
    )
    from .engine.runtime import Runtime as Runtime
    from .engine.stream_events import (
        ApprovalRequestedEvent as ApprovalRequestedEvent,
        AttemptRestartedEvent as AttemptRestartedEvent,
        ReasoningDeltaEvent as ReasoningDeltaEvent,
        RetryWaitingEvent as RetryWaitingEvent,
        SettledEvent as SettledEvent,
        SubmissionEvent as SubmissionEvent,
        TextDeltaEvent as TextDeltaEvent,
        ToolCallEndedEvent as ToolCallEndedEvent,
        ToolCallStartedEvent as ToolCallStartedEvent,
        ToolOutputEvent as ToolOutputEvent,
    )
    from .engine.transitions import Transitions as Transitions
    from .models.errors import MissingCredentials as MissingCredentials
    from .models.fallback import FallbackMemberMissing as FallbackMemberMissing, FallbackModel as FallbackModel
    from .models.protocol import Model as Model, ModelError as ModelError
    from .storage import MemoryStorage as MemoryStorage, SQLiteStorage as SQLiteStorage, Storage as Storage
    from .storage.retention import PruneReport as PruneReport
    from .storage.sqlite.store import Synchronous as Synchronous
    from .tasks import (
        CancelInput as CancelInput,
        CompactionInput as CompactionInput,
        GenerationInput as GenerationInput,
        ToolInput as ToolInput,
    )
    from .tools import (
        Tool as Tool,
        ToolApi as ToolApi,
        ToolContext as ToolContext,
        define_tool as define_tool,
        tool as tool,
    )
    from .tools.subagent import subagent as subagent
else:
    # The engine, the stores, the clocks and the models import anyio; they are loaded on first
    # use, so that a program that only reads a session file (`durable inspect`) starts fast and
    # never imports the event-loop libraries. Records, settings and errors are plain and imported
    # at once; the events of a stream too are plain, but only a stream needs them (a recovering
    # process does not). (Hidden from type checkers: a module `__getattr__` would make every name `Any`.)
    _LAZY = {
        "open_harness": "._open",
        "sync": None,  # the submodule itself
        # The errors that live next to the code raising them (see durable.errors), under the same tree.
        "CodecError": ".codec",
        "MissingCredentials": ".models.errors",
        **dict.fromkeys(("Model", "ModelError"), ".models.protocol"),
        **dict.fromkeys(("FallbackMemberMissing", "FallbackModel"), ".models.fallback"),
        **dict.fromkeys(("Clock", "FakeClock", "SystemClock"), ".engine.clock"),
        **dict.fromkeys(("Harness", "HarnessState", "Wake"), ".engine.harness"),
        **dict.fromkeys(("Conversation", "SubmissionHandle"), ".engine.conversation"),
        **dict.fromkeys(("ErrorReport", "FaultReason", "InterruptReason", "ModelFallback", "Report", "ReportCallback",
                         "TaskFaulted", "TaskInterrupted", "TaskRef"), ".engine.reports"),
        **dict.fromkeys(("Tool", "ToolApi", "ToolContext", "define_tool", "tool"), ".tools"),
        "subagent": ".tools.subagent",
        **dict.fromkeys(("MemoryStorage", "SQLiteStorage", "Storage"), ".storage"),
        **dict.fromkeys(("CancelInput", "CompactionInput", "GenerationInput", "ToolInput"), ".tasks"),
        **dict.fromkeys(("Resumed", "TaskKind"), ".engine.kinds"),
        **dict.fromkeys(("ApprovalRequestedEvent", "AttemptRestartedEvent", "ReasoningDeltaEvent", "RetryWaitingEvent",
                         "SettledEvent", "SubmissionEvent", "TextDeltaEvent", "ToolCallEndedEvent",
                         "ToolCallStartedEvent", "ToolOutputEvent"), ".engine.stream_events"),
        "Change": ".engine.head",
        "PruneReport": ".storage.retention",
        "PrepareContext": ".engine.instructions",
        "Runtime": ".engine.runtime",
        "Transitions": ".engine.transitions",
        "Synchronous": ".storage.sqlite.store",
    }

    def __getattr__(name):
        if name not in _LAZY:
            raise AttributeError(f"module 'durable' has no attribute {name!r}")
        import importlib

        module = _LAZY[name]
        value = importlib.import_module(f".{name}" if module is None else module, __name__)
        if module is not None:
            value = getattr(value, name)
        globals()[name] = value
        return value

    def __dir__():
        return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Aborted",
    "Answered",
    "ApprovalRejected",
    "ApprovalRequestedEvent",
    "ApprovalSlot",
    "AssistantEntry",
    "Attachment",
    "AttachmentError",
    "AttachmentTooLarge",
    "AttemptRestartedEvent",
    "BackgroundJobsUnsupported",
    "CancelInput",
    "Change",
    "Checkpoint",
    "Clock",
    "CodecError",
    "CommitFailed",
    "CommitRefused",
    "Compaction",
    "CompactionEntry",
    "CompactionFailure",
    "CompactionInput",
    "Conversation",
    "ConversationArchived",
    "ConversationBusy",
    "ConversationInfo",
    "ConversationNotEnded",
    "CorruptSession",
    "DeferredLive",
    "Diagnostic",
    "DiskFull",
    "Done",
    "DurableError",
    "EditRejected",
    "EncryptionUnsupported",
    "Entry",
    "ErrorDetail",
    "ErrorInfo",
    "ErrorReport",
    "Failed",
    "FailureReason",
    "FakeClock",
    "FallbackMemberMissing",
    "FallbackModel",
    "FaultReason",
    "Faulted",
    "File",
    "ForkRefused",
    "GenerationInput",
    "GenerationLive",
    "Harness",
    "HarnessClosed",
    "HarnessError",
    "HarnessState",
    "IllegalTransition",
    "Image",
    "InterruptReason",
    "InvalidHistory",
    "InvalidInput",
    "InvalidModelSettings",
    "Live",
    "LockLost",
    "MemoryStorage",
    "MissingCredentials",
    "MissingExtra",
    "Model",
    "ModelError",
    "ModelFallback",
    "ModelSettings",
    "ModelStopReason",
    "ModelUsage",
    "NotASession",
    "Outcome",
    "ParentCall",
    "PartialMessage",
    "Pending",
    "PrepareContext",
    "Price",
    "Prices",
    "Progress",
    "PruneReport",
    "Queued",
    "ReasoningDeltaEvent",
    "Replay",
    "Report",
    "ReportCallback",
    "Resumed",
    "RetryLive",
    "RetryPolicy",
    "RetryTool",
    "RetryWaitingEvent",
    "Run",
    "RunFailure",
    "Running",
    "Runtime",
    "SQLiteStorage",
    "SchemaTooNew",
    "SessionLocked",
    "SessionReadOnly",
    "Settings",
    "SettledEvent",
    "Sleeping",
    "State",
    "StopMark",
    "StopReason",
    "Storage",
    "StorageClosed",
    "StorageError",
    "StoredEntry",
    "StreamSettings",
    "Submission",
    "SubmissionEvent",
    "SubmissionHandle",
    "SubmissionStatus",
    "SubmissionUnanswered",
    "Synchronous",
    "SystemClock",
    "Task",
    "TaskFaulted",
    "TaskInput",
    "TaskInterrupted",
    "TaskKind",
    "TaskRef",
    "Terminal",
    "TextDeltaEvent",
    "TextPart",
    "Tool",
    "ToolApi",
    "ToolArgumentError",
    "ToolCall",
    "ToolCallEndedEvent",
    "ToolCallStartedEvent",
    "ToolContext",
    "ToolDefinitionError",
    "ToolInput",
    "ToolOutputEvent",
    "ToolResultEntry",
    "ToolResultRejected",
    "ToolSlot",
    "Transitions",
    "Unanswered",
    "UnansweredReason",
    "UnknownSubmission",
    "UnknownTask",
    "UnknownTaskKind",
    "UnsafeSessionFile",
    "UnsupportedModelSetting",
    "Usage",
    "UsageLimits",
    "UsageTotals",
    "UserEntry",
    "Waiting",
    "WhenBusy",
    "WrongKey",
    "define_tool",
    "open_harness",
    "subagent",
    "sync",
    "tool",
]

from ._version import __version__ as __version__
