"""durable: an LLM agent harness whose every step is committed to one SQLite file, so the agent
survives the death of its process.

    async with durable.open_harness("agent.sqlite", model=model, tools=tools) as h:
        sub = await h.root.submit("Hello")
        print(await sub.wait())
"""

from typing import TYPE_CHECKING, Any

from .errors import (
    CommitFailed as CommitFailed,
    ConversationBusy as ConversationBusy,
    CorruptSession as CorruptSession,
    DiskFull as DiskFull,
    DurableError as DurableError,
    HarnessClosed as HarnessClosed,
    HarnessError as HarnessError,
    IllegalTransition as IllegalTransition,
    InvalidInput as InvalidInput,
    LockLost as LockLost,
    MissingExtra as MissingExtra,
    NotASession as NotASession,
    SchemaTooNew as SchemaTooNew,
    SessionLocked as SessionLocked,
    SessionReadOnly as SessionReadOnly,
    StorageClosed as StorageClosed,
    StorageError as StorageError,
    ToolArgumentError as ToolArgumentError,
    ToolDefinitionError as ToolDefinitionError,
    ToolResultRejected as ToolResultRejected,
    UnknownSubmission as UnknownSubmission,
    UnknownTask as UnknownTask,
    UnsafeSessionFile as UnsafeSessionFile,
)
from .records import *  # noqa: F403 - the records are part of the public API
from .settings import (
    Compaction as Compaction,
    Progress as Progress,
    RetryPolicy as RetryPolicy,
    Settings as Settings,
    StreamSettings as StreamSettings,
)

# The engine, the stores and the clocks import anyio; they are loaded on first use, so that a
# program that only reads a session file (`durable inspect`) starts fast and never imports the
# event-loop libraries. Records, settings and errors are plain and imported at once.
_LAZY = {
    "open_harness": "._open",
    # The errors that live next to the code raising them (see durable.errors), under the same tree.
    "CodecError": ".codec",
    "ModelError": ".models.protocol",
    "MissingCredentials": ".models.errors",
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


if TYPE_CHECKING:  # what `__getattr__` loads, as the type checker must see it (`X as X`: re-exported)
    from ._open import open_harness as open_harness
    from .codec import CodecError as CodecError
    from .engine.clock import Clock as Clock, FakeClock as FakeClock, SystemClock as SystemClock
    from .engine.harness import (
        Conversation as Conversation,
        Harness as Harness,
        SubmissionHandle as SubmissionHandle,
        Wake as Wake,
    )
    from .engine.reports import (
        ErrorReport as ErrorReport,
        Report as Report,
        TaskFaulted as TaskFaulted,
        TaskInterrupted as TaskInterrupted,
        TaskRef as TaskRef,
    )
    from .engine.tools import (
        Tool as Tool,
        ToolApi as ToolApi,
        ToolContext as ToolContext,
        define_tool as define_tool,
        tool as tool,
    )
    from .models.errors import MissingCredentials as MissingCredentials
    from .models.protocol import ModelError as ModelError
    from .storage import MemoryStorage as MemoryStorage, SQLiteStorage as SQLiteStorage, Storage as Storage

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml reads it (setuptools dynamic)
