"""The demo's terminal display: a `rich.live.Live` view of the committed state (rich is
imported when the view starts)."""

from __future__ import annotations

import time
from typing import Any

from .. import records as r
from ..records.content import placeholder_text
from .demo_model import STEPS, Step
from .plain_view import Ui, describe_approval, describe_entry, readable_json


class RichUi(Ui):
    """The terminal display: a `rich.live.Live` view of the committed state, refreshed 10 times a
    second (so a retry countdown moves), with the transcript, the partial answer as it streams,
    tool slots with their output, attempts and restarts, and the last events."""

    def __init__(self) -> None:
        super().__init__()
        from rich.console import Console

        self.console = Console()
        self._live_view: Any = None
        self.db = ""
        self.transcript: list[r.StoredEntry] = []
        self.events: list[str] = []
        self.recovery: list[str] = []  # what the reopen found and did: kept on screen
        self.final: list[str] = []  # printed below the view when it stops
        self.state: tuple[r.Live, r.Task | None, Step | None] = (r.Live(), None, None)

    def start(self, db: str) -> None:
        from rich.live import Live

        self.db = db
        self._live_view = Live(get_renderable=self._render, console=self.console, refresh_per_second=10,
                               transient=False, redirect_stdout=False)
        self._live_view.start()

    def stop(self) -> None:
        if self._live_view is not None:
            view, self._live_view = self._live_view, None
            # The view's last frame stays on screen: the lines printed below it leave it first,
            # so that each is shown once.
            self.events = [line for line in self.events if line not in self.final]
            view.refresh()
            view.stop()
            for line in self.final:
                self.console.print(line, markup=False, highlight=False)
        self.console.show_cursor(True)

    def event(self, kind: str, text: str) -> None:
        line = f"[{kind}] {text}"
        if kind in ("recovery", "resume", "kept partial", "history"):
            self.recovery = [*self.recovery[-7:], line]
        else:
            self.events = [*self.events[-7:], line]
        if kind in ("done", "stopped", "kill", "unanswered"):
            self.final.append(line)  # printed below the view when it stops (and no more in it)

    def opened(self, entries: list[r.StoredEntry]) -> None:
        self.transcript = list(entries)

    def entry(self, stored: r.StoredEntry) -> None:
        self.transcript = [*self.transcript, stored]
        described = describe_entry(stored.entry)
        if described is not None and described[0] in ("kept partial", "failed attempt", "tool error"):
            self.event(*described)

    def live(self, live: r.Live, task: r.Task | None, step: Step | None) -> None:
        self.state = (live, task, step)

    def _render(self) -> Any:
        from rich.console import Group
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text

        live, task, step = self.state
        width = max(40, self.console.width - 8)
        status = Text()
        if live.run is not None:
            status.append(f"input {step.number if step else '?'} of {len(STEPS)}", style="bold")
            status.append(f"  ·  task {live.run.task_id}")
            if live.generation is not None:
                status.append(f"  ·  attempt {live.generation.attempt}")
            if task is not None:
                status.append(f"  ·  restarts {task.restarts}", style="yellow" if task.restarts else "")
        else:
            status.append("idle", style="dim")
        now_view, now_height = self._render_live(live, width)
        events = self.events[-4:]
        recovery = self.recovery[-4:]
        # Everything fits the terminal: the transcript gets what the rest leaves (one line an entry).
        recovery_height = 2 * len(recovery) + 2 if recovery else 0  # a recovery line may wrap once
        rows = max(2, min(12, self.console.height - 8 - len(events) - now_height - recovery_height))
        shown = [_entry_row(stored.entry) for stored in self.transcript[-rows:]]
        transcript = Table.grid(padding=(0, 1))
        # Labels are words ("attempt 1 cut off"): their column is as wide as the widest one.
        transcript.add_column(style="bold", no_wrap=True, min_width=max([12, *(len(row[0]) for row in shown)]))
        transcript.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
        for label, text, style in shown:
            body = Text(" ".join(text.split()), style="dim" if style == "dim" else "")
            transcript.add_row(Text(label, style=style), body)
        parts: list[Any] = [status]
        if recovery:
            parts.append(Panel(Text("\n".join(recovery)),
                               title="recovery", title_align="left", border_style="yellow"))
        parts.append(Panel(transcript, title="conversation (committed)", title_align="left"))
        if now_view is not None:
            parts.append(Panel(now_view, title="live document (committed)", title_align="left", border_style="cyan"))
        if events:
            parts.append(Text("\n".join(events), style="dim", no_wrap=True, overflow="ellipsis"))
        return Panel(Group(*parts), title=f"durable demo · {self.db}",
                     subtitle="kill -9 me any time, then run durable demo again", border_style="blue")

    def _render_live(self, live: r.Live, width: int) -> tuple[Any, int]:
        """The live document, and the lines it takes (its border included)."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        parts: list[Any] = []
        height = 2
        gen = live.generation
        if gen is not None:
            if gen.retry is not None:
                left = max(0.0, gen.retry.at - time.time())
                code = f" HTTP {gen.retry.status_code}" if gen.retry.status_code else ""
                parts.append(Text(f"⏳ attempt {gen.retry.attempt} failed ({gen.retry.kind}{code}): {gen.retry.error}\n"
                                  f"   attempt {gen.retry.attempt + 1} in {left:.1f} s (a durable timer)",
                                  style="yellow", no_wrap=True, overflow="ellipsis"))
                height += 2
            elif gen.deferred is not None:
                left = max(0.0, gen.deferred.poll_at - time.time())
                parts.append(Text(f"⌛ background job (attempt {gen.attempt}): next poll in {left:.1f} s",
                                  style="magenta"))
                height += 1
            else:
                # The newest three lines of the partial answer, or of the reasoning before it.
                thinking = not gen.message.text and bool(gen.message.reasoning)
                text = gen.message.reasoning if thinking else gen.message.text
                tail = 3 * width - 30
                if len(text) > tail:
                    text = "…" + text[-tail:]
                who = ("thinking ", "italic green") if thinking else ("assistant ", "bold green")
                parts.append(Text.assemble(who, (f"(attempt {gen.attempt}) ", "dim"),
                                           (" ".join(text.split()), "dim" if thinking else ""), ("▍", "blink")))
                height += 3
        if live.tools:
            table = Table(box=None, show_header=True, header_style="dim", pad_edge=False)
            table.add_column("tool", no_wrap=True)
            table.add_column("status", no_wrap=True)
            table.add_column("output (newest lines)", no_wrap=True, overflow="ellipsis")
            height += 1
            for slot in live.tools:
                out = "\n".join(slot.output.splitlines()[-2:])
                style = {"done": "green", "error": "red", "waiting": "magenta"}.get(slot.status, "yellow")
                table.add_row(slot.name, Text(slot.status, style=style), out)
                height += 2
            parts.append(table)
        for waiting in live.approvals:
            parts.append(Text(describe_approval(waiting), style="magenta", no_wrap=True, overflow="ellipsis"))
            height += 1
        if live.run_failure is not None:
            f = live.run_failure
            parts.append(Text(f"✗ unanswered ({f.reason}): {f.detail}", style="red", no_wrap=True, overflow="ellipsis"))
            height += 1
        return (Group(*parts), height) if parts else (None, 0)


def _entry_row(entry: Any) -> tuple[str, str, str]:
    if isinstance(entry, r.UserEntry):
        return "you", placeholder_text(entry.parts) if entry.parts else entry.text, "cyan"
    if isinstance(entry, r.AssistantEntry):
        if entry.stop_reason in ("aborted", "error"):
            how = "cut off" if entry.stop_reason == "aborted" else "failed"
            return f"attempt {entry.attempt} {how}", f"{entry.text} [{entry.error or entry.stop_reason}]", "dim"
        calls = "".join(f" → {c.name}({readable_json(c.arguments)})" for c in entry.tool_calls)
        return "assistant", entry.text + calls, "green"
    if isinstance(entry, r.ToolResultEntry):
        mark, style = ("error", "red") if entry.is_error else ("✓", "yellow")
        return f"{entry.tool_name} {mark}", placeholder_text(entry.parts) if entry.parts else entry.content, style
    return "summary", getattr(entry, "summary", ""), "dim"
