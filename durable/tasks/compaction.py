"""The compaction task: a summary that replaces older entries in the model's context.

Manual (`conversation.compact()`), or automatic: before a request whose estimated context passes
`compaction.threshold` of the model's context window, and after a context-overflow error. The
summary is asked of the model; the result is a `CompactionEntry(summary, first_kept_seq)` appended
to the conversation: every entry stays in the file, only the context sent next changes. The last
`compaction.keep_last` entries are kept verbatim (the cut never separates a tool call from its
result).

Cut off at the restart limit, the task fails ("Compaction was interrupted once"), the live
document gets `compaction_failure{task_id, trigger, error}`, a `task_interrupted` report is sent
and the conversation is left uncompacted.
"""

from __future__ import annotations

from contextlib import aclosing

import attrs

from ..engine import recovery
from ..engine.harness import Runtime
from ..engine.reports import TaskInterrupted, TaskRef
from ..models.protocol import FinalMessage, ModelError, ModelRequest, estimate_tokens
from ..records import (
    AssistantEntry,
    CompactionEntry,
    CompactionFailure,
    CompactionInput,
    Done,
    ErrorDetail,
    Failed,
    Prepare,
    Running,
    Task,
    ErrorInfo,
    Terminal,
    ToolResultEntry,
    UserEntry,
)

SUMMARY_PROMPT = (
    "Summarize the conversation so far for your own later use: the user's goals, decisions made, "
    "facts learned from tools, and open questions. Be concise."
)


class CompactionKind:
    name = "compaction"

    async def start(self, rt: Runtime, conversation_id: str, trigger: str) -> int:
        existing = self._active(rt, conversation_id)
        if existing is not None:
            return existing.id
        change = rt.change()
        task = rt.new_task(change, conversation_id=conversation_id, kind="compaction", input=CompactionInput(trigger))  # type: ignore[arg-type]
        live = change.live(conversation_id)
        change.edit_live(conversation_id, compactions=live.compactions + 1)
        await rt.commit(change)
        return task.id

    def _active(self, rt: Runtime, conversation_id: str) -> Task | None:
        for task in rt.session.tasks.values():
            if task.kind == "compaction" and task.conversation_id == conversation_id:
                return task
        return None

    async def before_request(self, rt: Runtime, generation: Task) -> None:
        """Compact first when the context passes the threshold (waits for the compaction)."""
        settings = rt.settings.compaction
        if not settings.enabled:
            return
        cid = generation.conversation_id
        window = getattr(rt.model, "context_window", 0) or 0
        if window <= 0:
            return
        context = await rt.session.load_context(cid)
        if _tokens(rt, cid, context) <= settings.threshold * window:
            return
        if self._cut(rt, context) is None:
            return
        tid = await self.start(rt, cid, "threshold")
        await rt.wait_tasks([tid])

    async def on_overflow(self, rt: Runtime, generation: Task, error: ModelError) -> Task | None:
        """A context overflow compacts, then the same attempt is prepared again (no charge)."""
        from .generation import GenerationKind

        cid = generation.conversation_id
        context = await rt.session.load_context(cid)
        if self._cut(rt, context) is None:
            gen: GenerationKind = rt.kinds["generation"]  # type: ignore[assignment]
            from .generation import _retry_error

            return await gen._attempt_failed(rt, generation, _retry_error(error), None, "model_error", raw=error,
                                             retryable=False)
        tid = await self.start(rt, cid, "overflow")
        await rt.wait_tasks([tid])
        change = rt.change()
        attempt = getattr(generation.checkpoint, "attempt", 1)
        task = change.put_task(attrs.evolve(generation, state=Running(), checkpoint=Prepare(attempt)), progress=False)
        await change.commit()
        return task

    def _cut(self, rt: Runtime, context: list) -> int | None:
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
        return context[i].seq

    async def run(self, rt: Runtime, task: Task) -> None:
        assert isinstance(task.input, CompactionInput)
        cid = task.conversation_id
        if task.restarts:
            limit = recovery.restart_limit(rt.settings)
            if task.restarts >= limit:
                msg = f"Compaction was interrupted {recovery.times_in_a_row(task.restarts)}"
                await self._fail(rt, task, msg, "restart_limit")
                rt.report(TaskInterrupted(TaskRef.of(task), "restart_limit", task.restarts, msg))
                return
            rt.report(TaskInterrupted(TaskRef.of(task), "interrupted", task.restarts, "The compaction runs again"))
        if not isinstance(task.state, Running):
            change = rt.change()
            task = change.put_task(attrs.evolve(task, state=Running()), progress=False)
            await change.commit()
        context = list(await rt.session.load_context(cid))
        cut = self._cut(rt, context)
        if cut is None:
            change = rt.change()
            change.put_task(attrs.evolve(task, state=Terminal(Done({"compacted": False}))))
            change.edit_live(cid, compactions=max(0, change.live(cid).compactions - 1))
            await change.commit()
            return
        conv = rt.session.conversation(cid)
        older = [e.entry for e in context if e.seq < cut]
        messages = ((conv.compaction.entry,) if conv.compaction else ()) + tuple(older) + (UserEntry(SUMMARY_PROMPT),)
        request = ModelRequest("You write summaries of conversations.", messages, (), dict(rt.settings.model_options),
                               1, f"c{task.id}")
        try:
            final = await self._ask(rt, request)
        except ModelError as exc:
            await self._fail(rt, task, f"Compaction failed: {exc.message}", "model_error")
            return
        change = rt.change()
        change.append(cid, CompactionEntry(final.text, cut, final.usage))
        change.put_task(attrs.evolve(task, state=Terminal(Done({"first_kept_seq": cut}))))
        change.edit_live(cid, compactions=max(0, change.live(cid).compactions - 1), compaction_failure=None)
        await change.commit()

    async def _ask(self, rt: Runtime, request: ModelRequest) -> FinalMessage:
        async with aclosing(rt.model.stream(request)) as stream:  # type: ignore[type-var]
            async for event in stream:
                if isinstance(event, FinalMessage):
                    if event.stop_reason == "error":
                        raise ModelError(event.error or "The model answered with an error", kind="unknown")
                    return event
        raise ModelError("The summary stream ended without a final message", kind="connection")

    async def _fail(self, rt: Runtime, task: Task, message: str, reason: str) -> None:
        cid = task.conversation_id
        change = rt.change()
        change.put_task(attrs.evolve(task, state=Terminal(Failed(ErrorInfo(message, ErrorDetail(reason))))), progress=False)
        failure = CompactionFailure(task.id, task.input.trigger, message)  # type: ignore[union-attr]
        change.edit_live(cid, compactions=max(0, change.live(cid).compactions - 1), compaction_failure=failure)
        await change.commit()


def _tokens(rt: Runtime, cid: str, context: list) -> int:
    """Estimated context tokens, counted incrementally (only entries added since last time)."""
    conv = rt.session.conversation(cid)
    cache = conv.token_cache
    if cache[0] > len(context) or (cache[0] and context[cache[0] - 1].seq != cache[2]):
        cache = (0, 0, 0)
    counted, total, _ = cache
    for stored in context[counted:]:
        total += _entry_tokens(stored.entry)
    conv.token_cache = (len(context), total, context[-1].seq if context else 0)
    comp = conv.compaction
    return total + (estimate_tokens(comp.entry.summary) if comp else 0)


def _entry_tokens(entry: object) -> int:
    if isinstance(entry, (UserEntry, ToolResultEntry)):
        return estimate_tokens(getattr(entry, "text", None) or getattr(entry, "content", ""))
    if isinstance(entry, AssistantEntry):
        return estimate_tokens(entry.text) + sum(estimate_tokens(c.arguments) + 8 for c in entry.tool_calls)
    return 0
