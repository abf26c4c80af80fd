"""A readable dump of a session (entries, submissions, tasks, live documents), for reports."""

from __future__ import annotations

from typing import Any

from ... import codec
from ...records import AssistantEntry, Failed, Faulted, ToolResultEntry, Unanswered
from .image import SessionImage, load_session, state_name


def describe_session(source: Any) -> str:
    """A readable dump of a session: entries, submissions, tasks and live documents."""
    from ..crash import entry_kind

    image = source if isinstance(source, SessionImage) else load_session(source)
    lines = [f"session {image.location}"]
    lines += [f"  ! {p}" for p in image.problems]
    for cid, entries in sorted(image.entries.items()):
        lines.append(f"  conversation {cid!r}:")
        for stored in entries:
            e = stored.entry
            text = getattr(e, "text", None) or getattr(e, "content", None) or getattr(e, "summary", "")
            extra = ""
            if isinstance(e, AssistantEntry):
                extra = f" attempt={e.attempt}" + (f" calls={[c.name for c in e.tool_calls]}" if e.tool_calls else "")
                extra += f" error={e.error!r}" if e.error else ""
            if isinstance(e, ToolResultEntry):
                extra = f" call={e.call_id}"
            lines.append(f"    {stored.seq:>3} {entry_kind(e)} {_short(text)!r}{extra}")
    for sub in image.submissions.values():
        status = codec.tag_of(sub.status)
        if isinstance(sub.status, Unanswered):
            status += f" ({sub.status.reason}: {sub.status.detail})"
        lines.append(f"  submission {sub.id} task={sub.task_id} {status}")
    for task in sorted(image.tasks.values(), key=lambda t: t.id):
        phase = codec.tag_of(task.checkpoint) if task.checkpoint is not None else "-"
        outcome = task.outcome
        why = ""
        if isinstance(outcome, (Failed, Faulted)):
            why = f" ({outcome.error.detail.reason}: {outcome.error.message})"
        lines.append(f"  task {task.id} {task.kind} {state_name(task)}/{phase} restarts={task.restarts}{why}")
    for cid, live in sorted(image.live.items()):
        lines.append(f"  live {cid!r}: run={live.run.task_id if live.run else None} "
                     f"failure={live.run_failure.reason if live.run_failure else None}")
    return "\n".join(lines)


def _short(text: Any, n: int = 60) -> str:
    shown = str(text or "")
    return shown if len(shown) <= n else shown[: n - 1] + "…"


__all__ = ["describe_session"]
