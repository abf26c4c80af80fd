"""The cancel task: an owed cancel of a deferred job, carried out after the run that left it open.

    pending/none -> running/none
    running/none -> pending/none | end

A run never waits on a provider's cancel to end: its ending commit records the cancel as a task
of this kind (`owe`). The task commits `running`, asks the provider to cancel the job (finding
its handle by key when the submit's outcome was never committed: `Model.find`), and ends `done`.
It is bounded: a cancel that does not answer within `CANCEL_TIMEOUT` seconds on the clock, or
that the provider refuses, fails with a report naming the job and the provider. Cut off
`restart_limit` times in a row it fails with a `task_interrupted` report; below that it simply
runs again (cancelling a job twice is harmless).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._frozen import evolve, frozen
from ..engine.kinds import Resumed, TaskKind
from ..engine.reports import ErrorReport, TaskRef
from ..engine.transitions import END, Transitions
from ..models.fallback import member_of, members_of, provider_of
from ..models.protocol import ModelError
from ..records import DeferredJob, Done, ErrorDetail, ErrorInfo, Failed, FailureReason, Task, TaskInput, Terminal
from ..texts import times_in_a_row

if TYPE_CHECKING:
    from ..engine.head import Change
    from ..engine.runtime import Runtime

CANCEL_TIMEOUT = 30.0  # seconds (on the harness clock) a provider's cancel may take
CANCEL_AT_LIMIT = "Cancelling deferred job {job} at {provider} was interrupted {times}; it is not tried again"


@frozen
class CancelInput(TaskInput):
    """An owed cancel: the deferred job of run `run_task_id` is to be cancelled at `provider`."""

    job: DeferredJob
    run_task_id: int
    provider: str | None = None


def owe(rt: Runtime, change: Change, conversation_id: str, job: DeferredJob, run_task_id: int) -> Task:
    """In `change`: the cancel of `job`, left open by run `run_task_id`, owed as a task."""
    base = rt.model_for(conversation_id)
    members = members_of(base)
    model = members[job.model] if job.model < len(members) else base
    return rt.new_task(change, conversation_id=conversation_id, kind=CancelKind.name,
                       input=CancelInput(job, run_task_id, provider_of(model)))


class CancelKind(TaskKind):
    """Owed cancels of deferred jobs (see the module docstring)."""

    name = "cancel"
    input = CancelInput
    transitions = Transitions(
        start=["pending/none"],
        moves={"pending/none": ["running/none"], "running/none": ["pending/none", END]},
    )

    def __init__(self) -> None:
        self.phases = {type(None): self._cancel}

    async def resume_interrupted(self, rt: Runtime, task: Task, restarts: int) -> Resumed:
        return Resumed(task, "interrupted", f"The cancel of deferred job {_job(task)} is tried again")

    async def end_at_limit(self, rt: Runtime, task: Task, restarts: int, past: bool) -> str:
        inp = _input(task)
        detail = CANCEL_AT_LIMIT.format(job=_job(task), provider=inp.provider or "the provider",
                                        times=times_in_a_row(restarts))
        await self._end(rt, task, Failed(ErrorInfo(detail, ErrorDetail("restart_limit"))))
        return detail

    async def _cancel(self, rt: Runtime, task: Task) -> Task | None:
        inp = _input(task)
        task = await rt.mark_running(task, barrier=True)  # the provider is called next
        provider = inp.provider or "the provider"
        handle = inp.job.handle
        try:
            model = member_of(rt.model_for(task.conversation_id), inp.job.model)  # the member that started the job
            if handle is None:
                handle = await model.find(inp.job.key)
                if handle is None:
                    rt.report(ErrorReport(
                        f"Task {inp.run_task_id}: the deferred job {inp.job.key} may have been submitted "
                        f"before the host stopped; {provider} finds no job with that key, so it cannot be cancelled",
                        TaskRef.of(task), topic="model"))
                    await self._end(rt, task, Done({"cancelled": False}))
                    return None
            found = handle

            async def cancel() -> None:
                await model.cancel(found)

            finished, _ = await rt.within(CANCEL_TIMEOUT, f"cancel:{task.id}", cancel)
            if not finished:
                raise ModelError(f"{provider} did not answer within {CANCEL_TIMEOUT:g} s", kind="timeout")
        except ModelError as exc:
            message = f"Cancelling deferred job {handle or inp.job.key} at {provider} failed: {exc.message}"
            rt.report(ErrorReport(message, TaskRef.of(task), exc.raw, topic="model"))
            reason: FailureReason = "timeout" if exc.kind == "timeout" else "model_error"
            await self._end(rt, task, Failed(ErrorInfo(message, ErrorDetail(reason))))
            return None
        await self._end(rt, task, Done({"cancelled": True}))
        return None

    async def _end(self, rt: Runtime, task: Task, outcome: Done | Failed) -> None:
        change = rt.change()
        change.put_task(evolve(task, state=Terminal(outcome)), progress=False)
        await rt.commit(change)

    @classmethod
    def describe(cls, task: Task) -> str:
        return f"cancel of deferred job {_job(task)}"

    @classmethod
    def details(cls, task: Task) -> dict[str, Any]:
        inp = _input(task)
        return {"job": {"key": inp.job.key, "handle": inp.job.handle}, "run": inp.run_task_id,
                "provider": inp.provider}


def _input(task: Task) -> CancelInput:
    assert isinstance(task.input, CancelInput), f"task {task.id} is not a cancel task"
    return task.input


def _job(task: Task) -> str:
    job = _input(task).job
    return job.handle or job.key


__all__ = ["CANCEL_AT_LIMIT", "CANCEL_TIMEOUT", "CancelInput", "CancelKind", "owe"]
