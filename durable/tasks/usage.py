"""Usage accounting: the running totals of a conversation (`Live.usage`) and of its active run
(`Run.usage`, kept only while a per-run limit is set), added to in the very commit that changes
them, so they are exact after any crash and reading them never reads history.

What is counted, and by which commit: a request by the commit that moves a generation into
`request` (or records a deferred job's intent), the barrier before it is sent; the tokens of an
answer by the commit that appends it (or keeps its partial); a compaction's request and tokens by
the commit of its summary (or of its failure); tool calls and tool runtime by the commit that
closes their round. A request resent after a clean close is counted again (it is sent again).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .._frozen import evolve
from ..models import fallback
from ..records import Task, Usage, UsageTotals
from .tool import ToolProgress

if TYPE_CHECKING:
    from ..engine.head import Change
    from ..engine.runtime import Runtime


def model_name(rt: Runtime, conversation_id: str, change: Change | None = None) -> str:
    """The name usage is counted under: the conversation's model's (its sub-agent's, if any)."""
    return fallback.model_name(rt.model_for(conversation_id, change))


def count(rt: Runtime, change: Change, conversation_id: str, *, requests: int = 0, tokens: Usage | None = None,
          tool_calls: int = 0, tool_seconds: float = 0.0, model: str | None = None) -> None:
    """In `change`: add to the conversation's usage totals and, when it keeps them, its run's;
    requests and tokens are `model`'s (by name: a `FallbackModel`'s member), by default the
    conversation's model's (a sub-agent's own). Only the conversation's own document is written:
    a sub-agent's usage rolls up when totals are read (`rolled_up`)."""
    if tokens is not None and not (tokens.input_tokens or tokens.output_tokens):
        tokens = None  # (reasoning and cache tokens are parts of these two)
    if not (requests or tokens or tool_calls or tool_seconds):
        return
    model = model if model is not None else model_name(rt, conversation_id, change)

    def more(totals: UsageTotals) -> UsageTotals:
        totals = totals.add(model, requests=requests, tokens=tokens) if requests or tokens else totals
        return totals.with_tools(tool_calls, tool_seconds) if tool_calls or tool_seconds else totals

    live = change.live(conversation_id)
    run = live.run
    if run is not None and run.usage is not None:
        change.edit_live(conversation_id, usage=more(live.usage), run=evolve(run, usage=more(run.usage)))
    else:
        change.edit_live(conversation_id, usage=more(live.usage))


def tool_runtime(calls: Iterable[Task]) -> float:
    """The runtime of a round's tool tasks: the union of the intervals of the calls that started
    (from `started_at` to `ended_at`, less the time a call spent cut off), so parallel calls are
    not counted twice."""
    spans = []
    for task in calls:
        progress = task.checkpoint
        if isinstance(progress, ToolProgress) and progress.started_at is not None and progress.ended_at is not None:
            end = progress.ended_at - progress.paused
            if end > progress.started_at:
                spans.append((progress.started_at, end))
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


__all__ = ["count", "model_name", "tool_runtime"]
