"""durable: an LLM agent harness whose every step is committed to one SQLite file, so the agent
survives the death of its process.

    async with durable.open_harness("agent.sqlite", model=model, tools=tools) as h:
        sub = await h.root.submit("Hello")
        print(await sub.wait())
"""

from typing import TYPE_CHECKING, Any

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
    SessionReadOnly,
    StorageClosed,
    StorageError,
    ToolDefinitionError,
    ToolResultRejected,
    UnknownSubmission,
    UnknownTask,
    UnsafeSessionFile,
)
from .records import *  # noqa: F403 - the records are part of the public API
from .settings import Compaction, Progress, RetryPolicy, Settings, StreamSettings

# The engine, the stores and the clocks import anyio; they are loaded on first use, so that a
# program that only reads a session file (`durable inspect`) starts fast and never imports the
# event-loop libraries. Records, settings and errors are plain and imported at once.
_LAZY = {
    "open_harness": "._open",
    **dict.fromkeys(("Clock", "FakeClock", "SystemClock"), ".engine.clock"),
    **dict.fromkeys(("Conversation", "Harness", "SubmissionHandle", "Wake"), ".engine.harness"),
    **dict.fromkeys(("ErrorReport", "Report", "TaskFaulted", "TaskInterrupted", "TaskRef"), ".engine.reports"),
    **dict.fromkeys(("Tool", "ToolApi", "ToolContext", "define_tool", "tool"), ".engine.tools"),
    **dict.fromkeys(("MemoryStorage", "SQLiteStorage", "Storage"), ".storage"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'durable' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:
    from ._open import open_harness
    from .engine.clock import Clock, FakeClock, SystemClock
    from .engine.harness import Conversation, Harness, SubmissionHandle, Wake
    from .engine.reports import ErrorReport, Report, TaskFaulted, TaskInterrupted, TaskRef
    from .engine.tools import Tool, ToolApi, ToolContext, define_tool, tool
    from .storage import MemoryStorage, SQLiteStorage, Storage

__version__ = "0.1.0"
