"""Deferred answers: a generation whose model answers through a background job.

A job is never submitted twice for one attempt: its intent (a key, `g<task>-s<seq>-a<attempt>`)
is committed in the `poll` phase before the submit, and its handle right after. Cut off in
between, the job is found by its key where the provider can list jobs (`find`); where it cannot,
it is submitted again knowingly, with a report. The task sleeps durably to the provider's
`poll_at`, fetches, and goes on to the answer, another poll, or a failed attempt. A run that
ends with the job open owes its cancel (see `runs.end_run`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from ..._frozen import evolve
from ...engine.reports import ErrorReport, TaskRef
from ...models.protocol import FinalMessage, ModelError, ModelRequest, StillRunning, check_final
from ...records import DeferredJob, DeferredLive, GenerationLive, Sleeping, Task
from .attempts import attempt_failed, failure_of
from .records import Poll

if TYPE_CHECKING:
    from ...engine.runtime import Runtime

T = TypeVar("T")

BuildRequest = Callable[["Runtime", Task, int], Awaitable[ModelRequest]]
Finish = Callable[["Runtime", Task, FinalMessage, int], Awaitable[Task | None]]


async def model_call(rt: Runtime, call: Awaitable[T]) -> T:
    """A provider call, with the builtin timeout and connection errors a model may raise turned
    into retryable `ModelError`s (everything else a model raises is a bug: the task faults)."""
    try:
        return await call
    except TimeoutError as exc:
        raise ModelError(f"The model request timed out ({exc or type(exc).__name__})", kind="timeout",
                         provider=rt.provider) from None
    except ConnectionError as exc:
        raise ModelError(f"The connection to the model failed: {exc}", kind="connection",
                         provider=rt.provider) from None


async def submit_job(rt: Runtime, task: Task, request: ModelRequest) -> Task | None:
    """Submit the job whose intent `task` (in `poll`) holds; commit its handle."""
    phase = task.checkpoint
    assert isinstance(phase, Poll)
    await rt.before_external_work(f"The deferred job of task {task.id}")
    try:
        handle = await model_call(rt, rt.model_for(task.conversation_id).submit(request))
    except ModelError as exc:
        return await attempt_failed(rt, task, failure_of(exc), final_reason="model_error", retry_after=exc.retry_after,
                                    raw=exc, retryable=exc.retryable)
    poll_at = rt.now() + handle.poll_after
    change = rt.change()
    task = change.put_task(evolve(task, state=Sleeping(poll_at),
                                  checkpoint=Poll(phase.attempt, DeferredJob(phase.job.key, handle.id), poll_at,
                                                  phase.rounds, phase.notes)))
    change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt, deferred=DeferredLive(poll_at)))
    await rt.commit(change)
    return task


async def poll(rt: Runtime, task: Task, build: BuildRequest, finish: Finish) -> Task | None:
    """The `poll` phase: find or submit the job when its handle was never committed, else sleep
    to `poll_at` and fetch."""
    phase = task.checkpoint
    assert isinstance(phase, Poll)
    if phase.job.handle is None:
        task = await rt.mark_running(task, barrier=True)
        found = await rt.model_for(task.conversation_id).find(phase.job.key)
        if found is not None:
            change = rt.change()
            job = DeferredJob(phase.job.key, found)
            task = change.put_task(evolve(task, checkpoint=evolve(phase, job=job)))
            await rt.commit(change)
            return task
        rt.report(ErrorReport(
            f"Task {task.id}: the deferred job {phase.job.key} may have been submitted before the host stopped; "
            f"the provider finds no job with that key, so it is submitted again", TaskRef.of(task), topic="model"))
        request = evolve(await build(rt, task, phase.attempt), key=phase.job.key)
        return await submit_job(rt, task, request)
    if isinstance(task.state, Sleeping):
        await rt.sleep_until(task.state.until, f"poll:{task.id}")
    task = await rt.mark_running(task, barrier=True)  # a fetch is charged if cut off
    try:
        result = await model_call(rt, rt.model_for(task.conversation_id).fetch(phase.job.handle))
        if not isinstance(result, StillRunning):
            result = check_final(result, rt.provider)
    except ModelError as exc:
        return await attempt_failed(rt, task, failure_of(exc), final_reason="model_error", retry_after=exc.retry_after,
                                    raw=exc, retryable=exc.retryable)
    if isinstance(result, StillRunning):
        poll_at = rt.now() + result.poll_after
        change = rt.change()
        task = change.put_task(evolve(task, state=Sleeping(poll_at),
                                      checkpoint=evolve(phase, poll_at=poll_at)))
        change.edit_live(task.conversation_id, generation=GenerationLive(phase.attempt, deferred=DeferredLive(poll_at)))
        await rt.commit(change)
        return task
    return await finish(rt, task, result, phase.attempt)


__all__ = ["poll", "submit_job"]
