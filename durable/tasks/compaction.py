"""The compaction task: a summary that replaces older entries in the model's context.

    pending/none -> running/none
    running/none -> pending/none | end

Manual (`conversation.compact()`), or automatic: before a request whose estimated context passes
`compaction.threshold` of the model's context window, and after a context-overflow error. The
summary is asked of the model; the result is a `CompactionEntry(summary, first_kept_seq)` appended
to the conversation: every entry stays in the file, only the context sent next changes. The last
`compaction.keep_last` entries are kept verbatim (the cut never separates a tool call from its
result). Cut off at the restart limit, the task fails ("Compaction was interrupted once"), the
live document gets `compaction_failure{task_id, trigger, error}`, a `task_interrupted` report is
sent and the conversation is left uncompacted.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Literal

from .._frozen import evolve, frozen
from ..engine.kinds import Resumed, TaskKind
from ..engine.transitions import END, Transitions
from ..models.fallback import members_of, model_name
from ..models.protocol import FinalMessage, ModelError, ModelRequest
from ..records import (
    CompactionEntry,
    CompactionFailure,
    Done,
    Entry,
    ErrorDetail,
    ErrorInfo,
    Failed,
    FailureReason,
    StoredEntry,
    Task,
    TaskInput,
    Terminal,
    ToolResultEntry,
    UserEntry,
)
from ..records.entries import without_attachments
from ..texts import times_in_a_row
from ..tokens import entry_tokens
from . import usage

if TYPE_CHECKING:
    from ..engine.context import Context
    from ..engine.runtime import Runtime

COMPACTION_AT_LIMIT = "Compaction was interrupted {times}"
Trigger = Literal["manual", "threshold", "overflow"]


@frozen
class CompactionInput(TaskInput):
    """The input of a compaction task: what started it (the host, the context threshold,
    or a context overflow reported by the model)."""

    trigger: Trigger


SUMMARY_PROMPT = (
    "Summarize the conversation so far for your own later use: the user's goals, decisions made, "
    "facts learned from tools, and open questions. Be concise."
)
class CompactionKind(TaskKind):
    """Compactions of a conversation (see the module docstring)."""

    name = "compaction"
    input = CompactionInput
    transitions = Transitions(
        start=["pending/none"],
        moves={"pending/none": ["running/none"], "running/none": ["pending/none", END]},
    )

    def __init__(self) -> None:
        self.phases = {type(None): self._run}

    async def start(self, rt: Runtime, conversation_id: str, trigger: Trigger, *, retry: bool = True) -> int:
        """Start a compaction of the conversation (or return the one under way); its task id."""
        existing = self._active(rt, conversation_id)
        if existing is not None:
            return existing.id
        change = rt.change()
        task = rt.new_task(change, conversation_id=conversation_id, kind=self.name, input=CompactionInput(trigger))
        live = change.live(conversation_id)
        change.edit_live(conversation_id, compactions=live.compactions + 1)
        await rt.commit(change, retry=retry)
        return task.id

    def _active(self, rt: Runtime, conversation_id: str) -> Task | None:
        found = rt.live_tasks(kind=self.name, conversation_id=conversation_id)
        return found[0] if found else None

    async def compact_if_needed(self, rt: Runtime, conversation_id: str) -> None:
        """Before a request: compact first (and wait) when the context passes the threshold."""
        if not await self.needed(rt, conversation_id):
            return
        tid = await self.start(rt, conversation_id, "threshold")
        await rt.wait_tasks([tid])

    async def needed(self, rt: Runtime, conversation_id: str) -> bool:
        """Whether `compact_if_needed` would compact now: the context passes the threshold and
        there is something to cut."""
        settings = rt.settings.compaction
        if not settings.enabled:
            return False
        window = rt.model_for(conversation_id).context_window
        if window <= 0:
            return False
        if await _tokens(rt, conversation_id) <= settings.threshold * window:
            return False
        return self._cut(rt, await rt.context(conversation_id)) is not None

    async def may_compact(self, rt: Runtime, conversation_id: str, pending: Sequence[StoredEntry]) -> bool:
        """Whether `compact_if_needed` may start a compaction once `pending` entries are added."""
        settings = rt.settings.compaction
        window = rt.model_for(conversation_id).context_window
        if not settings.enabled or window <= 0:
            return False
        extra = sum(entry_tokens(e.entry) for e in pending)
        return await _tokens(rt, conversation_id) + extra > settings.threshold * window

    async def compact_for_overflow(self, rt: Runtime, conversation_id: str) -> bool:
        """After a context overflow: compact and wait; False when there is nothing to compact."""
        context = await rt.context(conversation_id)
        if self._cut(rt, context) is None:
            return False
        tid = await self.start(rt, conversation_id, "overflow")
        await rt.wait_tasks([tid])
        return True

    async def resume_interrupted(self, rt: Runtime, task: Task, restarts: int) -> Resumed:
        return Resumed(task, "interrupted", "The compaction runs again")

    async def end_at_limit(self, rt: Runtime, task: Task, restarts: int, past: bool) -> str:
        msg = COMPACTION_AT_LIMIT.format(times=times_in_a_row(restarts))
        await self._fail(rt, task, msg, "restart_limit")
        return msg

    def _cut(self, rt: Runtime, context: Context) -> int | None:
        """The first seq kept verbatim, or None when there is nothing worth compacting."""
        keep = rt.settings.compaction.keep_last
        if len(context) <= keep:
            return None
        i = len(context) - keep
        # Never start the kept part with a tool result: its call would be summarised away.
        while i > 0 and isinstance(context[i].entry, ToolResultEntry):
            i -= 1
        if i <= 0:
            return None
        return context.seq_at(i)

    async def _run(self, rt: Runtime, task: Task) -> Task | None:
        assert isinstance(task.input, CompactionInput)
        cid = task.conversation_id
        task = await rt.mark_running(task, barrier=True)  # a summary request follows
        context = await rt.context(cid)
        cut = self._cut(rt, context)
        if cut is None:
            change = rt.change()
            change.put_task(evolve(task, state=Terminal(Done({"compacted": False}))))
            change.edit_live(cid, compactions=max(0, change.live(cid).compactions - 1))
            await rt.commit(change)
            return None
        comp = rt.compaction(cid)
        # Images and files are summarized around: the summary request reads their placeholders.
        older: list[Entry] = [without_attachments(e.entry) for e in context if e.seq < cut]
        summary: tuple[Entry, ...] = (comp.entry,) if comp else ()
        messages = (*summary, *older, UserEntry(SUMMARY_PROMPT))
        asked = evolve(rt.settings.model_defaults, tool_choice=None, parallel_tool_calls=None)  # no tools here
        request = ModelRequest("You write summaries of conversations.", messages, (), asked.as_options(),
                               1, f"c{task.id}", settings=asked)
        tried: list[str] = []  # the models sent the request (a FallbackModel's members, in order)
        try:
            final = await self._ask(rt, cid, request, tried)
        except ModelError as exc:
            await self._fail(rt, task, f"Compaction failed: {exc.message}", "model_error", tried)
            return None
        change = rt.change()
        change.append(cid, CompactionEntry(final.text, cut, final.usage))
        for name in tried[:-1]:
            usage.count(rt, change, cid, requests=1, model=name)
        usage.count(rt, change, cid, requests=1, tokens=final.usage, model=tried[-1])
        change.put_task(evolve(task, state=Terminal(Done({"first_kept_seq": cut}))))
        change.edit_live(cid, compactions=max(0, change.live(cid).compactions - 1), compaction_failure=None)
        await rt.commit(change)
        return None

    async def _ask(self, rt: Runtime, cid: str, request: ModelRequest, tried: list[str]) -> FinalMessage:
        """The summary, from the conversation's model, or from the first member of its `FallbackModel`
        that gives one (each member asked is added to `tried`); the last member's error is raised."""
        members = members_of(rt.model_for(cid))
        for index, model in enumerate(members):
            tried.append(model_name(model))
            try:
                async with aclosing(model.stream(request)) as stream:  # type: ignore[type-var]  # an AsyncIterator with aclose
                    async for event in stream:
                        if isinstance(event, FinalMessage):
                            if event.stop_reason == "error":
                                raise ModelError(event.error or "The model answered with an error", kind="unknown")
                            return event
                raise ModelError("The summary stream ended without a final message", kind="connection")
            except ModelError:
                if index == len(members) - 1:
                    raise
        raise AssertionError("a model has at least one member")  # pragma: no cover

    async def _fail(self, rt: Runtime, task: Task, message: str, reason: FailureReason,
                    tried: Sequence[str] = ()) -> None:
        cid = task.conversation_id
        assert isinstance(task.input, CompactionInput)
        change = rt.change()
        for name in tried:
            usage.count(rt, change, cid, requests=1, model=name)
        ended = Terminal(Failed(ErrorInfo(message, ErrorDetail(reason))))
        change.put_task(evolve(task, state=ended), progress=False)
        failure = CompactionFailure(task.id, task.input.trigger, message)
        change.edit_live(cid, compactions=max(0, change.live(cid).compactions - 1), compaction_failure=failure)
        await rt.commit(change)

    @classmethod
    def details(cls, task: Task) -> dict[str, Any]:
        assert isinstance(task.input, CompactionInput)
        return {"trigger": task.input.trigger}


async def _tokens(rt: Runtime, cid: str) -> int:
    """Estimated context tokens: the context's running count (`Context.tokens`, kept by every
    append, read from the store's `tokens` column at load) and the leading summary."""
    context = await rt.context(cid)
    comp = rt.compaction(cid)
    return context.tokens + (entry_tokens(comp.entry) if comp is not None else 0)


__all__ = ["COMPACTION_AT_LIMIT", "SUMMARY_PROMPT", "CompactionInput", "CompactionKind", "Trigger"]
