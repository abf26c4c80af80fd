"""The events `SubmissionHandle.stream()` yields (`SubmissionEvent`): plain frozen values a UI renders,
each derived from committed state only (see `durable.engine.streaming`). Not stored."""

from __future__ import annotations

from .._frozen import frozen
from ..records import Answered, RetryLive, Unanswered


@frozen
class TextDeltaEvent:
    """More of the answer's text, as committed: append it to the text since the last
    `AttemptRestartedEvent`. The text events of one model message add up to its entry."""

    text: str


@frozen
class ReasoningDeltaEvent:
    """More of the model's reasoning (summary), as committed; like `TextDeltaEvent`. Yielded for
    the models and providers whose reasoning the live document carries."""

    text: str


@frozen
class AttemptRestartedEvent:
    """Attempt `attempt` starts over (after a retry, a crash or a clean close cut the answer off):
    the partial text shown since the last message ended was dropped (it stays in the conversation
    as an entry that is not an answer); the text events that follow are this attempt's from the
    start."""

    attempt: int


@frozen
class RetryWaitingEvent:
    """An attempt failed and the next one waits, as the live document shows it: `retry.attempt`
    failed with `retry.error` (`kind`, the provider's name and HTTP status when known); the next
    attempt starts at `retry.at` (clock seconds)."""

    retry: RetryLive


@frozen
class ToolCallStartedEvent:
    """The model called tool `name` with `arguments` (the JSON text it gave): the call runs, or
    waits for a person's decision (`ApprovalRequestedEvent`) or for the host (a client tool)."""

    call_id: str
    name: str
    arguments: str


@frozen
class ApprovalRequestedEvent:
    """Tool call `call_id` waits for a person's decision (`Harness.approve` / `Harness.deny`);
    `deadline`: when it is denied without one (None: never)."""

    call_id: str
    tool: str
    arguments: str
    deadline: float | None = None


@frozen
class ToolOutputEvent:
    """More of a running call's streamed output, as committed (coalesced by
    `settings.progress.output_interval`): append it to the call's output. A safe call run again
    after a crash starts its output over with a new `ToolCallStartedEvent`."""

    call_id: str
    name: str
    text: str


@frozen
class ToolCallEndedEvent:
    """Tool call `call_id` has its result, as the model reads it (`content`, `is_error`). The
    results of one round are committed together, when its last call ends."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@frozen
class SettledEvent:
    """The last event: the submission settled, `Answered(text, seq, output)` or
    `Unanswered(reason, detail)`, as `SubmissionHandle.wait()` returns it."""

    status: Answered | Unanswered


SubmissionEvent = (
    TextDeltaEvent | ReasoningDeltaEvent | AttemptRestartedEvent | RetryWaitingEvent | ToolCallStartedEvent
    | ApprovalRequestedEvent | ToolOutputEvent | ToolCallEndedEvent | SettledEvent
)
"""What `SubmissionHandle.stream()` yields."""


__all__ = [
    "ApprovalRequestedEvent",
    "AttemptRestartedEvent",
    "ReasoningDeltaEvent",
    "RetryWaitingEvent",
    "SettledEvent",
    "SubmissionEvent",
    "TextDeltaEvent",
    "ToolCallEndedEvent",
    "ToolCallStartedEvent",
    "ToolOutputEvent",
]
