"""The live document of a conversation: what a UI renders, built only from committed values.

The active run and its inputs, the partial message of the current attempt, a pending retry or
deferred job, the tool slots of the current round, the tool calls waiting for a person's decision
(`approvals`), how the last run or compaction failed, the conversation's usage totals,
whether it is archived, and where a fork was copied from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from attrs import field

from .._frozen import OMITTED_WHEN_DEFAULT, frozen
from .entries import ToolCall, Usage
from .reasons import UnansweredReason
from .usage import EMPTY_USAGE, UsageTotals


@frozen
class Run:
    """The run a conversation is busy with: its generation task and the submissions it answers.
    `usage`: what the run used so far, kept only while a per-run limit is set
    (`Settings.usage_limits`; None otherwise)."""

    task_id: int
    inputs: tuple[str, ...]
    usage: UsageTotals | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class PartialMessage:
    """The committed part of an answer being streamed: text, tool calls and usage so far, and
    the model's reasoning so far as one text (`reasoning`, stored only when not empty)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    reasoning: str = field(default="", metadata=OMITTED_WHEN_DEFAULT)


@frozen
class RetryLive:
    """A retry the live document shows: attempt `attempt` failed with `error` (`kind`, and the
    provider's name and HTTP status when known); the next attempt starts at `at`."""

    attempt: int
    at: float
    error: str
    kind: str
    provider: str | None = None
    status_code: int | None = None


@frozen
class DeferredLive:
    """A deferred answer the live document shows: the next poll is at `poll_at`."""

    poll_at: float


@frozen
class GenerationLive:
    """The generation a live document shows: its attempt, the partial answer, and a pending retry
    or deferred poll."""

    attempt: int
    message: PartialMessage = PartialMessage()
    retry: RetryLive | None = None
    deferred: DeferredLive | None = None


@frozen
class ToolSlot:
    """A tool call the live document shows: its call id, tool name and task, the output committed so
    far, and its status."""

    call_id: str
    name: str
    task_id: int
    output: str = ""
    status: Literal["running", "waiting", "done", "error"] = "running"
    # A sub-agent's call: the child conversation it runs (docs/spec.md §8). Stored only when set.
    conversation: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class ApprovalSlot:
    """A tool call waiting for a person's decision (`Harness.approve` / `Harness.deny`): its call
    id, tool name, the arguments the model gave (JSON text), its tool task, since when it waits
    and, when `settings.approval_timeout` is set, the deadline at which it is denied; `parameters`:
    the tool's JSON schema (its canonical JSON text) when the call began waiting, so that a process
    without the tool (`durable console` on the file) checks an edit against it (None: older rows)."""

    call_id: str
    tool: str
    arguments: str
    task_id: int
    since: float
    deadline: float | None = None
    parameters: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class RunFailure:
    """The last run of a conversation that ended without an answer: its task, inputs, `reason`
    and `detail`, and the first input's text (to show next to it)."""

    task_id: int
    inputs: tuple[str, ...]
    reason: UnansweredReason
    detail: str
    first: str | None = None


@frozen
class CompactionFailure:
    """A compaction that failed: its task, what triggered it and the error. The conversation
    goes on uncompacted."""

    task_id: int
    trigger: str
    error: str


@frozen
class ParentCall:
    """What a sub-agent's conversation was started by: the parent conversation, the tool task of
    the call that waits for its answer, the call's id, the sub-agent's name and the child's depth
    (1 for a child of a top-level conversation)."""

    conversation_id: str
    task_id: int
    call_id: str
    agent: str
    depth: int = 1


@frozen
class Live:
    """What a UI renders for one conversation; only committed values ever appear here. `usage`:
    the conversation's usage so far (`Conversation.usage()`), committed with what changed it.
    `archived`: the conversation refuses new input (`Conversation.archive()`); committed with the
    ending of the run it stopped. `forked_from` / `forked_at`: a fork's source conversation and
    the last seq copied from it (`Conversation.fork()`): those entries' usage is the source's."""

    run: Run | None = None
    generation: GenerationLive | None = None
    tools: tuple[ToolSlot, ...] = ()
    approvals: tuple[ApprovalSlot, ...] = ()
    run_failure: RunFailure | None = None
    compaction_failure: CompactionFailure | None = None
    compactions: int = 0
    usage: UsageTotals = field(default=EMPTY_USAGE, metadata=OMITTED_WHEN_DEFAULT)
    archived: bool = field(default=False, metadata=OMITTED_WHEN_DEFAULT)
    forked_from: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    forked_at: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    # A sub-agent's conversation: the call that started it (its usage rolls up into its parent's).
    parent: ParentCall | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def busy(self) -> bool:
        return self.run is not None


EMPTY_LIVE = Live()


@frozen
class ConversationInfo:
    """One conversation of a harness, as committed (`Harness.conversations()`): `entries` stored
    (its last seq; a compaction adds its summary and deletes none), `archived` (refuses input
    until unarchived), `busy` (a run is active), `forked_from` / `forked_at` (a fork's source and
    the last seq copied from it), `parent` (a sub-agent's: the conversation whose tool call
    started it), `compactions` made, and `usage`: its own, costed with `settings.prices`
    (`Conversation.usage()` adds its sub-agents')."""

    id: str
    entries: int = 0
    archived: bool = False
    busy: bool = False
    forked_from: str | None = None
    forked_at: int = 0
    parent: str | None = None
    compactions: int = 0
    usage: UsageTotals = EMPTY_USAGE

    @classmethod
    def of(cls, conversation_id: str, last_seq: int, live: Live, usage: UsageTotals) -> ConversationInfo:
        return cls(conversation_id, last_seq, live.archived, live.busy, live.forked_from, live.forked_at,
                   live.parent.conversation_id if live.parent is not None else None, live.compactions, usage)


def rolled_up(lives: Mapping[str, Live], conversation_id: str) -> UsageTotals:
    """The usage of conversation `conversation_id` with its sub-agents' rolled up: its own
    (`Live.usage`) plus that of every conversation below it (`Live.parent`), each counted once.
    Read from the documents as they are, so it is exact after any crash (docs/spec.md §8)."""
    below: dict[str, list[str]] = {}
    for cid, live in lives.items():
        if live.parent is not None:
            below.setdefault(live.parent.conversation_id, []).append(cid)
    total, stack = EMPTY_USAGE, [conversation_id]
    while stack:
        cid = stack.pop()
        if cid in lives:
            total = total + lives[cid].usage
        stack.extend(below.get(cid, ()))
    return total


__all__ = [
    "EMPTY_LIVE",
    "ApprovalSlot",
    "CompactionFailure",
    "ConversationInfo",
    "DeferredLive",
    "GenerationLive",
    "Live",
    "ParentCall",
    "PartialMessage",
    "RetryLive",
    "Run",
    "RunFailure",
    "ToolSlot",
    "rolled_up",
]
