"""The public namespace of `durable`, pinned: `__all__` is exactly this list, every name in it is
there and documented (but for the ones listed as not yet documented), the internal phase types
stay beside their kind, and `import durable` loads neither anyio nor trio (the engine is
loaded on first use; `durable inspect` relies on it, see tests/cli/test_inspect.py)."""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import subprocess
import sys
import textwrap
from pathlib import Path

import durable
import durable.records

PUBLIC = [
    "Aborted", "Answered", "ApprovalRejected", "ApprovalSlot", "AssistantEntry", "Attachment", "AttachmentError",
    "AttachmentTooLarge", "BackgroundJobsUnsupported", "CancelInput", "Change", "Checkpoint", "Clock", "CodecError",
    "CommitFailed", "CommitRefused", "Compaction", "CompactionEntry", "CompactionFailure", "CompactionInput",
    "Conversation", "ConversationArchived", "ConversationBusy", "ConversationInfo", "ConversationNotEnded", "CorruptSession",
    "DeferredLive", "Diagnostic", "DiskFull", "Done", "DurableError", "EditRejected", "EncryptionUnsupported", "Entry", "ErrorDetail", "ErrorInfo",
    "ErrorReport", "Failed", "FailureReason", "FakeClock", "FallbackMemberMissing", "FallbackModel", "FaultReason",
    "Faulted", "File", "ForkRefused", "GenerationInput", "GenerationLive", "Harness", "HarnessClosed",
    "HarnessError", "HarnessState", "IllegalTransition", "Image", "InterruptReason", "InvalidHistory",
    "InvalidInput", "InvalidModelSettings", "Live", "LockLost", "MemoryStorage", "MissingCredentials",
    "MissingExtra", "Model", "ModelError", "ModelFallback", "ModelSettings", "ModelStopReason", "ModelUsage",
    "NotASession", "Outcome", "ParentCall", "PartialMessage", "Pending", "PrepareContext", "Price", "Prices",
    "Progress", "PruneReport", "Queued", "Replay", "Report", "ReportCallback", "Resumed", "RetryLive",
    "RetryPolicy", "RetryTool", "Run", "RunFailure", "Running", "Runtime", "SQLiteStorage", "SchemaTooNew",
    "SessionLocked", "SessionReadOnly", "Settings", "Sleeping", "State", "StopMark", "StopReason", "Storage",
    "StorageClosed", "StorageError", "StoredEntry", "StreamSettings", "Submission", "SubmissionHandle",
    "SubmissionStatus", "SubmissionUnanswered", "Synchronous", "SystemClock", "Task", "TaskFaulted", "TaskInput",
    "TaskInterrupted", "TaskKind", "TaskRef", "Terminal", "TextPart", "Tool", "ToolApi", "ToolArgumentError",
    "ToolCall", "ToolContext", "ToolDefinitionError", "ToolInput", "ToolResultEntry", "ToolResultRejected",
    "ToolSlot", "Transitions", "Unanswered", "UnansweredReason", "UnknownSubmission", "UnknownTask",
    "UnknownTaskKind", "UnsafeSessionFile", "UnsupportedModelSetting", "Usage", "UsageLimits", "UsageTotals",
    "UserEntry", "Waiting", "WhenBusy", "WrongKey", "define_tool", "open_harness", "subagent", "sync", "tool"
]
# What `SubmissionHandle.stream()` yields.
PUBLIC = sorted(PUBLIC + [
    "ApprovalRequestedEvent", "AttemptRestartedEvent", "ReasoningDeltaEvent", "RetryWaitingEvent", "SettledEvent",
    "SubmissionEvent", "TextDeltaEvent", "ToolCallEndedEvent", "ToolCallStartedEvent", "ToolOutputEvent",
])

# Names kept in `durable.records` (shared) or beside the kind that owns them, not part of the
# top-level namespace.
INTERNAL = {
    "durable.records": ["DeferredJob", "EMPTY_LIVE"],
    "durable.tasks.generation.records": ["AttemptFailure", "Phase", "Poll", "Prepare", "Request", "Retry", "ToolRound"],
    "durable.tasks.tool": ["ToolProgress"],
}

# Public names whose docstring is still to be written (issue 14, item 10: every public name
# documented). A name leaves this list when it gets its docstring; no name may join it.
NOT_YET_DOCUMENTED: set[str] = set()  # every public name has a docstring


def test_the_public_namespace_is_exactly_this_list():
    assert sorted(durable.__all__) == PUBLIC
    assert len(set(durable.__all__)) == len(durable.__all__)


def test_every_public_name_is_there():
    missing = [name for name in PUBLIC if not hasattr(durable, name)]
    assert missing == []
    assert set(PUBLIC) <= set(dir(durable))


def test_the_internal_phase_types_are_beside_their_kind_only():
    for module, names in INTERNAL.items():
        for name in names:
            assert hasattr(importlib.import_module(module), name), (module, name)
            assert name not in durable.__all__, name
            assert not hasattr(durable, name), name


def _alias_docstrings() -> dict[str, str]:
    """Module-level aliases (`WhenBusy = Literal[...]`) followed by a string: their docstring, as
    documentation tools read it."""
    docs: dict[str, str] = {}
    for path in Path(durable.__file__).parent.rglob("*.py"):
        body = ast.parse(path.read_text()).body
        for node, after in itertools.pairwise(body):
            if (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        docs[target.id] = after.value.value
    return docs


def docstring(name: str, aliases: dict[str, str]) -> str | None:
    value = getattr(durable, name)
    if inspect.isclass(value):
        return value.__dict__.get("__doc__")  # its own, not one inherited
    if inspect.isfunction(value) or inspect.ismodule(value):
        return value.__doc__
    return aliases.get(name)


def test_every_public_name_has_a_docstring():
    aliases = _alias_docstrings()
    undocumented = {name for name in PUBLIC if not (docstring(name, aliases) or "").strip()}
    assert undocumented - NOT_YET_DOCUMENTED == set(), "a new public name needs a docstring"
    assert NOT_YET_DOCUMENTED <= set(PUBLIC)


def test_importing_durable_loads_neither_anyio_nor_trio_and_first_use_loads_the_engine():
    probe = textwrap.dedent("""
        import sys
        import durable
        print(sorted(m for m in ("anyio", "trio", "sniffio") if m in sys.modules))
        durable.Settings(), durable.Answered("x", 2), durable.SessionLocked("f", 1)
        print(sorted(m for m in ("anyio", "trio") if m in sys.modules))
        durable.open_harness
        print("anyio" in sys.modules, "durable.engine.harness" in sys.modules)
        print(durable.sync.open_harness.__module__)  # the submodule, loaded on first use too
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "[]", "True True", "durable.sync"]


def test_an_unknown_name_is_an_attribute_error():
    try:
        durable.Prepare  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert str(exc) == "module 'durable' has no attribute 'Prepare'"
    else:
        raise AssertionError("durable.Prepare should not exist")
