"""The tool kind: one task per tool call (`kind`), its records and sentences (`records`), a round
of calls as the generation sees it (`rounds`), and calls waiting for a person's decision
(`approval`). Re-exported here: `from durable.tasks.tool import ToolKind, ToolProgress`."""

from .approval import CHECK_SECONDS
from .kind import ToolKind
from .records import (
    APPROVAL_CHECK_FAILED,
    APPROVAL_CHECK_SLOW,
    DECISION_ENDED,
    DECISION_INVALID,
    DECISION_NOT_ASKED,
    DECISION_TWICE,
    DECISION_UNCHECKABLE,
    DECISION_UNKNOWN,
    KIND,
    TOOL_AT_LIMIT,
    TOOL_DENIED,
    TOOL_DENIED_WITHOUT_REASON,
    TOOL_MAY_HAVE_RUN,
    TOOL_NOT_DECIDED,
    TOOL_RETRIES_EXHAUSTED,
    TOOL_RUNS_AGAIN,
    TOOL_TIMED_OUT,
    TOOL_TIMEOUT,
    TOOL_TIMEOUT_UNSAFE,
    Approval,
    ToolInput,
    ToolProgress,
)
from .rounds import RoundParent, close_call, start_calls
from .subagent import SUBAGENT_TOO_DEEP, SUBAGENT_UNANSWERED, Delegated, child_of, halt_child

__all__ = [
    "APPROVAL_CHECK_FAILED",
    "APPROVAL_CHECK_SLOW",
    "CHECK_SECONDS",
    "DECISION_ENDED",
    "DECISION_INVALID",
    "DECISION_NOT_ASKED",
    "DECISION_TWICE",
    "DECISION_UNCHECKABLE",
    "DECISION_UNKNOWN",
    "KIND",
    "SUBAGENT_TOO_DEEP",
    "SUBAGENT_UNANSWERED",
    "TOOL_AT_LIMIT",
    "TOOL_DENIED",
    "TOOL_DENIED_WITHOUT_REASON",
    "TOOL_MAY_HAVE_RUN",
    "TOOL_NOT_DECIDED",
    "TOOL_RETRIES_EXHAUSTED",
    "TOOL_RUNS_AGAIN",
    "TOOL_TIMED_OUT",
    "TOOL_TIMEOUT",
    "TOOL_TIMEOUT_UNSAFE",
    "Approval",
    "Delegated",
    "RoundParent",
    "ToolInput",
    "ToolKind",
    "ToolProgress",
    "child_of",
    "close_call",
    "halt_child",
    "start_calls",
]
