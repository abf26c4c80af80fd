"""The generation task: one run answering the placed inputs (SPEC §3, §4).

Its checkpoint moves through phases, each change one commit:

    prepare{attempt} -> request{attempt} -> answer (run done)
                                         -> tools{calls} -> prepare{1} ...
                                         -> retry{attempt, until} -> prepare{attempt+1}
    prepare{attempt} -> poll{attempt, job, poll_at} -> fetch -> answer | poll | retry

The partial answer lives in the live document (committed coalesced); it is not a checkpoint, so
streaming does not clear `restarts`: a crash loop that streams a little every time still ends.

When the task starts with `restarts > 0` (it was cut off), `recover` decides, reading the
restart limit only then: at the limit the run ends visibly (`restart_limit`); below it an
interrupted request or fetch is charged as a failed attempt under the retry policy, and other
phases simply run again. A deferred job is never submitted twice for one attempt: its intent
(a key) is committed before the submit and its handle right after; an ended run cancels it.

A host stop (abort, or an interrupt by a new input) sets `task.stop` and restarts the runner in
the stop handler, which keeps the partial, answers every tool call and ends the run.
"""

from __future__ import annotations

from contextlib import aclosing

import anyio
import attrs

from ..engine import recovery
from ..engine.harness import Runtime
from ..engine.reports import ErrorReport, TaskFaulted, TaskInterrupted, TaskRef
from ..engine.session import Change
from ..models.protocol import (
    FinalMessage,
    ModelError,
    ModelRequest,
    StillRunning,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
)
from ..records import (
    Aborted,
    AssistantEntry,
    DeferredJob,
    DeferredLive,
    Done,
    ErrorDetail,
    Failed,
    Faulted,
    GenerationLive,
    PartialMessage,
    Pending,
    Poll,
    Prepare,
    Request,
    Retry,
    AttemptFailure,
    RetryLive,
    Running,
    Sleeping,
    Submission,
    Task,
    ErrorInfo,
    ToolInput,
    ToolProgress,
    ToolRound,
    ToolSlot,
    Waiting,
)
from . import runs
from ._coalesce import Coalescer

PHASE_NAMES = {Prepare: "prepare", Request: "request", Poll: "poll", Retry: "retry", ToolRound: "tools"}
HOST_STOPPED_STREAM = "The host stopped while the model was answering, on attempt {n}"
HOST_STOPPED_FETCH = "The host stopped while the deferred answer was fetched, on attempt {n}"
FAULTED_CANCEL_WAIT = 30.0  # seconds a faulted abort handler waits for the provider's cancel


class GenerationKind:
    name = "generation"

    # ------------------------------------------------------------------ run lifecycle (host API)

    def begin_run(self, rt: Runtime, change: Change, conversation_id: str, subs: list[Submission]) -> Task:
        return runs.begin_run(rt, change, conversation_id, subs)

    async def stop_run(self, rt: Runtime, conversation_id: str, *, reason: str) -> None:
        """Mark the active run stopped (`aborted` or `interrupted`) and restart its runner in the
        stop handler. Returns once the mark is committed."""
        run = rt.session.conversation(conversation_id).live.run
        task = rt.session.tasks.get(run.task_id) if run else None
        if task is None or task.stop is not None:
            return
        change = rt.change()
        change.put_task(attrs.evolve(task, stop=reason), progress=False)
        await change.commit()
        await rt.restart_runner(task.id)

    def fault(self, rt: Runtime, change: Change, task: Task, error: ErrorInfo) -> None:
        runs.end_run(rt, change, task, Faulted(error), reason="faulted", detail=error.message)

    # ------------------------------------------------------------------ the runner

    async def run(self, rt: Runtime, task: Task) -> None:
        if task.restarts:
            task = await self._recover(rt, task)  # type: ignore[assignment]
        if task is None:
            return
        if task.stop is not None:
            await self._stop(rt, task)
            return
        request: ModelRequest | None = None
        while task is not None:
            phase = task.checkpoint
            if isinstance(phase, Prepare):
                task, request = await self._prepare(rt, task)
            elif isinstance(phase, Request):
                task = await self._request(rt, task, request)
                request = None
            elif isinstance(phase, Poll):
                task = await self._poll(rt, task)
            elif isinstance(phase, Retry):
                task = await self._retry(rt, task)
            elif isinstance(phase, ToolRound):
                task = await self._tool_round(rt, task)
            else:
                raise TypeError(f"Generation task {task.id} has an unknown checkpoint {phase!r}")

    async def _mark_running(self, rt: Runtime, task: Task) -> Task:
        if isinstance(task.state, Running):
            return task
        change = rt.change()
        task = change.put_task(attrs.evolve(task, state=Running()), progress=False)
        await change.commit()
        return task

    # ------------------------------------------------------------------ phases

    def _build_request(self, rt: Runtime, task: Task, attempt: int, context: list) -> ModelRequest:
        conv = rt.session.conversation(task.conversation_id)
        messages = tuple(e.entry for e in context)
        if conv.compaction is not None:
            messages = (conv.compaction.entry, *messages)
        settings = rt.settings
        key = f"g{task.id}-s{conv.last_seq}-a{attempt}"
        return ModelRequest(settings.system_prompt, messages, rt.tools.specs, dict(settings.model_options), attempt, key)

    async def _prepare(self, rt: Runtime, task: Task) -> tuple[Task | None, ModelRequest | None]:
        task = await self._mark_running(rt, task)
        phase = task.checkpoint
        assert isinstance(phase, Prepare)
        compaction = rt.kinds.get("compaction")
        if compaction is not None:
            await compaction.before_request(rt, task)  # type: ignore[attr-defined]
        context = await rt.session.load_context(task.conversation_id)
        request = self._build_request(rt, task, phase.attempt, context)
        change = rt.change()
        if rt.settings.stream.deferred and getattr(rt.model, "deferred", False):
            now = rt.now()
            task = change.put_task(attrs.evolve(task, checkpoint=Poll(phase.attempt, DeferredJob(request.key), now)))
            change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt, deferred=DeferredLive(now)))
            await change.commit()
            return await self._submit_job(rt, task, request), None
        task = change.put_task(attrs.evolve(task, checkpoint=Request(phase.attempt, dict(request.options))))
        change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt))
        await change.commit()
        return task, request

    async def _request(self, rt: Runtime, task: Task, request: ModelRequest | None) -> Task | None:
        phase = task.checkpoint
        assert isinstance(phase, Request)
        if request is None:
            # Resumed after a clean close: nothing is charged; the old partial is kept as aborted.
            change = rt.change()
            self._keep_partial(rt, change, task, "aborted", None)
            task = change.put_task(attrs.evolve(task, state=Running()), progress=False)
            change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt))
            await change.commit()
            request = self._build_request(rt, task, phase.attempt, await rt.session.load_context(task.conversation_id))
        cid = task.conversation_id
        text: list[str] = []
        calls = []
        usage = None

        async def flush() -> None:
            change = rt.change()
            gen = change.live(cid).generation or GenerationLive(phase.attempt)
            message = PartialMessage("".join(text), tuple(calls), usage or gen.message.usage)
            change.edit_live(cid, generation=attrs.evolve(gen, message=message))
            await change.commit()

        coalescer = Coalescer(rt.settings.progress.persist_within, flush)
        silence = rt.settings.stream.stream_silence
        final: FinalMessage | None = None
        failure: ModelError | None = None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(coalescer.run_flusher)
                try:
                    async with aclosing(rt.model.stream(request)) as stream:  # type: ignore[type-var]
                        while True:
                            try:
                                if silence:
                                    with anyio.fail_after(silence):
                                        event = await stream.__anext__()
                                else:
                                    event = await stream.__anext__()
                            except StopAsyncIteration:
                                break
                            except TimeoutError:
                                raise ModelError(f"The model stream was silent for {silence:g} s", kind="timeout",
                                                 provider=_provider(rt.model)) from None
                            if isinstance(event, TextDelta):
                                text.append(event.text)
                                await coalescer.update()
                            elif isinstance(event, ToolCallEvent):
                                calls.append(event.call)
                            elif isinstance(event, UsageEvent):
                                usage = event.usage
                            elif isinstance(event, FinalMessage):
                                final = event
                                break
                except ModelError as exc:
                    failure = exc
                tg.cancel_scope.cancel()  # stops the flusher; the final commit below carries the rest
        finally:
            coalescer.settle()
        if failure is None and final is None:
            failure = ModelError("The model stream ended without a final message", kind="connection",
                                 provider=_provider(rt.model))
        if failure is not None:
            if failure.kind == "context_overflow" and rt.kinds.get("compaction") is not None:
                return await rt.kinds["compaction"].on_overflow(rt, task, failure)  # type: ignore[attr-defined]
            partial = PartialMessage("".join(text), (), usage or PartialMessage().usage)
            return await self._attempt_failed(rt, task, _retry_error(failure), failure.retry_after,
                                              "model_error", partial=partial, raw=failure, retryable=failure.retryable)
        assert final is not None
        return await self._final(rt, task, final, phase.attempt)

    async def _final(self, rt: Runtime, task: Task, final: FinalMessage, attempt: int) -> Task | None:
        if final.stop_reason == "error":
            partial = PartialMessage(final.text, (), final.usage)
            err = AttemptFailure(final.error or "The model answered with an error", "unknown", _provider(rt.model))
            return await self._attempt_failed(rt, task, err, None, "model_error", partial=partial, retryable=False)
        change = rt.change()
        entry = AssistantEntry(final.text, final.stop_reason, tuple(final.tool_calls), final.usage, None, attempt)
        seq = change.append(task.conversation_id, entry)
        if final.stop_reason == "tool_use" and final.tool_calls:
            task = self._start_tool_round(rt, change, task, seq, final)
            await rt.commit(change)
            return task
        runs.end_run(rt, change, task, Done({"seq": seq}))
        await rt.commit(change)
        return None

    def _start_tool_round(self, rt: Runtime, change: Change, task: Task, seq: int, final: FinalMessage) -> Task:
        ids, slots = [], []
        previous = task.checkpoint.round if isinstance(task.checkpoint, ToolRound) else 0
        for call in final.tool_calls:
            tool = rt.tools.get(call.name)
            client = bool(tool and tool.client)
            deadline = rt.now() + rt.settings.client_tool_timeout if client else None
            child = rt.new_task(
                change, conversation_id=task.conversation_id, kind="tool",
                input=ToolInput(call, tool.replay if tool else "unsafe", client, deadline),
                checkpoint=ToolProgress(), parent_id=task.id,
                # A safe tool is created `running` (its runner starts after this commit; if cut off
                # first, it just runs again). An unsafe one commits `running` itself right before
                # it executes, so a crash before that never counts as "may have partially run".
                state=Waiting(client=True) if client else (Running() if tool and tool.replay == "safe" else Pending()),
            )
            ids.append(child.id)
            slots.append(ToolSlot(call.id, call.name, child.id, status="waiting" if client else "running"))
        round_ = ToolRound(seq, tuple(final.tool_calls), tuple(ids), previous + 1)
        task = change.put_task(attrs.evolve(task, state=Waiting(on=tuple(ids)), checkpoint=round_))
        change.edit_live(task.conversation_id, generation=None, tools=tuple(slots))
        return task

    async def _tool_round(self, rt: Runtime, task: Task) -> Task | None:
        phase = task.checkpoint
        assert isinstance(phase, ToolRound)
        await rt.wait_tasks(phase.pending)
        change = rt.change()
        ended = await runs.close_calls(rt, change, task, "The tool did not report a result", "no_result")
        assert not ended, f"tool tasks {ended} of task {task.id} were not terminal"
        task = change.put_task(attrs.evolve(task, state=Running(), checkpoint=Prepare(1)))
        change.edit_live(task.conversation_id, tools=(), generation=GenerationLive(1))
        await change.commit()
        return task

    async def _retry(self, rt: Runtime, task: Task) -> Task | None:
        phase = task.checkpoint
        assert isinstance(phase, Retry)
        if isinstance(task.state, Sleeping):
            await rt.sleep_until(task.state.until, f"retry:{task.id}")
        change = rt.change()
        attempt = phase.attempt + 1
        if phase.job is not None and phase.job.handle is not None:
            now = rt.now()
            task = change.put_task(attrs.evolve(task, state=Running(), checkpoint=Poll(attempt, phase.job, now)))
            change.edit_live(task.conversation_id, generation=GenerationLive(attempt, deferred=DeferredLive(now)))
        else:
            task = change.put_task(attrs.evolve(task, state=Running(), checkpoint=Prepare(attempt)))
            change.edit_live(task.conversation_id, generation=GenerationLive(attempt))
        await change.commit()
        return task

    # ------------------------------------------------------------------ deferred jobs

    async def _submit_job(self, rt: Runtime, task: Task, request: ModelRequest) -> Task | None:
        phase = task.checkpoint
        assert isinstance(phase, Poll)
        try:
            handle = await rt.model.submit(request)
        except ModelError as exc:
            return await self._attempt_failed(rt, task, _retry_error(exc), exc.retry_after, "model_error", raw=exc,
                                              retryable=exc.retryable)
        poll_at = rt.now() + handle.poll_after
        change = rt.change()
        task = change.put_task(attrs.evolve(task, state=Sleeping(poll_at),
                                            checkpoint=Poll(phase.attempt, DeferredJob(phase.job.key, handle.id), poll_at)))
        change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt, deferred=DeferredLive(poll_at)))
        await change.commit()
        return task

    async def _poll(self, rt: Runtime, task: Task) -> Task | None:
        phase = task.checkpoint
        assert isinstance(phase, Poll)
        if phase.job.handle is None:
            # The intent was committed but not the submit's outcome (cut off in between). Find the
            # job by its key where the provider can list jobs; otherwise submit knowingly again.
            task = await self._mark_running(rt, task)
            find = getattr(rt.model, "find", None)
            found = await find(phase.job.key) if find is not None else None
            if found is not None:
                change = rt.change()
                job = DeferredJob(phase.job.key, found)
                task = change.put_task(attrs.evolve(task, state=Running(), checkpoint=attrs.evolve(phase, job=job)))
                await change.commit()
                return task
            rt.report(ErrorReport(
                f"Task {task.id}: the deferred job {phase.job.key} may have been submitted before the host stopped; "
                f"the provider cannot look it up, so it is submitted again", TaskRef.of(task)))
            request = self._build_request(rt, task, phase.attempt, await rt.session.load_context(task.conversation_id))
            request = attrs.evolve(request, key=phase.job.key)
            return await self._submit_job(rt, task, request)
        if isinstance(task.state, Sleeping):
            await rt.sleep_until(task.state.until, f"poll:{task.id}")
        task = await self._mark_running(rt, task)
        try:
            result = await rt.model.fetch(phase.job.handle)
        except ModelError as exc:
            return await self._attempt_failed(rt, task, _retry_error(exc), exc.retry_after, "model_error", raw=exc,
                                              retryable=exc.retryable)
        if isinstance(result, StillRunning):
            poll_at = rt.now() + result.poll_after
            change = rt.change()
            task = change.put_task(attrs.evolve(task, state=Sleeping(poll_at), checkpoint=attrs.evolve(phase, poll_at=poll_at)))
            change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt, deferred=DeferredLive(poll_at)))
            await change.commit()
            return task
        return await self._final(rt, task, result, phase.attempt)

    async def _cancel_job(self, rt: Runtime, task: Task) -> None:
        """Cancel the run's deferred job at the provider (an ended run leaves none open). A job
        whose handle was never committed (cut off between the submit and its commit) is looked
        up by its key where the provider can list jobs; where it cannot, that is reported."""
        job = getattr(task.checkpoint, "job", None)
        if job is None:
            return
        handle = job.handle
        try:
            if handle is None:
                find = getattr(rt.model, "find", None)
                handle = await find(job.key) if find is not None else None
                if handle is None:
                    if find is None:
                        rt.report(ErrorReport(
                            f"Task {task.id}: the deferred job {job.key} may have been submitted before the host "
                            f"stopped; the provider cannot look it up, so it cannot be cancelled", TaskRef.of(task)))
                    return
            await rt.model.cancel(handle)
        except ModelError as exc:
            rt.report(ErrorReport(f"Cancelling deferred job {handle or job.key} of task {task.id} failed: "
                                  f"{exc.message}", TaskRef.of(task), exc.raw))

    # ------------------------------------------------------------------ failed attempts

    def _keep_partial(self, rt: Runtime, change: Change, task: Task, stop_reason: str, error: str | None,
                      partial: PartialMessage | None = None) -> None:
        gen = change.live(task.conversation_id).generation
        message = partial if partial is not None else (gen.message if gen else None)
        if message is None or not (message.text or message.usage.output_tokens):
            return
        attempt = getattr(task.checkpoint, "attempt", 1)
        change.append(task.conversation_id, AssistantEntry(message.text, stop_reason, (), message.usage, error, attempt))  # type: ignore[arg-type]

    async def _attempt_failed(self, rt: Runtime, task: Task, err: AttemptFailure, retry_after: float | None,
                              final_reason: str, *, partial: PartialMessage | None = None, raw: object = None,
                              stop_reason: str = "error", retryable: bool = True) -> Task | None:
        """Charge a failed attempt: back off durably when the error is retryable and the policy
        allows another attempt, else end the run."""
        phase = task.checkpoint
        attempt = getattr(phase, "attempt", 1)
        job = getattr(phase, "job", None)
        if raw is not None:
            detail = raw.raw if isinstance(raw, ModelError) and raw.raw is not None else repr(raw)
            rt.report(ErrorReport(f"Attempt {attempt} of task {task.id} failed: {err.message}", TaskRef.of(task), detail))
        policy = rt.settings.retry
        change = rt.change()
        self._keep_partial(rt, change, task, stop_reason, err.message, partial)
        if retryable and policy.allows_another(attempt):
            until = rt.now() + policy.delay(attempt, retry_after)
            task = change.put_task(attrs.evolve(task, state=Sleeping(until), checkpoint=Retry(attempt, until, err, job)))
            retry = RetryLive(attempt, until, err.message, err.kind, err.provider, err.status_code)
            change.edit_live(task.conversation_id, generation=GenerationLive(attempt, retry=retry))
            await change.commit()
            return task
        await self._cancel_job(rt, task)
        runs.end_run(rt, change, task, Failed(ErrorInfo(err.message, ErrorDetail(final_reason))),
                     reason=final_reason, detail=err.message)
        await rt.commit(change)
        return None

    # ------------------------------------------------------------------ recovery

    async def _recover(self, rt: Runtime, task: Task) -> Task | None:
        limit = recovery.restart_limit(rt.settings)
        n = task.restarts
        ref = TaskRef.of(task)
        if task.stop is not None:
            if n >= limit:
                await self._fault_stop_handler(rt, task, n)
                return None
            rt.report(TaskInterrupted(ref, "interrupted", n, "The stop handler runs again"))
            return task
        if n >= limit:
            await self._end_at_limit(rt, task, limit)
            return None
        phase = task.checkpoint
        task = await self._mark_running(rt, task)
        if isinstance(phase, Request):
            detail = HOST_STOPPED_STREAM.format(n=phase.attempt)
            rt.report(TaskInterrupted(ref, "interrupted", n, detail))
            return await self._attempt_failed(rt, task, AttemptFailure(detail, "interrupted"), None, "interrupted",
                                              stop_reason="aborted")
        if isinstance(phase, Poll) and phase.job.handle is not None:
            detail = HOST_STOPPED_FETCH.format(n=phase.attempt)
            rt.report(TaskInterrupted(ref, "interrupted", n, detail))
            return await self._attempt_failed(rt, task, AttemptFailure(detail, "interrupted"), None, "interrupted",
                                              stop_reason="aborted")
        rt.report(TaskInterrupted(ref, "interrupted", n, f"The {PHASE_NAMES[type(phase)]} phase runs again"))
        return task

    async def _end_at_limit(self, rt: Runtime, task: Task, limit: int) -> None:
        n = task.restarts
        phase_name = PHASE_NAMES.get(type(task.checkpoint), "unknown")
        detail = f"The generation was interrupted {recovery.times_in_a_row(n)} in its {phase_name} phase"
        task = await self._mark_running(rt, task)  # a crash from here on counts past the limit
        await self._cancel_job(rt, task)
        change = rt.change()
        if n == limit:
            self._keep_partial(rt, change, task, "aborted", detail)
        await runs.close_calls(rt, change, task, "The tool call was not answered: the run ended at the restart limit",
                               "restart_limit")
        runs.end_run(rt, change, task, Failed(ErrorInfo(detail, ErrorDetail("restart_limit"))),
                     reason="restart_limit", detail=detail)
        await rt.commit(change)
        rt.report(TaskInterrupted(TaskRef.of(task), "restart_limit", n, detail))

    # ------------------------------------------------------------------ host stops

    async def _stop(self, rt: Runtime, task: Task) -> None:
        reason = task.stop
        task = await self._mark_running(rt, task)
        await self._cancel_job(rt, task)
        change = rt.change()
        if reason == "interrupted":
            text, detail = "The tool call was interrupted by a new input", "The run was interrupted by a new input"
        else:
            text, detail = "The tool call was aborted", "The run was aborted"
        self._keep_partial(rt, change, task, "aborted", detail)
        await runs.close_calls(rt, change, task, text, reason or "aborted")
        runs.end_run(rt, change, task, Aborted(), reason=reason, detail=detail)
        await rt.commit(change)

    async def _fault_stop_handler(self, rt: Runtime, task: Task, n: int) -> None:
        detail = f"Abort handler of task {task.id} (generation) was cut off {recovery.times(n)}"
        change = rt.change()
        await runs.close_calls(rt, change, task, "The tool call was aborted", "aborted")
        # The run's deferred job must not stay open, but its cancel may be what kept cutting the
        # handler off: it is tried before the ending commit (a crash meanwhile leaves the task
        # live, so the next open tries again), for at most FAULTED_CANCEL_WAIT on the clock.
        async with anyio.create_task_group() as tg:

            async def give_up() -> None:
                await rt.sleep_until(rt.now() + FAULTED_CANCEL_WAIT, f"cancel:{task.id}")
                tg.cancel_scope.cancel()

            tg.start_soon(give_up)
            await self._cancel_job(rt, task)
            tg.cancel_scope.cancel()
        runs.end_run(rt, change, task, Faulted(ErrorInfo(detail, ErrorDetail("restart_limit"))),
                     reason="aborted", detail=detail)
        await rt.commit(change)
        rt.report(TaskFaulted(TaskRef.of(task), "restart_limit", detail))


def _provider(model: object) -> str | None:
    """The provider part of a model's name ("openai" for "openai:gpt-4o"), as errors name it."""
    name = getattr(model, "name", None)
    return name.split(":", 1)[0] if isinstance(name, str) else None


def _retry_error(exc: ModelError) -> AttemptFailure:
    return AttemptFailure(exc.message, exc.kind, exc.provider, exc.status_code)

