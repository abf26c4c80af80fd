"""A run's instructions, assembled in its `prepare` phase when any section is code.

`assemble` runs the harness's sections in order (`settings.system_prompt` first), each bounded by
`settings.prepare_timeout` of the event loop's time, each given a `PrepareContext` (the run, its
inputs, the harness's deps, the clock's time). The text is committed with the move to `request`
(in `RunNotes.instructions`) and sent by every attempt and tool round of the run; a new run
assembles it afresh. A section that raises, returns something other than a string, or runs out
of time fails the prepare: the run ends `unanswered{prepare_failed}` naming the section (its
function's qualified name, or its place in the list), and the error is reported. A process that
dies while a section runs is charged in `prepare` like any phase (`durable.engine.recovery`).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from ...engine.instructions import PrepareContext, joined, section_name
from ...engine.reports import ErrorReport, TaskRef
from ...records import Task
from .records import SECTION_FAILED, SECTION_TIMED_OUT, GenerationInput

if TYPE_CHECKING:
    from ...engine.runtime import Runtime


class PrepareFailed(Exception):
    """A section failed; `detail` says which and why, for the run's `unanswered{prepare_failed}`."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


async def assemble(rt: Runtime, task: Task) -> str:
    """The instructions of generation `task`'s run, every section run now. Raises
    `PrepareFailed` when one fails (reported, with the raw error)."""
    assert isinstance(task.input, GenerationInput)
    ids = task.input.submission_ids
    subs = [rt.submission(sid) for sid in ids]
    ctx = PrepareContext(task.conversation_id, task.id, tuple(s.text for s in subs if s is not None), ids, rt.deps,
                         rt.now())
    timeout = rt.settings.prepare_timeout
    parts = [rt.settings.system_prompt]
    for index, section in enumerate(rt.instructions_for(task.conversation_id)):
        if isinstance(section, str):
            parts.append(section)
            continue
        name = section_name(section, index)
        scope: object = None
        try:
            with rt.fail_after(timeout) as scope:
                made = section(ctx)
                if not inspect.isawaitable(made):
                    raise TypeError(f"it returned a {type(made).__name__}, not an awaitable (use async def)")
                text = await made
        except TimeoutError as exc:
            if getattr(scope, "cancel_called", False):  # our bound, not the section's own TimeoutError
                raise _failed(rt, task, SECTION_TIMED_OUT.format(name=name, seconds=timeout), exc) from None
            raise _failed(rt, task, SECTION_FAILED.format(name=name, error=_said(exc)), exc) from None
        except Exception as exc:  # noqa: BLE001 - the host's code: the run ends visibly, reported
            raise _failed(rt, task, SECTION_FAILED.format(name=name, error=_said(exc)), exc) from None
        if not isinstance(text, str):
            error = TypeError(f"it returned a {type(text).__name__}, not a string")
            raise _failed(rt, task, SECTION_FAILED.format(name=name, error=_said(error)), error)
        parts.append(text)
    return joined(parts)


def _said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _failed(rt: Runtime, task: Task, detail: str, exc: BaseException) -> PrepareFailed:
    rt.report(ErrorReport(f"Task {task.id}: {detail}", TaskRef.of(task), repr(exc), topic="task"))
    return PrepareFailed(detail)


__all__ = ["PrepareFailed", "assemble"]
