"""durable: an LLM agent harness whose every step is committed to one SQLite file, so the agent
survives the death of its process.

    async with durable.open_harness("agent.sqlite", model=model, tools=tools) as h:
        sub = await h.root.submit("Hello")
        print(await sub.wait())
"""

from ._open import open_harness
from .engine.clock import Clock, FakeClock, SystemClock
from .engine.harness import Conversation, Harness, SubmissionHandle, Wake
from .engine.reports import ErrorReport, Report, TaskFaulted, TaskInterrupted, TaskRef
from .engine.tools import Tool, ToolApi, ToolContext, define_tool, tool
from .errors import (
    CommitFailed,
    ConversationBusy,
    CorruptSession,
    DiskFull,
    DurableError,
    HarnessClosed,
    HarnessError,
    LockLost,
    NotASession,
    SchemaTooNew,
    SessionLocked,
    StorageClosed,
    StorageError,
    ToolDefinitionError,
    ToolResultRejected,
    UnknownSubmission,
    UnknownTask,
)
from .records import *  # noqa: F403 - the records are part of the public API
from .settings import Compaction, Progress, RetryPolicy, Settings, StreamSettings
from .storage import MemoryStorage, SQLiteStorage, Storage

__version__ = "0.1.0"
