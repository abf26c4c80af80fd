"""The demo's plain display (one line per notable event, flushed at once so a kill loses
nothing) and the sentences both displays use for entries and reports."""

from __future__ import annotations

import json
import sys
from typing import Any

from .. import records as r, tasks as _kinds  # noqa: F401 - the standard kinds, registered
from ..engine.kinds import kind_class
from ..engine.reports import TaskFaulted, TaskInterrupted
from ..records.content import placeholder_text
from .demo_model import Step


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _one_line(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_entry(entry: Any) -> tuple[str, str] | None:
    """(event kind, text) for an entry, as the plain output prints it."""
    if isinstance(entry, r.UserEntry):
        return None  # shown when submitted
    if isinstance(entry, r.AssistantEntry):
        if entry.stop_reason == "aborted":
            why = (f"was cut off ({entry.error})" if entry.error
                   else "was stopped by a clean close (it is sent again; not counted as a failed attempt)")
            return "kept partial", (f"attempt {entry.attempt} {why}; its partial answer stays in the conversation "
                                    f"as aborted: \"{_one_line(entry.text, 80)}\"")
        if entry.stop_reason == "error":
            return "failed attempt", f"attempt {entry.attempt}: {entry.error}: \"{_one_line(entry.text, 80)}\""
        if entry.tool_calls:
            calls = ", ".join(f"{c.name}({_one_line(readable_json(c.arguments), 60)})" for c in entry.tool_calls)
            return "tool calls", f"(attempt {entry.attempt}) {_one_line(entry.text)} -> {calls}"
        return "answer", f"(attempt {entry.attempt}, {entry.usage.output_tokens} tokens) {_one_line(entry.text, 800)}"
    if isinstance(entry, r.ToolResultEntry):
        content = placeholder_text(entry.parts) if entry.parts else entry.content
        return ("tool error" if entry.is_error else "tool done"), f"{entry.tool_name}: {_one_line(content)}"
    if isinstance(entry, r.CompactionEntry):
        return "compaction", _one_line(entry.summary)
    return None


def readable_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except ValueError:
        return text


def describe_approval(slot: r.ApprovalSlot) -> str:
    """One line for a tool call waiting for a person's decision (`live.approvals`)."""
    limit = "" if slot.deadline is None else " (denied at its deadline)"
    return (f"call {slot.call_id}: {slot.tool}({_one_line(readable_json(slot.arguments), 80)}) waits for your "
            f"approval{limit}")


def task_name(task: r.Task) -> str:
    """"generation", "tool save_note, unsafe"... (as its kind describes it)."""
    kind = kind_class(task.kind)
    return kind.describe(task) if kind is not None else task.kind


def describe_cut_off(task: r.Task, rep: TaskInterrupted | TaskFaulted | None) -> str:
    """One line for a task the last process died running: what it was doing (`task`, as the
    open found it) and what recovery does about it (`rep`, its report; None when it sent none)."""
    what = f"task {task.id} ({task_name(task)}) was cut off by the crash"
    kind = kind_class(task.kind)
    phase = kind.phase_label(task) if kind is not None else None
    if phase is not None:
        what += f" in its {phase} phase"
    if rep is None:
        return f"{what} (restarts={task.restarts})"
    if isinstance(rep, TaskFaulted):
        return f"{what} and ended faulted ({rep.reason}; restarts={task.restarts}): {rep.detail}"
    n = rep.restarts
    if rep.reason == "restart_limit":
        return f"{what}, {n} times in a row: the restart limit, so it ends here: {rep.detail}"
    if rep.reason == "not_rerun":
        return f"{what} and is not run again (restarts={n}): {rep.detail}"
    if kind is not None and kind.attempt_lost(task):
        # The attempt the model was answering (or the job it was fetching) is lost: a failed attempt.
        return f"{what}; counted as a failed attempt (restarts={n}): {rep.detail}"
    return f"{what}; it runs again (restarts={n})"


def describe_report(rep: Any) -> str:
    if isinstance(rep, TaskInterrupted):
        what = {"interrupted": "was cut off", "not_rerun": "was cut off and is not run again",
                "restart_limit": "reached the restart limit"}.get(rep.reason, rep.reason)
        return f"task {rep.task.id} ({rep.task.kind}) {what} (restarts={rep.restarts}): {rep.detail}"
    if isinstance(rep, TaskFaulted):
        return f"task {rep.task.id} ({rep.task.kind}) faulted ({rep.reason}): {rep.detail}"
    return getattr(rep, "message", str(rep))


class Ui:
    """The plain display: one line per notable event, flushed at once (a kill loses nothing)."""

    def __init__(self, out: Any = None) -> None:
        self.out = out or sys.stdout
        self.failure: str | None = None
        self.asked: set[str] = set()  # calls whose wait for approval was printed

    def start(self, db: str) -> None:
        pass

    def stop(self) -> None:
        try:
            self.out.flush()
        except (OSError, ValueError):
            pass

    def event(self, kind: str, text: str) -> None:
        print(f"[{kind}] {text}", file=self.out, flush=True)

    def submitted(self, step: Step, total: int) -> None:
        self.event(f"input {step.number}/{total}", f"you: {step.text}")

    def opened(self, entries: list[r.StoredEntry]) -> None:
        """The conversation as the open found it (the live view shows it as its transcript)."""

    def history(self, entries: list[r.StoredEntry]) -> None:
        """What the conversation holds once recovery has written what it keeps."""
        aborted = [e for e in entries if isinstance(e.entry, r.AssistantEntry) and e.entry.stop_reason == "aborted"]
        if entries:
            self.event("history", f"the conversation has {_count(len(entries), 'entry', 'entries')}, "
                                  f"{_count(len(aborted), 'aborted partial', 'aborted partials')}")

    def entry(self, stored: r.StoredEntry) -> None:
        described = describe_entry(stored.entry)
        if described is not None:
            self.event(*described)

    def report(self, rep: Any) -> None:
        kind = "recovery" if isinstance(rep, (TaskInterrupted, TaskFaulted)) else "provider error"
        self.event(kind, describe_report(rep))

    def live(self, live: r.Live, task: r.Task | None, step: Step | None) -> None:
        for slot in live.approvals:
            if slot.call_id not in self.asked:
                self.asked.add(slot.call_id)
                self.event("approval", describe_approval(slot))
