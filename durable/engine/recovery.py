"""Recovery: what opening a file does about the work a dead process left behind, in one place.

Invariant: `restarts` counts "cut off this many times in a row", and every charge and every
restart-limit decision is made here; no other module reads `settings.restart_limit`.

- `charge_interrupted` is the open commit: every task still `running` in the file was cut off,
  so it becomes `pending` with `restarts + 1`, all in one commit. `sleeping` and `waiting` tasks
  were not running and are never charged. A charged task is `pending`, so a later open does not
  charge it again; `restarts` goes back to 0 only when the task commits durable progress. The
  charge keeps the task's `updated_at`: the last time it committed, when it was cut off.
- `recover` runs when a runner starts a task with `restarts > 0`, before its kind sees it. At
  the limit, once `running` is committed (so a crash in the ending counts too), it asks the kind
  for its visible ending (`end_at_limit`, told whether that ending was cut off before: `past`;
  or `fault_stop` when the abort handler kept being cut off); below it, the kind's
  `resume_interrupted` (charge an attempt, refuse to re-run an unsafe tool, or run the phase
  again). Every decision sends a `task_interrupted` or `task_faulted` report.
"""

from __future__ import annotations

from .._frozen import evolve
from ..records import Pending, Running, Task
from ..texts import ABORT_HANDLER_AT_LIMIT, times
from .kinds import TaskKind
from .reports import TaskFaulted, TaskInterrupted, TaskRef
from .runtime import Runtime
from .session import Session


async def charge_interrupted(session: Session) -> list[Task]:
    """The open commit: every `running` task becomes `pending` with one more restart.

    A lazy commit (no fsync of its own): nothing outside the process depends on a charge, and
    whatever this process does next that has an effect outside (a retry request, a tool run
    again) is preceded by a barrier that makes the charge durable with it. A process kill never
    loses it (so a crash loop is counted); a power cut before that barrier loses it together with
    everything this process did, and the next open charges the same tasks again."""
    change = session.change(barrier=False)
    charged = []
    for task in session.tasks.values():
        if isinstance(task.state, Running):
            charged.append(change.put_task(evolve(task, state=Pending(), restarts=task.restarts + 1),
                                           progress=False, stamp=False))
    if change:
        await session.commit(change)
    return charged


async def recover(rt: Runtime, kind: TaskKind, task: Task) -> Task | None:
    """Decide what becomes of a task that was cut off (`task.restarts > 0`); returns the task to
    go on with, or None when it ended here."""
    n = task.restarts
    limit = rt.settings.restart_limit
    ref = TaskRef.of(task)
    if n >= limit:
        # The ending is charged like any work: should it be cut off too, the next open counts
        # past the limit (and a generation then drops the partial it could not convert).
        task = await rt.mark_running(task, stamp=False)
    if task.stop is not None:
        if n >= limit:
            detail = ABORT_HANDLER_AT_LIMIT.format(task_id=task.id, kind=task.kind, times=times(n))
            await kind.fault_stop(rt, task, detail)
            rt.report(TaskFaulted(ref, "restart_limit", detail))
            return None
        rt.report(TaskInterrupted(ref, "interrupted", n, "The stop handler runs again"))
        return task
    if n >= limit:
        detail = await kind.end_at_limit(rt, task, n, past=n > limit)
        rt.report(TaskInterrupted(ref, "restart_limit", n, detail))
        return None
    resumed = await kind.resume_interrupted(rt, task, n)
    rt.report(TaskInterrupted(ref, resumed.reason, n, resumed.detail))
    return resumed.task


__all__ = ["charge_interrupted", "recover"]
