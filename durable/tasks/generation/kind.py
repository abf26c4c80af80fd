"""The generation task: one run answering the placed inputs, as a table of positions.

Its checkpoint moves through phases, each move one commit; a test holds this text to
`GenerationKind.transitions.diagram()`:

    prepare -> poll | request
    request -> prepare | retry | tools
    poll -> prepare | retry | tools
    retry -> poll | prepare
    tools -> prepare | request

A run starts `running` in `request`, committed with its inputs (in `prepare` for a deferred
model, dynamic instructions or usage limits). `prepare` assembles dynamic instructions, checks
usage limits and compaction, and commits `request` (or `poll`) before anything is sent; `request`
streams, the partial committed coalesced into live (streaming does not clear `restarts`). The
final message ends the run (if it matches the output schema: else it goes back), starts a tool
round, or fails the attempt. After a crash (recovery decides, this kind supplies what follows),
below the limit an interrupted request or fetch is a failed attempt, other phases run again; at
the limit the run ends `unanswered{restart_limit}`, keeping the partial only at exactly the
limit. A host stop keeps the partial, answers every tool call and ends the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..._frozen import evolve
from ...engine import tracing
from ...engine.instructions import dynamic
from ...engine.kinds import Resumed, TaskKind
from ...engine.transitions import END, Transitions, phase_of
from ...models.protocol import (
    FinalMessage,
    ModelError,
    ModelRequest,
)
from ...records import (
    Aborted,
    AssistantEntry,
    Checkpoint,
    DeferredJob,
    DeferredLive,
    Diagnostic,
    Done,
    ErrorDetail,
    ErrorInfo,
    Failed,
    Faulted,
    GenerationLive,
    PartialMessage,
    Running,
    Sleeping,
    StoredEntry,
    Submission,
    Task,
    ToolResultEntry,
    UnansweredReason,
    Waiting,
)
from ...texts import times_in_a_row
from .. import tool, usage
from . import deferred, members, output, prepare, request, runs, stream
from .attempts import attempt_failed, failure_of, keep_partial, model_failure
from .records import (
    CALL_ABORTED,
    CALL_ARCHIVED,
    CALL_AT_LIMIT,
    CALL_FAULTED,
    CALL_INTERRUPTED,
    CALL_NOT_RUN,
    CALL_NOT_RUN_LIMIT,
    GENERATION_AT_LIMIT,
    HOST_STOPPED_FETCH,
    HOST_STOPPED_STREAM,
    KIND,
    NO_RESULT,
    PHASE_TAGS,
    RUN_ABORTED,
    RUN_ARCHIVED,
    RUN_INTERRUPTED,
    TOOL_ROUND_LIMIT,
    AttemptFailure,
    GenerationInput,
    Poll,
    Prepare,
    Request,
    Retry,
    ToolRound,
    attempt_of,
    notes_of,
    rounds_of,
)

if TYPE_CHECKING:
    from ...engine.head import Change
    from ...engine.runtime import Runtime
    from ..compaction import CompactionKind


_STOPPED = {"interrupted": (CALL_INTERRUPTED, RUN_INTERRUPTED), "aborted": (CALL_ABORTED, RUN_ABORTED),
            "archived": (CALL_ARCHIVED, RUN_ARCHIVED)}  # a host stop: the call's and the run's sentences


class GenerationKind(TaskKind):
    """Runs of a conversation (see the module docstring)."""

    name = KIND
    input = GenerationInput
    checkpoints: ClassVar[dict[str, type[Checkpoint]]] = PHASE_TAGS
    # Every `running` position may go back `pending` (a crash charged, a clean close) and end; a
    # stop (abort, interrupt) first commits `running` wherever the run stands, then ends it.
    transitions = Transitions(
        start=["running/prepare", "running/request"],
        moves={
            "pending/prepare": ["running/prepare"],
            "running/prepare": ["pending/prepare", "running/request", "running/poll", END],
            "pending/request": ["running/request"],
            "running/request": ["pending/request", "running/prepare", "sleeping/retry", "waiting/tools", END],
            "pending/poll": ["running/poll"],
            "sleeping/poll": ["running/poll"],
            "running/poll": ["pending/poll", "sleeping/poll", "sleeping/retry", "waiting/tools", "running/prepare",
                             END],
            "sleeping/retry": ["running/retry", "running/prepare", "running/poll"],
            "pending/retry": ["running/retry"],
            "running/retry": ["pending/retry", END],
            "waiting/tools": ["running/tools", "running/request", "running/prepare"],
            "pending/tools": ["running/tools"],
            "running/tools": ["pending/tools", END],
        },
    )
    warm = True

    def __init__(self, compaction: CompactionKind | None = None) -> None:
        self.compaction = compaction
        self.phases = {Prepare: self._prepare, Request: self._request, Poll: self._poll, Retry: self._retry,
                       ToolRound: self._tool_round}

    # ------------------------------------------------------------------ phases

    async def _prepare(self, rt: Runtime, task: Task) -> Task | None:
        """Build the request: the instructions (a run with dynamic sections assembles them, once:
        a later `prepare` of the run finds them in its notes), a compaction if the context needs
        one; then commit `request` (or a deferred job's intent) with them, the barrier before it
        is sent."""
        task = await rt.mark_running(task)
        phase = task.checkpoint
        assert isinstance(phase, Prepare)
        notes = phase.notes
        if notes.instructions is None and dynamic(rt.instructions_for(task.conversation_id)):
            try:
                notes = evolve(notes, instructions=await prepare.assemble(rt, task))
            except prepare.PrepareFailed as exc:
                await self._end(rt, task, "prepare_failed", exc.detail)
                return None
        if self.compaction is not None:
            await self.compaction.compact_if_needed(rt, task.conversation_id)
        sent = await request.build(rt, task, phase.attempt, notes=notes)
        if request.limited(rt):
            tokens = await request.estimate(rt, task.conversation_id, sent.system)
            passed = request.limit_passed(rt, rt.live(task.conversation_id), tokens)
            if passed is not None:
                await self._end(rt, task, "usage_limit", passed)
                return None
        change = rt.change()
        model = members.current(rt, task)
        if members.deferred(rt, model):
            now = rt.now()
            job = DeferredJob(sent.key, model=notes.model)
            task = change.put_task(evolve(task, checkpoint=Poll(phase.attempt, job, now, phase.rounds, notes)))
            change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt, deferred=DeferredLive(now)))
            usage.count(rt, change, task.conversation_id, requests=1, model=members.model_name(model))
            await rt.commit(change)
            return await deferred.submit_job(rt, task, sent)
        task = change.put_task(evolve(task, checkpoint=Request(phase.attempt, dict(sent.options), phase.rounds,
                                                               notes)))
        change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt))
        usage.count(rt, change, task.conversation_id, requests=1, model=members.model_name(model))
        await rt.commit(change)
        return await self._stream(rt, task, sent)

    async def _request(self, rt: Runtime, task: Task) -> Task | None:
        """A run's first request, committed with its inputs (`runs.begin_run`): sent, unless the
        context must be compacted first (then back to `prepare`). Or resumed in `request` after a
        clean close (`pending`): nothing is charged; the old partial is kept as aborted and the
        request is sent again."""
        phase = task.checkpoint
        assert isinstance(phase, Request)
        if isinstance(task.state, Running):  # fresh: a task cut off by a crash went through recovery
            if self.compaction is not None and await self.compaction.needed(rt, task.conversation_id):
                change = rt.change(barrier=False)
                task = change.put_task(evolve(task, checkpoint=Prepare(phase.attempt, phase.rounds, phase.notes)),
                                       progress=False)
                change.edit_live(task.conversation_id, generation=None)
                await rt.commit(change)
                return task
            return await self._stream(rt, task, await request.build(rt, task, phase.attempt))
        change = rt.change()
        keep_partial(rt, change, task, "aborted", None)
        task = change.put_task(evolve(task, state=Running()), progress=False)
        change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt))
        usage.count(rt, change, task.conversation_id, requests=1, model=members.name(rt, task))  # sent again
        await rt.commit(change)
        return await self._stream(rt, task, await request.build(rt, task, phase.attempt))

    @tracing.attempt
    async def _stream(self, rt: Runtime, task: Task, sent: ModelRequest) -> Task | None:
        return await stream.answer(rt, task, sent, self._final, self._overflow if self.compaction is not None else None)

    async def _overflow(self, rt: Runtime, task: Task, failure: ModelError) -> Task | None:
        """A context overflow compacts, then the same attempt is prepared again (no charge)."""
        assert self.compaction is not None
        if not await self.compaction.compact_for_overflow(rt, task.conversation_id):
            return await attempt_failed(rt, task, failure_of(failure), final_reason="model_error", raw=failure,
                                        retryable=False)
        change = rt.change()
        again = Prepare(attempt_of(task.checkpoint), rounds_of(task.checkpoint), notes_of(task.checkpoint))
        task = change.put_task(evolve(task, state=Running(), checkpoint=again), progress=False)
        await rt.commit(change)
        return task

    async def _final(self, rt: Runtime, task: Task, final: FinalMessage, attempt: int) -> Task | None:
        if final.stop_reason == "error":
            partial = PartialMessage(final.text, (), final.usage)
            err = model_failure(rt, task, final.error or "The model answered with an error")
            return await attempt_failed(rt, task, err, final_reason="model_error", partial=partial, retryable=False,
                                        reasoning=final.reasoning)
        change = rt.change()
        model = members.name(rt, task)
        entry = AssistantEntry(final.text, final.stop_reason, tuple(final.tool_calls), final.usage, None, attempt,
                               reasoning=final.reasoning, model=model)
        seq = change.append(task.conversation_id, entry)
        usage.count(rt, change, task.conversation_id, tokens=final.usage, model=model)
        schema = output.schema_of(rt, task) if final.stop_reason != "tool_use" else None
        if final.stop_reason == "tool_use":
            rounds = rounds_of(task.checkpoint) + 1
            calls = len(final.tool_calls)
            passed = (request.limit_passed(rt, change.live(task.conversation_id), calls=calls)
                      if request.limited(rt) else None)
            if rounds <= rt.settings.max_tool_rounds and passed is None:
                ids, client = tool.start_calls(rt, change, task, final.tool_calls)
                # A barrier only when a client tool is handed to the host: safe tools may run
                # again and an unsafe one commits its own barrier (`running`) before it executes.
                change.barrier = client
                task = change.put_task(evolve(task, state=Waiting(on=tuple(ids)), checkpoint=ToolRound(
                    seq, tuple(final.tool_calls), tuple(ids), rounds, notes_of(task.checkpoint))))
                await rt.commit(change)
                return task  # the `tools` phase waits on the tool tasks
            reason: Literal["tool_round_limit", "usage_limit"] = "usage_limit"
            text, detail = CALL_NOT_RUN_LIMIT, passed or ""
            if rounds > rt.settings.max_tool_rounds:
                reason, text, detail = "tool_round_limit", CALL_NOT_RUN, TOOL_ROUND_LIMIT.format(
                    limit=rt.settings.max_tool_rounds)
            for call in final.tool_calls:  # every call still gets exactly one result
                change.append(task.conversation_id, ToolResultEntry(
                    call.id, call.name, text, True, (Diagnostic("error", reason, detail),)))
            runs.end_run(rt, change, task, Failed(ErrorInfo(detail, ErrorDetail(reason))), reason=reason,
                         detail=detail)
            await rt.commit(change)
            return None
        value = None
        if schema is not None:
            value, problems = output.check(schema, final.text)
            if problems:
                return await self._invalid(rt, change, task, StoredEntry(task.conversation_id, seq, entry), problems)
        runs.end_run(rt, change, task, Done({"seq": seq}), answer=(seq, entry), output=value)
        await rt.commit(change)
        return None

    async def _invalid(self, rt: Runtime, change: Change, task: Task, answer: StoredEntry,
                       problems: list[str]) -> Task | None:
        """An answer that does not match the output schema (in `change`): sent back to the model
        with the problems, or, after `settings.output_retries` times, the run ends."""
        notes = notes_of(task.checkpoint)
        if notes.output_retries >= rt.settings.output_retries:
            detail = output.given_up(notes.output_retries, problems)
            runs.end_run(rt, change, task, Failed(ErrorInfo(detail, ErrorDetail("output_invalid"))),
                         reason="output_invalid", detail=detail)
            await rt.commit(change)
            return None
        cid = task.conversation_id
        correction = output.correction(problems)
        pending = [answer, StoredEntry(cid, change.append(cid, correction), correction)]
        task = await request.next_request(rt, change, task, rounds_of(task.checkpoint),
                                          evolve(notes, output_retries=notes.output_retries + 1), pending,
                                          self.compaction)
        await rt.commit(change)
        if isinstance(task.checkpoint, Request):
            return await self._stream(rt, task, await request.build(rt, task, 1))
        return task

    async def _end(self, rt: Runtime, task: Task, reason: Literal["prepare_failed", "output_invalid", "usage_limit"],
                   detail: str) -> None:
        """End the run `unanswered{reason}` (its task failed with that reason), in one commit."""
        change = rt.change()
        runs.end_run(rt, change, task, Failed(ErrorInfo(detail, ErrorDetail(reason))), reason=reason, detail=detail)
        await rt.commit(change)

    async def _tool_round(self, rt: Runtime, task: Task) -> Task | None:
        """Once every tool task of the round ended: the results in call order and, in the same
        commit, the next request. Usually the last tool to end has already written that close in
        its own ending commit (`close_round`); then the request is only sent here."""
        phase = task.checkpoint
        assert isinstance(phase, ToolRound)
        await rt.wait_tasks(phase.pending)
        current = rt.task(task.id)
        if current is None:
            return None
        if isinstance(current.checkpoint, ToolRound):
            change = rt.change()
            current = await self.close_round(rt, change, current)
            await rt.commit(change)
        if isinstance(current.checkpoint, Request):
            return await self._stream(rt, current, await request.build(rt, current, current.checkpoint.attempt))
        return current

    async def close_round(self, rt: Runtime, change: Change, task: Task) -> Task:
        """In `change`: the results of generation `task`'s tool round, whose every tool task has
        ended (in the head or in `change`), and its next position: the next request (a barrier:
        it is sent once committed), or `prepare` when a compaction or a deferred job has to come
        first (nothing happens in between that `prepare` would commit). Returns the task as
        written. Called by `_tool_round` and by the last tool task to end (`ToolKind`), whose
        ending commit then carries the close: one commit less per round."""
        phase = task.checkpoint
        assert isinstance(phase, ToolRound)
        results = await runs.answer_calls(rt, change, task, NO_RESULT, "no_result")
        change.edit_live(task.conversation_id, tools=())
        return await request.next_request(rt, change, task, phase.round, phase.notes, results, self.compaction)

    async def _retry(self, rt: Runtime, task: Task) -> Task | None:
        phase = task.checkpoint
        assert isinstance(phase, Retry)
        if isinstance(task.state, Sleeping):
            await rt.sleep_until(task.state.until, f"retry:{task.id}")
        attempt = phase.attempt + 1
        job = phase.job if phase.job is not None and phase.job.handle is not None else None
        # A poll is sent once this is committed (a barrier); `prepare` sends nothing: lazy, made
        # durable by the commit of the request that follows it.
        change = rt.change(barrier=job is not None)
        if job is not None:
            now = rt.now()
            task = change.put_task(evolve(task, state=Running(), checkpoint=Poll(attempt, job, now,
                                                                                 phase.rounds, phase.notes)))
            change.edit_live(task.conversation_id, generation=GenerationLive(attempt, deferred=DeferredLive(now)))
        else:
            task = change.put_task(evolve(task, state=Running(), checkpoint=Prepare(attempt, phase.rounds,
                                                                                    phase.notes)))
            change.edit_live(task.conversation_id, generation=GenerationLive(attempt))
        await rt.commit(change)
        return task

    async def _poll(self, rt: Runtime, task: Task) -> Task | None:
        return await deferred.poll(rt, task, request.build, self._final)

    # ------------------------------------------------------------------ crash handling

    async def resume_interrupted(self, rt: Runtime, task: Task, restarts: int) -> Resumed:
        phase = task.checkpoint
        if isinstance(phase, Request) or (isinstance(phase, Poll) and phase.job.handle is not None):
            template = HOST_STOPPED_STREAM if isinstance(phase, Request) else HOST_STOPPED_FETCH
            detail = template.format(attempt=phase.attempt)
            task = await rt.mark_running(task)
            after = await attempt_failed(rt, task, AttemptFailure(detail, "interrupted"), final_reason="interrupted",
                                         stop_reason="aborted", interrupted=True)
            return Resumed(after, "interrupted", detail)
        return Resumed(task, "interrupted", f"The {phase_of(task)} phase runs again")

    async def end_at_limit(self, rt: Runtime, task: Task, restarts: int, past: bool) -> str:
        detail = GENERATION_AT_LIMIT.format(times=times_in_a_row(restarts), phase=phase_of(task))
        change = rt.change()
        if not past:  # past the limit, converting the partial may be what keeps failing
            keep_partial(rt, change, task, "aborted", detail)
        await runs.close_calls(rt, change, task, CALL_AT_LIMIT, "restart_limit")
        runs.end_run(rt, change, task, Failed(ErrorInfo(detail, ErrorDetail("restart_limit"))),
                     reason="restart_limit", detail=detail)
        await rt.commit(change)
        return detail

    # ------------------------------------------------------------------ host stops

    async def stop(self, rt: Runtime, task: Task) -> None:
        """The abort handler: keep the partial, answer every tool call, end the run."""
        reason = task.stop or "aborted"
        task = await rt.mark_running(task)  # a crash from here on is charged to the handler
        change = rt.change()
        text, detail = _STOPPED[reason]
        keep_partial(rt, change, task, "aborted", detail)
        await runs.close_calls(rt, change, task, text, reason)
        runs.end_run(rt, change, task, Aborted(), reason=reason, detail=detail)
        await rt.commit(change)

    async def fault_stop(self, rt: Runtime, task: Task, detail: str) -> None:
        change = rt.change()
        await runs.close_calls(rt, change, task, CALL_ABORTED, "aborted")
        runs.end_run(rt, change, task, Faulted(ErrorInfo(detail, ErrorDetail("restart_limit"))),
                     reason="aborted", detail=detail)
        await rt.commit(change)

    async def fault(self, rt: Runtime, change: Change, task: Task, error: ErrorInfo) -> None:
        """The run ends `unanswered{faulted}` (or `storage_error`), and so does its open tool round:
        every call still running is stopped (a sub-agent's child run too) and answered with an
        error result, so no tool task outlives its run."""
        reason: UnansweredReason = "storage_error" if error.detail.reason == "storage_error" else "faulted"
        await runs.close_calls(rt, change, task, CALL_FAULTED, "faulted")
        runs.end_run(rt, change, task, Faulted(error), reason=reason, detail=error.message)

    # ------------------------------------------------------------------ the tool kind's parent

    def begin_run(self, rt: Runtime, change: Change, conversation_id: str, subs: list[Submission]) -> Task:
        return runs.begin_run(rt, change, conversation_id, subs)

    def round_of(self, parent: Task) -> tuple[int, ...]:
        phase = parent.checkpoint
        return phase.pending if isinstance(phase, ToolRound) else ()

    def closable(self, rt: Runtime, parent: Task, ending: int) -> bool:
        return runs.round_closable(rt, parent, ending)

    # ------------------------------------------------------------------ what others see

    @classmethod
    def phase_label(cls, task: Task) -> str | None:
        return phase_of(task) if isinstance(task.checkpoint, (Prepare, Request, Poll, Retry, ToolRound)) else None

    @classmethod
    def attempt_lost(cls, task: Task) -> bool:
        phase = task.checkpoint
        return isinstance(phase, Request) or (isinstance(phase, Poll) and phase.job.handle is not None)

    @classmethod
    def details(cls, task: Task) -> dict[str, Any]:
        """Its inputs, and the `FallbackModel` member (its index) its run moved to, if it did."""
        assert isinstance(task.input, GenerationInput)
        member = members.index_of(task.checkpoint)
        return {"inputs": list(task.input.submission_ids), **({"fallback_member": member} if member else {})}


__all__ = ["GenerationKind"]
