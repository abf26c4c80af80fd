"""Reports to the host: structured events about crash handling, and errors with human text.

The host passes `report=callback`; the callback gets `TaskInterrupted`, `TaskFaulted` and
`ErrorReport` values, synchronously, in commit order. A callback that raises is not allowed to
break the harness: its exception is swallowed after one attempt (reports are information).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from attrs import frozen

from ..records import Task

# What crash handling did with a task found cut off: charged or resumed ("interrupted"), an
# unsafe tool not run again ("not_rerun"), or ended at the restart limit ("restart_limit").
InterruptReason = Literal["interrupted", "not_rerun", "restart_limit"]
# Why the harness gave up on a task: its abort handler was cut off too often, or its code raised.
FaultReason = Literal["restart_limit", "exception", "storage_error"]


@frozen
class TaskRef:
    id: int
    kind: str
    conversation_id: str

    @classmethod
    def of(cls, task: Task) -> TaskRef:
        return cls(task.id, task.kind, task.conversation_id)


@frozen
class TaskInterrupted:
    """A task was found cut off by a crash; `reason` says what crash handling did with it."""

    task: TaskRef
    reason: InterruptReason
    restarts: int
    detail: str = ""
    type: str = "task_interrupted"


@frozen
class TaskFaulted:
    task: TaskRef
    reason: FaultReason
    detail: str = ""
    type: str = "task_faulted"


@frozen
class ErrorReport:
    """A human-readable error, with the raw error (never a credential) for the logs."""

    message: str
    task: TaskRef | None = None
    raw: Any = None
    type: str = "error"


Report = TaskInterrupted | TaskFaulted | ErrorReport
ReportCallback = Callable[[Report], None]


class Reporter:
    def __init__(self, callback: ReportCallback | None) -> None:
        self._callback = callback

    def __call__(self, report: Report) -> None:
        if self._callback is not None:
            try:
                self._callback(report)
            except Exception:  # noqa: BLE001 - a report must never break the harness
                pass
