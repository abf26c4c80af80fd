"""What `durable chat` prints: the events of a run (`sub.stream()`), recovery reports in plain
words, `/usage` and `/history`. Plain text with a few ANSI styles on a terminal (none with
NO_COLOR or when stdout is not a terminal), written to one stream that knows whether its cursor
is mid-line, so that every notice starts on a fresh line."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

from .. import records as r
from ..engine.reports import ErrorReport, ModelFallback, TaskFaulted, TaskInterrupted
from ..engine.stream_events import (
    AttemptRestartedEvent,
    ReasoningDeltaEvent,
    RetryWaitingEvent,
    SettledEvent,
    TextDeltaEvent,
    ToolCallEndedEvent,
    ToolCallStartedEvent,
    ToolOutputEvent,
)

RESULT_LINES = 6  # lines of a tool result shown


class Screen:
    """The terminal's output: `write` streams, `line` prints a line of its own."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.mid_line = False
        self.mode = ""  # "reasoning", "text", "output" or "" (between)
        self.color = self.out.isatty() and not os.environ.get("NO_COLOR")

    def style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and text else text

    def write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self.mid_line = not text.endswith("\n")

    def line(self, text: str = "", code: str = "") -> None:
        self.end_line()
        self.write(self.style(text, code) + "\n")
        self.mode = ""

    def end_line(self) -> None:
        if self.mid_line:
            self.write("\n")


def one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


def arguments_text(arguments: str) -> str:
    """A call's arguments on one line: `key=value` pairs of its JSON object."""
    try:
        data = json.loads(arguments)
    except ValueError:
        return one_line(arguments)
    if not isinstance(data, dict):
        return one_line(arguments)
    return one_line(", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in data.items()))


class EventView:
    """Renders one run's events on a `Screen`."""

    def __init__(self, screen: Screen) -> None:
        self.s = screen

    def show(self, event: Any) -> None:
        s = self.s
        if isinstance(event, ReasoningDeltaEvent):
            if s.mode != "reasoning":
                s.end_line()
                s.write(s.style("thinking: ", "2;3"))
                s.mode = "reasoning"
            s.write(s.style(event.text, "2;3"))
        elif isinstance(event, TextDeltaEvent):
            if s.mode != "text":
                s.end_line()
                s.write(s.style("agent: ", "1"))
                s.mode = "text"
            s.write(event.text)
        elif isinstance(event, AttemptRestartedEvent):
            s.line(f"[attempt {event.attempt} starts over; what was streamed before is kept as cut off]", "33")
        elif isinstance(event, RetryWaitingEvent):
            s.line(f"[attempt {event.retry.attempt} failed: {event.retry.error}; trying again]", "33")
        elif isinstance(event, ToolCallStartedEvent):
            s.line(f"-> {event.name}({arguments_text(event.arguments)})", "36")
        elif isinstance(event, ToolOutputEvent):
            if s.mode != "output":
                s.end_line()
                s.mode = "output"
            for piece in event.text.splitlines(keepends=True):
                s.write(("  | " if not s.mid_line else "") + s.style(piece, "2"))
        elif isinstance(event, ToolCallEndedEvent):
            self.tool_result(event.name, event.content, event.is_error)
        elif isinstance(event, SettledEvent):
            self.settled(event.status)

    def tool_result(self, name: str, content: str, is_error: bool) -> None:
        lines = content.splitlines() or [""]
        head = "error" if is_error else "ok"
        self.s.line(f"<- {name} {head}: {one_line(lines[0])}", "31" if is_error else "32")
        for line in lines[1:RESULT_LINES]:
            self.s.line(f"   {one_line(line)}", "2")
        if len(lines) > RESULT_LINES:
            self.s.line(f"   [{len(lines) - RESULT_LINES} more lines]", "2")

    def settled(self, status: Any) -> None:
        if isinstance(status, r.Unanswered):
            if status.reason == "aborted":
                self.s.line("[aborted: the partial answer is kept in the conversation]", "33")
            else:
                self.s.line(f"[not answered ({status.reason}): {status.detail}]", "31")
        else:
            self.s.end_line()
        self.s.mode = ""


def describe_report(rep: Any) -> str | None:
    """A report of the harness in plain words (None: nothing worth a line)."""
    if isinstance(rep, TaskInterrupted):
        detail = rep.detail.rstrip(".")
        if rep.task.kind == "tool":
            if rep.reason == "not_rerun":
                return (f"recovery: {detail}. It is not safe to run twice, so it was not run again; "
                        "the model is told it may be partial.")
            if rep.reason == "restart_limit":
                return f"recovery: {detail} (cut off {rep.restarts} times in a row: given up)."
            return f"recovery: a tool call was cut off by the crash; it is safe to repeat and runs again ({detail})."
        if rep.task.kind == "generation":
            if rep.reason == "restart_limit":
                return f"recovery: the answer was cut off {rep.restarts} times in a row; given up: {detail}."
            return f"recovery: the answer in progress was cut off by the crash ({detail}); the model is asked again."
        return f"recovery: task {rep.task.id} ({rep.task.kind}) was cut off: {detail}."
    if isinstance(rep, TaskFaulted):
        return f"recovery: task {rep.task.id} ({rep.task.kind}) failed: {rep.detail}"
    if isinstance(rep, ModelFallback):
        return f"note: {rep.message}"
    if isinstance(rep, ErrorReport):
        return f"note: {rep.message}"
    return None


def usage_lines(usage: r.UsageTotals) -> list[str]:
    """The lines of `/usage`."""
    lines = []
    for m in usage.models:
        cost = f"${m.cost:.6f}" if m.cost is not None else "unknown (no price)"
        lines.append(f"{m.model}: {_count(m.requests, 'request')}, {m.input_tokens} input tokens "
                     f"({m.cache_read_tokens} cached), {m.output_tokens} output tokens "
                     f"({m.reasoning_tokens} reasoning), cost {cost}")
    if not usage.models:
        lines.append("no requests yet")
    total = f"${usage.cost:.6f}" if usage.cost is not None else "unknown"
    lines.append(f"total: {usage.input_tokens + usage.output_tokens} tokens, cost {total}")
    lines.append(f"tools: {_count(usage.tool_calls, 'call')}, {usage.tool_seconds:.1f} s of tool runtime")
    return lines


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def history_line(stored: r.StoredEntry) -> str:
    e = stored.entry
    n = f"{stored.seq:>3}"
    if isinstance(e, r.UserEntry):
        return f"{n} you: {one_line(e.text)}"
    if isinstance(e, r.AssistantEntry):
        calls = "".join(f" -> {c.name}({arguments_text(c.arguments)})" for c in e.tool_calls)
        cut = " [cut off]" if e.stop_reason == "aborted" or e.interrupted else ""
        return f"{n} agent{cut}: {one_line(e.text)}{calls}"
    if isinstance(e, r.ToolResultEntry):
        return f"{n} {e.tool_name} {'error' if e.is_error else 'ok'}: {one_line(e.content)}"
    return f"{n} summary: {one_line(e.summary)}"


__all__ = ["EventView", "Screen", "arguments_text", "describe_report", "history_line", "one_line", "usage_lines"]
