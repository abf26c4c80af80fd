"""Failed attempts of a generation: charging them under the retry policy, keeping partials.

`attempt_failed` is the one place an attempt is charged: with the error retryable and another
attempt allowed by `settings.retry`, the task sleeps durably until the backoff deadline (the live
document shows why, `retry{attempt, at, error, kind, provider, status_code}`); otherwise the run
ends `unanswered` with the reason given. `keep_partial` turns the committed partial answer into an
assistant entry (`aborted` or `error`) that stays in the conversation and is never sent again,
its streamed reasoning kept as a `partial` block (unsigned, never sent back); `interrupted=True`
marks the partial of an attempt the host's death cut off, so checkers read the fact from the
entry, not from its text. A model error that would end the run moves it to the next member of a
`FallbackModel` instead (`fall_back`): `prepare` of attempt 1 there, a fresh retry budget,
reported as `ModelFallback`; an interruption never does (the host stopped, not the model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..._frozen import evolve
from ...engine.reports import ErrorReport, ModelFallback, TaskRef
from ...models.protocol import ModelError
from ...records import (
    AssistantEntry,
    ErrorDetail,
    ErrorInfo,
    Failed,
    GenerationLive,
    PartialMessage,
    Reasoning,
    RetryLive,
    Running,
    Sleeping,
    StopReason,
    Task,
)
from .. import cancel, usage
from . import members
from .records import AttemptFailure, Prepare, Retry, attempt_of, job_of, notes_of, rounds_of
from .runs import end_run

if TYPE_CHECKING:
    from ...engine.head import Change
    from ...engine.runtime import Runtime


def failure_of(exc: ModelError) -> AttemptFailure:
    return AttemptFailure(exc.message, exc.kind, exc.provider, exc.status_code)


def model_failure(rt: Runtime, task: Task, message: str, kind: str = "unknown") -> AttemptFailure:
    return AttemptFailure(message, kind, members.provider(rt, task))


def partial_reasoning(message: PartialMessage, final: tuple[Reasoning, ...] = ()) -> tuple[Reasoning, ...]:
    """The reasoning to keep with a partial answer: the blocks of a final message that ended in
    an error, else the streamed reasoning as one block marked `partial` (text only, unsigned:
    never sent back)."""
    if final:
        return final
    return (Reasoning(message.reasoning, partial=True),) if message.reasoning else ()


def keep_partial(rt: Runtime, change: Change, task: Task, stop_reason: StopReason, error: str | None,
                 partial: PartialMessage | None = None, *, interrupted: bool = False,
                 final: tuple[Reasoning, ...] = ()) -> None:
    """Append the partial answer (the one given, else the committed one) as an entry, with its
    reasoning (`partial_reasoning`); its usage is counted even when it has nothing to keep."""
    gen = change.live(task.conversation_id).generation
    message = partial if partial is not None else (gen.message if gen else None)
    if message is None:
        return
    model = members.name(rt, task)
    usage.count(rt, change, task.conversation_id, tokens=message.usage, model=model)  # an answer cut off is charged too
    if not (message.text or message.reasoning or final or message.usage.output_tokens):
        return
    entry = AssistantEntry(message.text, stop_reason, (), message.usage, error, attempt_of(task.checkpoint),
                           interrupted=interrupted, reasoning=partial_reasoning(message, final), model=model)
    change.append(task.conversation_id, entry)


async def attempt_failed(rt: Runtime, task: Task, err: AttemptFailure, *,
                         final_reason: Literal["model_error", "interrupted"],
                         retry_after: float | None = None, retryable: bool = True,
                         partial: PartialMessage | None = None, raw: object = None,
                         stop_reason: StopReason = "error", interrupted: bool = False,
                         reasoning: tuple[Reasoning, ...] = ()) -> Task | None:
    """Charge a failed attempt: back off durably when the error is retryable and the policy
    allows another attempt, else end the run `unanswered{final_reason}`."""
    attempt = attempt_of(task.checkpoint)
    if raw is not None:
        detail = raw.raw if isinstance(raw, ModelError) and raw.raw is not None else repr(raw)
        rt.report(ErrorReport(f"Attempt {attempt} of task {task.id} failed: {err.message}", TaskRef.of(task), detail,
                              topic="model"))
    policy = rt.settings.retry
    retry = retryable and policy.allows_another(attempt)
    if not retry and final_reason == "model_error" and (index := members.next_index(rt, task)) is not None:
        return await fall_back(rt, task, err, index, partial, stop_reason)
    # A backoff is a lazy commit: nothing outside waits for it, and the next attempt's request
    # (or poll) is a barrier that puts it on disk first. Ending the run settles it: a barrier.
    change = rt.change(barrier=not retry)
    keep_partial(rt, change, task, stop_reason, err.message, partial, interrupted=interrupted, final=reasoning)
    if retry:
        until = rt.now() + policy.delay(attempt, retry_after)
        task = change.put_task(evolve(task, state=Sleeping(until),
                                      checkpoint=Retry(attempt, until, err, job_of(task.checkpoint),
                                                       rounds_of(task.checkpoint), notes_of(task.checkpoint))))
        backoff = RetryLive(attempt, until, err.message, err.kind, err.provider, err.status_code)
        change.edit_live(task.conversation_id, generation=GenerationLive(attempt, retry=backoff))
        await rt.commit(change)
        return task
    end_run(rt, change, task, Failed(ErrorInfo(err.message, ErrorDetail(final_reason))),
            reason=final_reason, detail=err.message)
    await rt.commit(change)
    return None


async def fall_back(rt: Runtime, task: Task, err: AttemptFailure, index: int, partial: PartialMessage | None,
                    stop_reason: StopReason) -> Task:
    """Move generation `task`'s run to member `index` of the harness's `FallbackModel`, in one
    commit: the partial kept, a deferred job of the failed member owed its cancel, `prepare` of
    attempt 1 on the new member (the run keeps it to its end). Lazy: the request that follows is
    the barrier. Reported (`ModelFallback`) once committed."""
    before, attempt = members.name(rt, task), attempt_of(task.checkpoint)
    change = rt.change(barrier=False)
    keep_partial(rt, change, task, stop_reason, err.message, partial)
    job = job_of(task.checkpoint)
    if job is not None:
        cancel.owe(rt, change, task.conversation_id, job, task.id)
    notes = evolve(notes_of(task.checkpoint), model=index)
    task = change.put_task(evolve(task, state=Running(), checkpoint=Prepare(1, rounds_of(task.checkpoint), notes)))
    change.edit_live(task.conversation_id, generation=GenerationLive(1))
    await rt.commit(change)
    rt.report(ModelFallback(TaskRef.of(task), before, members.name(rt, task), attempt, err.message))
    return task


__all__ = ["attempt_failed", "failure_of", "fall_back", "keep_partial", "model_failure", "partial_reasoning"]
