"""The cancel task: an owed cancel of a deferred job, carried out after the run that left it open.

A run never waits on a provider's cancel to end: its ending commit records the cancel as a task
of this kind (`CancelInput{job, run_task_id, provider}`). The task commits `running`, asks the
provider to cancel the job (finding its handle by key when the submit's outcome was never
committed and the provider can list jobs), and ends `done`. It is bounded: a cancel that does not
answer within `CANCEL_TIMEOUT` seconds on the clock, or that the provider refuses, fails with a
report naming the job and the provider. It is charged like any task: cut off `restart_limit`
times in a row, it fails with a `task_interrupted` report naming the job and the provider; below
that it simply runs again (cancelling a job twice is harmless).
"""

from __future__ import annotations

from typing import ClassVar

import anyio

from .._frozen import evolve
from ..engine.kinds import Resumed, TaskKind
from ..engine.reports import ErrorReport, TaskRef
from ..engine.runtime import Runtime
from ..engine.transitions import Transitions
from ..messages import CANCEL_AT_LIMIT, times_in_a_row
from ..models.protocol import ModelError
from ..records import CancelInput, Done, ErrorDetail, ErrorInfo, Failed, FailureReason, Task, Terminal

CANCEL_TIMEOUT = 30.0  # seconds (on the harness clock) a provider's cancel may take


class CancelKind(TaskKind):
    """Owed cancels of deferred jobs (see the module docstring)."""

    name = "cancel"
    transitions: ClassVar[Transitions] = Transitions(
        "cancel",
        start={("pending", "none")},
        states={"pending": {"running"}, "running": {"pending"}},
        phases={},
    )

    def __init__(self) -> None:
        self.phases = {type(None): self._cancel}

    async def resume_interrupted(self, rt: Runtime, task: Task, restarts: int) -> Resumed:
        return Resumed(task, "interrupted", f"The cancel of deferred job {_job(task)} is tried again")

    async def end_at_limit(self, rt: Runtime, task: Task, restarts: int) -> str:
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
            if handle is None:
                find = getattr(rt.model, "find", None)
                handle = await find(inp.job.key) if find is not None else None
                if handle is None:
                    if find is None:
                        rt.report(ErrorReport(
                            f"Task {inp.run_task_id}: the deferred job {inp.job.key} may have been submitted "
                            f"before the host stopped; {provider} cannot look it up, so it cannot be cancelled",
                            TaskRef.of(task), topic="model"))
                    await self._end(rt, task, Done({"cancelled": False}))
                    return None
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:

                    async def give_up() -> None:
                        await rt.sleep_until(rt.now() + CANCEL_TIMEOUT, f"cancel:{task.id}")
                        scope.cancel()

                    tg.start_soon(give_up)
                    await rt.model.cancel(handle)
                    tg.cancel_scope.cancel()
            if scope.cancelled_caught:
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


def _input(task: Task) -> CancelInput:
    assert isinstance(task.input, CancelInput), f"task {task.id} is not a cancel task"
    return task.input


def _job(task: Task) -> str:
    job = _input(task).job
    return job.handle or job.key


__all__ = ["CANCEL_TIMEOUT", "CancelKind"]
