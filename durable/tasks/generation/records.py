"""The generation's records: its input (the inputs a run answers), the checkpoint of each of its
phases, and the sentences it writes."""

from __future__ import annotations

from typing import Any, Union

from attrs import field

from ..._frozen import OMITTED_WHEN_DEFAULT, frozen
from ...records import Checkpoint, DeferredJob, ModelSettings, TaskInput, ToolCall

KIND = "generation"
"""The kind's name: its tasks' `kind`, and its input's tag."""

HOST_STOPPED_STREAM = "The host stopped while the model was answering, on attempt {attempt}"
HOST_STOPPED_FETCH = "The host stopped while the deferred answer was fetched, on attempt {attempt}"
GENERATION_AT_LIMIT = "The generation was interrupted {times} in its {phase} phase"
RUN_ABORTED = "The run was aborted"
RUN_INTERRUPTED = "The run was interrupted by a new input"
CALL_ABORTED = "The tool call was aborted"
CALL_FAULTED = "The tool call was stopped: its run faulted"
CALL_INTERRUPTED = "The tool call was interrupted by a new input"
RUN_ARCHIVED = "The conversation was archived"
CALL_ARCHIVED = "The tool call was stopped: the conversation was archived"
CALL_AT_LIMIT = "The tool call was not answered: the run ended at the restart limit"
NO_RESULT = "The tool did not report a result"
TOOL_ROUND_LIMIT = "The run was ended after {limit} tool rounds (settings.max_tool_rounds)"
CALL_NOT_RUN = "The tool call was not run: the run reached its cap of tool rounds"
OUTPUT_CORRECTION = ("Your answer does not match the required JSON schema: {problems}. Answer again with only "
                     "the JSON.")
OUTPUT_INVALID = "The answer did not match the output schema after {times} (settings.output_retries): {problems}"
LIMIT_PASSED = "{scope} would pass its {name} (settings.{setting} = {limit}): {figures}"
CALL_NOT_RUN_LIMIT = "The tool call was not run: the run ended at a usage limit"
SECTION_FAILED = "Instruction section {name} failed: {error}"
SECTION_TIMED_OUT = "Instruction section {name} did not finish within {seconds:g} s (settings.prepare_timeout)"


@frozen
class GenerationInput(TaskInput):
    """The input of a generation task (a run): the submissions it answers, in order, and the
    `ModelSettings` every request of the run asks for: the harness's, the conversation handle's
    and the first input's, merged when the run began (None: none at all), so that an attempt sent
    again after a crash, in whatever process, asks for the same."""

    submission_ids: tuple[str, ...]
    settings: ModelSettings | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class AttemptFailure:
    """Why an attempt failed, as the live document shows it."""

    message: str
    kind: str
    provider: str | None = None
    status_code: int | None = None


@frozen
class RunNotes:
    """What a run carries from phase to phase (every phase holds it as `notes`, stored only when
    not empty): `instructions`, the text its `prepare` assembled from dynamic sections (None: a
    static run, whose instructions are rebuilt from the settings for each request), sent by
    every attempt and tool round of the run; `output_retries`, the answers sent back to the model
    for not matching the run's output schema; `model`, the member of a `FallbackModel` the run
    uses (its index: 0, the primary, until an attempt fell back), kept to the run's end."""

    instructions: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    output_retries: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    model: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)


NO_NOTES = RunNotes()

# Every phase but `tools` carries `rounds`: the tool rounds its run has made so far (bounded by
# `settings.max_tool_rounds`); every phase carries the run's `notes`.


@frozen
class Prepare(Checkpoint):
    """Phase `prepare`: build the request of attempt `attempt` from the conversation."""

    attempt: int = 1
    rounds: int = 0
    notes: RunNotes = field(default=NO_NOTES, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class Request(Checkpoint):
    """Phase `request`: the request of attempt `attempt` is being sent and its answer streamed;
    `options` are the model options it was sent with."""

    attempt: int
    options: dict[str, Any] = field(factory=dict)
    rounds: int = 0
    notes: RunNotes = field(default=NO_NOTES, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class Poll(Checkpoint):
    """Phase `poll`: a deferred answer is pending at the provider (`job`); the next poll is at
    `poll_at`."""

    attempt: int
    job: DeferredJob
    poll_at: float
    rounds: int = 0
    notes: RunNotes = field(default=NO_NOTES, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class Retry(Checkpoint):
    """Phase `retry`: attempt `attempt` failed with `error`; the next attempt starts at `until`
    (the durable backoff). `job` is the deferred job the failed attempt had, if any."""

    attempt: int
    until: float
    error: AttemptFailure
    job: DeferredJob | None = None
    rounds: int = 0
    notes: RunNotes = field(default=NO_NOTES, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class ToolRound(Checkpoint):
    """Phase `tools`: waiting on the tool tasks of one assistant message (`assistant_seq`)."""

    assistant_seq: int
    calls: tuple[ToolCall, ...]
    pending: tuple[int, ...]
    round: int = 1
    notes: RunNotes = field(default=NO_NOTES, metadata=OMITTED_WHEN_DEFAULT)


Phase = Union[Prepare, Request, Poll, Retry, ToolRound]
"""A generation's checkpoint."""
PHASE_TAGS: dict[str, type[Checkpoint]] = {"prepare": Prepare, "request": Request, "poll": Poll, "retry": Retry,
                                           "tools": ToolRound}


def attempt_of(checkpoint: Checkpoint | None) -> int:
    """The attempt number a generation's checkpoint is at (1 outside an attempt)."""
    return checkpoint.attempt if isinstance(checkpoint, (Prepare, Request, Poll, Retry)) else 1


def rounds_of(checkpoint: Checkpoint | None) -> int:
    """The tool rounds the run of a generation's checkpoint has made so far."""
    if isinstance(checkpoint, ToolRound):
        return checkpoint.round
    return checkpoint.rounds if isinstance(checkpoint, (Prepare, Request, Poll, Retry)) else 0


def notes_of(checkpoint: Checkpoint | None) -> RunNotes:
    """The run notes a generation's checkpoint carries."""
    return checkpoint.notes if isinstance(checkpoint, (Prepare, Request, Poll, Retry, ToolRound)) else NO_NOTES


def job_of(checkpoint: Checkpoint | None) -> DeferredJob | None:
    """The deferred job a generation's checkpoint holds, if any."""
    return checkpoint.job if isinstance(checkpoint, (Poll, Retry)) else None


__all__ = [
    "CALL_ABORTED",
    "CALL_AT_LIMIT",
    "CALL_FAULTED",
    "CALL_INTERRUPTED",
    "CALL_NOT_RUN",
    "CALL_NOT_RUN_LIMIT",
    "GENERATION_AT_LIMIT",
    "HOST_STOPPED_FETCH",
    "HOST_STOPPED_STREAM",
    "KIND",
    "LIMIT_PASSED",
    "NO_NOTES",
    "NO_RESULT",
    "OUTPUT_CORRECTION",
    "OUTPUT_INVALID",
    "PHASE_TAGS",
    "RUN_ABORTED",
    "RUN_INTERRUPTED",
    "SECTION_FAILED",
    "SECTION_TIMED_OUT",
    "TOOL_ROUND_LIMIT",
    "AttemptFailure",
    "GenerationInput",
    "Phase",
    "Poll",
    "Prepare",
    "Request",
    "Retry",
    "RunNotes",
    "ToolRound",
    "attempt_of",
    "job_of",
    "notes_of",
    "rounds_of",
]
