"""The sentences durable writes into conversations, results and reports, as exported templates.

They are for people. Code never recognises a situation by its text: the records carry the facts
as fields (`AssistantEntry.interrupted`, `ErrorDetail.reason`, `Unanswered.reason`,
`Diagnostic.code`); tests and tools that want a sentence build it from these templates.
"""

from __future__ import annotations

HOST_STOPPED_STREAM = "The host stopped while the model was answering, on attempt {attempt}"
HOST_STOPPED_FETCH = "The host stopped while the deferred answer was fetched, on attempt {attempt}"
GENERATION_AT_LIMIT = "The generation was interrupted {times} in its {phase} phase"
ABORT_HANDLER_AT_LIMIT = "Abort handler of task {task_id} ({kind}) was cut off {times}"
TOOL_AT_LIMIT = "Tool {tool} was interrupted {times}; it is not run again"
TOOL_MAY_HAVE_RUN = "Tool {tool} was interrupted and may have partially run"
TOOL_RUNS_AGAIN = "Tool {tool} runs again (replay safe)"
TOOL_TIMED_OUT = "Tool execution timed out"
COMPACTION_AT_LIMIT = "Compaction was interrupted {times}"
CANCEL_AT_LIMIT = "Cancelling deferred job {job} at {provider} was interrupted {times}; it is not tried again"
RUN_ABORTED = "The run was aborted"
RUN_INTERRUPTED = "The run was interrupted by a new input"
CALL_ABORTED = "The tool call was aborted"
CALL_INTERRUPTED = "The tool call was interrupted by a new input"
CALL_AT_LIMIT = "The tool call was not answered: the run ended at the restart limit"
NO_RESULT = "The tool did not report a result"
TOOL_ROUND_LIMIT = "The run was ended after {limit} tool rounds (settings.max_tool_rounds)"
CALL_NOT_RUN = "The tool call was not run: the run reached its cap of tool rounds"


def times(n: int) -> str:
    """"once", "2 times" ..."""
    return "once" if n == 1 else f"{n} times"


def times_in_a_row(n: int) -> str:
    """"once", "2 times in a row" ..."""
    return "once" if n == 1 else f"{n} times in a row"


__all__ = [
    "ABORT_HANDLER_AT_LIMIT",
    "CALL_ABORTED",
    "CALL_AT_LIMIT",
    "CALL_INTERRUPTED",
    "CALL_NOT_RUN",
    "CANCEL_AT_LIMIT",
    "COMPACTION_AT_LIMIT",
    "GENERATION_AT_LIMIT",
    "HOST_STOPPED_FETCH",
    "HOST_STOPPED_STREAM",
    "NO_RESULT",
    "RUN_ABORTED",
    "RUN_INTERRUPTED",
    "TOOL_AT_LIMIT",
    "TOOL_MAY_HAVE_RUN",
    "TOOL_ROUND_LIMIT",
    "TOOL_RUNS_AGAIN",
    "TOOL_TIMED_OUT",
    "times",
    "times_in_a_row",
]
