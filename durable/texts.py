"""The sentences durable writes that belong to no one task kind, and the words they share.

Each kind declares its own sentences beside its records (`durable.tasks.generation.records`,
`durable.tasks.tool`...). They are for people: code never recognises a situation by its text,
since the records carry the facts as fields (`AssistantEntry.interrupted`, `ErrorDetail.reason`,
`Unanswered.reason`, `Diagnostic.code`); tests that want a sentence build it from the templates.
"""

from __future__ import annotations

ABORT_HANDLER_AT_LIMIT = "Abort handler of task {task_id} ({kind}) was cut off {times}"


def times(n: int) -> str:
    """"once", "2 times" ..."""
    return "once" if n == 1 else f"{n} times"


def times_in_a_row(n: int) -> str:
    """"once", "2 times in a row" ..."""
    return "once" if n == 1 else f"{n} times in a row"


__all__ = ["ABORT_HANDLER_AT_LIMIT", "times", "times_in_a_row"]
