"""Recovery: what opening a file does about the work a dead process left behind.

`charge_interrupted` is the open commit: every task still `running` in the file was cut off, so it
becomes `pending` with `restarts + 1`, all in one commit. Tasks that were `sleeping` or `waiting`
were not running and are never charged. The commit is idempotent with respect to charging: a task
charged by one open is `pending`, so a later open (after a clean close, or another crash before it
ran) does not charge it again. `restarts` goes back to 0 only when the task commits durable
progress (a new checkpoint), so it counts "cut off this many times in a row".

`interruption_text` and `limit_reached` are the shared words and test of the restart limit; the
kinds decide what reaching it means for them. The limit is read only for tasks with restarts > 0,
so the normal path never pays for this feature.
"""

from __future__ import annotations

import attrs

from ..records import Pending, Running, Task
from .session import Session


async def charge_interrupted(session: Session) -> list[Task]:
    change = session.change()
    charged = []
    for task in session.tasks.values():
        if isinstance(task.state, Running):
            charged.append(change.put_task(attrs.evolve(task, state=Pending(), restarts=task.restarts + 1), progress=False))
    if change:
        await change.commit()
    return charged


def times(n: int) -> str:
    """"once", "2 times" ..."""
    return "once" if n == 1 else f"{n} times"


def times_in_a_row(n: int) -> str:
    return "once" if n == 1 else f"{n} times in a row"


def restart_limit(settings: object) -> int:
    """The restart limit; called only on the recovery path (a task with restarts > 0)."""
    return int(getattr(settings, "restart_limit"))
