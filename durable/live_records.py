"""The live document of a conversation: what a UI renders, built only from committed values.

The active run and its inputs, the partial message of the current attempt, a pending retry or
deferred job, the tool slots of the current round, and how the last run or compaction failed.
Re-exported by `durable.records`, where the codec and users find them.
"""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from .entries import ToolCall, Usage
from .reasons import UnansweredReason


@frozen
class Run:
    task_id: int
    inputs: tuple[str, ...]


@frozen
class PartialMessage:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()


@frozen
class RetryLive:
    attempt: int
    at: float
    error: str
    kind: str
    provider: str | None = None
    status_code: int | None = None


@frozen
class DeferredLive:
    poll_at: float


@frozen
class GenerationLive:
    attempt: int
    message: PartialMessage = PartialMessage()
    retry: RetryLive | None = None
    deferred: DeferredLive | None = None


@frozen
class ToolSlot:
    call_id: str
    name: str
    task_id: int
    output: str = ""
    status: Literal["running", "waiting", "done", "error"] = "running"


@frozen
class RunFailure:
    task_id: int
    inputs: tuple[str, ...]
    reason: UnansweredReason
    detail: str
    first: str | None = None


@frozen
class CompactionFailure:
    task_id: int
    trigger: str
    error: str


@frozen
class Live:
    """What a UI renders for one conversation; only committed values ever appear here."""

    run: Run | None = None
    generation: GenerationLive | None = None
    tools: tuple[ToolSlot, ...] = ()
    run_failure: RunFailure | None = None
    compaction_failure: CompactionFailure | None = None
    compactions: int = 0

    @property
    def busy(self) -> bool:
        return self.run is not None


EMPTY_LIVE = Live()


__all__ = [
    "EMPTY_LIVE",
    "CompactionFailure",
    "DeferredLive",
    "GenerationLive",
    "Live",
    "PartialMessage",
    "RetryLive",
    "Run",
    "RunFailure",
    "ToolSlot",
]
