"""Structured output: a run whose inputs were submitted with an output type answers with JSON
that matches its schema.

The schema is stored with each input (`Submission.output`); a run answers inputs of one schema
(`runs.end_run` starts the next run with the queued inputs of the first one's schema only). Each
request of the run carries it (`ModelRequest.output`: the provider asks for it natively), and each
final answer (`stop` or `length`) is checked against it (`check`). A valid answer settles the
inputs `Answered(text, seq, output=value)`. An invalid one stays in the conversation as the
model's answer, followed by a user entry with the problems (`OUTPUT_CORRECTION`), and the run
sends another request; the count is in the run's notes (`RunNotes.output_retries`, committed with
that request: a crash neither forgets nor repeats it). After `settings.output_retries` such
corrections the run ends `unanswered{output_invalid}` with the last problems.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...records import Task, UserEntry
from ...tools.arguments import check_value
from .records import OUTPUT_CORRECTION, OUTPUT_INVALID, GenerationInput

if TYPE_CHECKING:
    from ...engine.runtime import Runtime


def schema_of(rt: Runtime, task: Task) -> dict[str, Any] | None:
    """The output schema generation `task`'s run answers with (its inputs share one), or None."""
    assert isinstance(task.input, GenerationInput)
    for sid in task.input.submission_ids:
        sub = rt.submission(sid)
        if sub is not None:
            return sub.output
    return None


def check(schema: dict[str, Any], text: str) -> tuple[Any, list[str]]:
    """The answer `text` checked against `schema`: its JSON value, or the problems found."""
    return check_value(schema, text)


def correction(problems: list[str]) -> UserEntry:
    """What the model reads after an invalid answer (a user entry of no submission)."""
    return UserEntry(OUTPUT_CORRECTION.format(problems="; ".join(problems)))


def given_up(retries: int, problems: list[str]) -> str:
    """The detail of a run that ends `unanswered{output_invalid}`."""
    return OUTPUT_INVALID.format(times=f"{retries} {'retry' if retries == 1 else 'retries'}" if retries else "no retry",
                                 problems="; ".join(problems))


__all__ = ["check", "correction", "given_up", "schema_of"]
