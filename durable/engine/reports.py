"""Reports to the host: structured events about crash handling, and errors with human text.

The host passes `report=callback`; the callback gets `TaskInterrupted`, `TaskFaulted`,
`ModelFallback` and `ErrorReport` values, synchronously, in commit order. Every report is also
logged on a child of the `durable` logger (the library adds only a `NullHandler` on `durable`):

| report                                                      | logger                 | level   |
|-------------------------------------------------------------|------------------------|---------|
| `TaskInterrupted`: `interrupted`; `not_rerun`, `restart_limit` | `durable.recovery`   | INFO; WARNING |
| `TaskFaulted`: `restart_limit`; `exception`                 | `durable.recovery`; `durable.task` | ERROR |
| `ErrorReport`: topic `model`, `commit`, `disk`; `storage`, `task` | `durable.<topic>` | WARNING; ERROR |
| `ModelFallback`: a run moved to the next member of a `FallbackModel` | `durable.model` | WARNING |
| a report callback that raised                               | `durable.reports`      | ERROR, with its traceback |

Each record carries, as `extra`, `report`, `report_type`, `task_id`, `task_kind`,
`conversation_id` and `reason` (the report's reason, or an `ErrorReport`'s topic), so a
structured handler needs no parsing. A callback that raises never breaks the harness.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

from .._frozen import frozen
from ..records import Task
from ..texts import times_in_a_row

logging.getLogger("durable").addHandler(logging.NullHandler())
_recovery_log = logging.getLogger("durable.recovery")
_reports_log = logging.getLogger("durable.reports")

# What crash handling did with a task found cut off: charged or resumed ("interrupted"), an
# unsafe tool not run again ("not_rerun"), or ended at the restart limit ("restart_limit").
InterruptReason = Literal["interrupted", "not_rerun", "restart_limit"]
"""What crash handling did with a task found cut off (`TaskInterrupted.reason`)."""
# Why the harness gave up on a task: its abort handler was cut off too often, or its code raised.
FaultReason = Literal["restart_limit", "exception", "storage_error"]
"""Why the harness gave up on a task (`TaskFaulted.reason`)."""
# What an `ErrorReport` is about: the model provider (a failed attempt, a job that cannot be
# looked up or cancelled), a commit the store refused (retried), the store stopping for good
# (lock lost, closed, a full disk that lasted), task code that raised, or what a store warns of
# when it opens (little space left on its disk).
ErrorTopic = Literal["model", "commit", "storage", "task", "disk"]


@frozen
class TaskRef:
    """The task a report is about: its id, its kind ("generation", "tool", ...) and the
    conversation it belongs to."""

    id: int
    kind: str
    conversation_id: str

    @classmethod
    def of(cls, task: Task) -> TaskRef:
        """The reference of a task record."""
        return cls(task.id, task.kind, task.conversation_id)


@frozen
class TaskInterrupted:
    """A task was found cut off by a crash; `reason` says what crash handling did with it.

    `restarts` is how many times in a row the task was cut off; `detail` is the sentence that
    explains the decision (it is also what the conversation or the tool result says)."""

    task: TaskRef
    reason: InterruptReason
    restarts: int
    detail: str = ""
    type: str = "task_interrupted"


@frozen
class TaskFaulted:
    """The harness gave up on a task: its code raised (`exception`), or its abort handler was cut
    off `restart_limit` times in a row. The task ended `faulted`; `detail` says why."""

    task: TaskRef
    reason: FaultReason
    detail: str = ""
    type: str = "task_faulted"


@frozen
class ErrorReport:
    """A human-readable error, with the raw error (never a credential) for the logs.

    `task` is the task concerned (None for a commit that belongs to no one task), `topic` what
    the error is about (see `ErrorTopic`); it chooses the logger the report is logged on."""

    message: str
    task: TaskRef | None = None
    raw: Any = None
    topic: ErrorTopic = "task"
    type: str = "error"


@frozen
class ModelFallback:
    """A run moved to the next member of its `FallbackModel` (`to_model`, by name) because
    `from_model` failed for good on `attempt`: an error that is not retried, or the last retry
    of the policy; `error` is that failure's message. Sent once the move is committed."""

    task: TaskRef
    from_model: str
    to_model: str
    attempt: int
    error: str
    type: str = "model_fallback"

    @property
    def message(self) -> str:
        """The report as a sentence (as an `ErrorReport`'s `message`: code written before fallbacks
        existed, printing the message of any report that is not a task's, keeps working)."""
        return (f"Task {self.task.id} moved from model {self.from_model} to {self.to_model}: attempt {self.attempt} "
                f"failed for good: {self.error}")


Report = TaskInterrupted | TaskFaulted | ModelFallback | ErrorReport
"""Every value a report callback can receive."""
ReportCallback = Callable[[Report], None]
"""The `report=` callback of `open_harness`: called synchronously, in commit order."""

_TOPIC_LEVELS: dict[str, int] = {"model": logging.WARNING, "commit": logging.WARNING, "disk": logging.WARNING,
                                 "storage": logging.ERROR, "task": logging.ERROR}


def _describe(task: TaskRef | None) -> str:
    return f"Task {task.id} ({task.kind}, conversation {task.conversation_id})" if task else "A commit"


def _extra(report: Report, reason: str) -> dict[str, Any]:
    task = report.task
    return {
        "report": report,
        "report_type": report.type,
        "task_id": task.id if task else None,
        "task_kind": task.kind if task else None,
        "conversation_id": task.conversation_id if task else None,
        "reason": reason,
    }


def log_report(report: Report) -> None:
    """Log a report on its logger, at its level, with structured `extra` (see the module docstring)."""
    reason: str
    if isinstance(report, TaskInterrupted):
        logger, reason = _recovery_log, report.reason
        level = logging.INFO if reason == "interrupted" else logging.WARNING
        message = f"{_describe(report.task)} was cut off {times_in_a_row(report.restarts)} ({reason}): {report.detail}"
    elif isinstance(report, TaskFaulted):
        reason = report.reason
        logger = _recovery_log if reason == "restart_limit" else logging.getLogger("durable.task")
        level = logging.ERROR
        message = f"{_describe(report.task)} faulted ({reason}): {report.detail}"
    elif isinstance(report, ModelFallback):
        logger, level, reason = logging.getLogger("durable.model"), logging.WARNING, "fallback"
        message = (f"{_describe(report.task)} moved from {report.from_model} to {report.to_model} after attempt "
                   f"{report.attempt} failed: {report.error}")
    else:
        reason = report.topic
        logger, level = logging.getLogger(f"durable.{reason}"), _TOPIC_LEVELS.get(reason, logging.ERROR)
        message = report.message
    if logger.isEnabledFor(level):
        # `%s`: the message is data (it may hold a `%` from a provider's error text), never a format.
        logger.log(level, "%s", message, extra=_extra(report, reason))


class Reporter:
    """Sends each report to the log (`log_report`) and to the host's callback, if any."""

    def __init__(self, callback: ReportCallback | None) -> None:
        self._callback = callback

    def __call__(self, report: Report) -> None:
        log_report(report)
        if self._callback is not None:
            try:
                self._callback(report)
            except Exception:  # noqa: BLE001 - a report must never break the harness: logged instead
                task = report.task
                about = f" about task {task.id} ({task.kind})" if task else ""
                name = getattr(self._callback, "__qualname__", repr(self._callback))
                _reports_log.exception("The report callback %s raised on the %s report%s; the harness goes on",
                                       name, report.type, about, extra=_extra(report, "callback_raised"))


__all__ = [
    "ErrorReport",
    "ErrorTopic",
    "FaultReason",
    "InterruptReason",
    "ModelFallback",
    "Report",
    "ReportCallback",
    "Reporter",
    "TaskFaulted",
    "TaskInterrupted",
    "TaskRef",
    "log_report",
]
