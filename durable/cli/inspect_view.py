"""The text view of `durable inspect`: the dict of `inspect_data.read_session` as rich tables.

`print_session(data)` prints the file facts, each conversation's last entries and live document,
the submissions and the tasks. rich is imported when it prints, never at import.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from .inspect_data import shown_text


def print_session(data: dict[str, Any]) -> None:
    """Print what `read_session` returned, for a person (a wide table when piped)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Piped output has no terminal width to respect: use a wide one (COLUMNS still wins).
    wide = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 140
    console = Console(highlight=False, soft_wrap=False, width=wide)
    f = data["file"]
    owner = f["owner_pid"]
    owner_text = "none (not open)" if owner is None else ("another process" if owner < 0 else f"process {owner}")
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    facts.add_row("file", f["path"])
    facts.add_row("size", f"{f['size_bytes']:,} bytes (+ {f['wal_bytes']:,} in the WAL)")
    facts.add_row("schema", f"version {f['schema_version']} (this durable reads up to {f['supported_schema_version']})")
    facts.add_row("journal", f["journal_mode"])
    facts.add_row("synchronous", f"{f['synchronous']}: {f['synchronous_source']}")
    facts.add_row("owner", owner_text)
    c = f["counts"]
    facts.add_row("holds", f"{c['conversations']} conversation(s), {c['entries']} entries, "
                           f"{c['submissions']} submissions, {c['tasks']} tasks ({c['live_tasks']} not ended)")
    if c.get("attachments"):
        facts.add_row("attachments", f"{c['attachments']} image(s) and file(s), {c['attachment_bytes']:,} bytes")
    console.print(Text("Session file", style="bold underline"))
    console.print(facts)

    for conv in data["conversations"]:
        shown = len(conv["entries"])
        console.print()
        console.print(Text(f"Conversation {conv['id']!r}: {conv['entry_count']} entries"
                           + (f" (last {shown})" if shown < conv["entry_count"] else ""), style="bold underline"))
        table = Table(show_header=True, header_style="dim", box=None, pad_edge=False)
        for col in ("seq", "entry", "text"):
            table.add_column(col, overflow="fold")
        for e in conv["entries"]:
            table.add_row(str(e["seq"]), _entry_kind(e), Text(_entry_text(e)))  # not markup: "[image: ...]"
        console.print(table)
        live = data["live"].get(conv["id"])
        if live is not None and live.get("parent"):
            up = live["parent"]
            console.print(Text(f"sub-agent {up['agent']} of conversation {up['conversation_id']!r} (call "
                               f"{up['call_id']}, task {up['task_id']}, depth {up.get('depth', 1)})"))
        if live is not None:
            console.print(Text("live document: ", style="bold") + Text(_live_text(live)))
            if live.get("usage"):
                console.print(Text("usage: ", style="bold") + Text(_usage_text(live["usage"])))
            cost = data.get("costs", {}).get(conv["id"])
            if cost is not None:
                console.print(Text("cost: ", style="bold") + Text(cost_text(cost)))

    console.print()
    console.print(Text(f"Submissions ({len(data['submissions'])} shown)", style="bold underline"))
    table = Table(show_header=True, header_style="dim", box=None, pad_edge=False)
    for col in ("id", "conv", "task", "status", "text"):
        table.add_column(col, no_wrap=col != "text", overflow="fold")
    for s in data["submissions"]:
        style = {"done": "green", "unanswered": "red", "queued": "yellow"}.get(s["status"] or "", "")
        status = Text(s["status"] or "?", style=style)
        if s["reason"]:
            status.append(f" ({s['reason']}): {s['detail']}")
        text = Text(_short(shown_text({**s, "type": "user"}), 60))  # not markup: "[image: ...]"
        table.add_row(s["id"], s["conversation_id"], str(s["task_id"] or ""), status, text)
    console.print(table)

    console.print()
    console.print(Text(f"Tasks ({len(data['tasks'])} shown)", style="bold underline"))
    table = Table(show_header=True, header_style="dim", box=None, pad_edge=False)
    for col in ("id", "kind", "state", "phase", "attempt", "restarts", "about"):
        table.add_column(col, no_wrap=col != "about", overflow="fold")
    for t in data["tasks"]:
        state = t["state"] or "?"
        if t["outcome"]:
            state = t["outcome"] + (f" ({t['error']['reason']})" if t["error"] else "")
        elif t["until"] is not None:
            state += f" (+{t['until'] - _now():.1f} s)" if t["until"] > _now() else " (due)"
        elif t["waiting_on"]:
            state += f" (on {', '.join(map(str, t['waiting_on']))})"
        about = ""
        if t["tool"]:
            tool = t["tool"]
            about = f"{tool['name']} ({'client' if tool['client'] else tool['replay']})"
            if tool.get("timeout") is not None:
                about += f", timeout {tool['timeout']:g} s"
            if tool.get("approval") and not t["outcome"]:
                about += f", waits for approval ({_deadline(tool['approval']['deadline'])})"
            elif tool.get("approved_arguments") is not None:
                about += f", approved: {_short(tool['approved_arguments'], 60)}"
        elif t["inputs"] is not None:
            about = f"{len(t['inputs'])} input(s)"
            if t.get("fallback_member"):
                about += f", on fallback model {t['fallback_member'] + 1}"
        if t["stop"]:
            about += f", stopped: {t['stop']}"
        if t["error"]:
            about += f"; {t['error']['message']}"
        style = "red" if t["outcome"] in ("failed", "faulted") else ("green" if t["outcome"] == "done" else "yellow")
        table.add_row(str(t["id"]), t["kind"] or "", Text(state, style=style), t["phase"] or "",
                      str(t["attempt"] or ""), Text(str(t["restarts"]), style="yellow" if t["restarts"] else ""), about)
    console.print(table)


def _usage_text(usage: dict[str, Any]) -> str:
    """A conversation's usage totals (`Live.usage`, as stored): per model, then its tools."""
    parts = []
    for m in usage.get("models") or ():
        details = [f"{m[k]:,} {name}" for k, name in (("reasoning_tokens", "reasoning"),
                                                     ("cache_read_tokens", "cache read"),
                                                     ("cache_write_tokens", "cache write")) if m.get(k)]
        parts.append(f"{m.get('model')}: {m.get('requests', 0)} request(s), {m.get('input_tokens', 0):,} input / "
                     f"{m.get('output_tokens', 0):,} output tokens" + (f" ({', '.join(details)})" if details else ""))
    if usage.get("tool_calls"):
        parts.append(f"{usage['tool_calls']} tool call(s), {usage.get('tool_seconds', 0.0):.1f} s of tool runtime")
    return "; ".join(parts)


def cost_text(cost: dict[str, Any]) -> str:
    """A conversation's cost (`costs_data`): the total, then each model's; unknown ones said so."""
    total = "unknown" if cost["total"] is None else _usd(cost["total"])
    each = [f"{name} {'unknown (no price for it)' if c is None else _usd(c)}" for name, c in cost["models"].items()]
    return f"{total} ({'; '.join(each)})"


def _usd(amount: float) -> str:
    return f"${amount:,.4f}" if amount < 0.01 else f"${amount:,.2f}"


def _now() -> float:
    return time.time()


def _deadline(deadline: float | None) -> str:
    if deadline is None:
        return "no deadline"
    return f"denied in {deadline - _now():.1f} s" if deadline > _now() else "denied when the owner next runs"


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _entry_kind(e: dict[str, Any]) -> str:
    kind = e.get("type", "?")
    if kind == "assistant":
        attempt = e.get("attempt", 1)
        notes = ([f"attempt {attempt}"] if attempt > 1 else []) + ([f"by {e['model']}"] if e.get("model") else [])
        return f"assistant:{e.get('stop_reason')}" + (f" ({', '.join(notes)})" if notes else "")
    if kind == "tool_result":
        return f"tool_result:{e.get('tool_name')}" + (" (error)" if e.get("is_error") else "")
    return str(kind)


def _entry_text(e: dict[str, Any]) -> str:
    kind = e.get("type")
    if kind == "assistant":
        text = _short(e.get("text") or "")
        calls = ", ".join(f"{c.get('name')}({_short(c.get('arguments') or '', 40)})" for c in e.get("tool_calls") or ())
        if calls:
            text = (text + " " if text else "") + f"→ {calls}"
        if e.get("error"):
            text += f" [{e['error']}]"
        if blocks := e.get("reasoning"):
            size = sum(len(b.get("text") or "") + sum(map(len, b.get("summary") or ())) for b in blocks)
            partial = ", partial" if any(b.get("partial") for b in blocks) else ""
            text = f"(reasoning: {len(blocks)} block(s), {size:,} chars{partial}) {text.lstrip()}".rstrip()
        return text
    if kind == "compaction":
        return _short(e.get("summary") or "")
    return _short(shown_text(e))


def _live_text(live: dict[str, Any]) -> str:
    parts = ["archived (refuses new input)"] if live.get("archived") else []
    if live.get("forked_from") is not None:
        parts.append(f"forked from {live['forked_from']!r} at seq {live.get('forked_at', 0)}")
    run = live.get("run")
    if run:
        parts.append(f"busy with task {run['task_id']} ({len(run.get('inputs') or ())} input(s))")
    gen = live.get("generation")
    if gen:
        g = f"generation attempt {gen.get('attempt')}"
        message = (gen.get("message") or {}).get("text") or ""
        if message:
            g += f", partial {_short(message, 60)!r}"
        retry = gen.get("retry")
        if retry:
            g += f", retry at +{retry['at'] - _now():.1f} s after {retry.get('kind')}: {retry.get('error')}"
        deferred = gen.get("deferred")
        if deferred:
            g += f", deferred: next poll at +{deferred['poll_at'] - _now():.1f} s"
        parts.append(g)
    for slot in live.get("tools") or ():
        out = (slot.get("output") or "").strip().splitlines()
        child = f" -> conversation {slot['conversation']!r}" if slot.get("conversation") else ""
        parts.append(f"tool {slot.get('name')} {slot.get('status')}{child}"
                     + (f" ({_short(out[-1], 40)})" if out else ""))
    for slot in live.get("approvals") or ():
        parts.append(f"call {slot.get('call_id')} waits for approval: {slot.get('tool')}"
                     f"({_short(slot.get('arguments') or '', 60)}), {_deadline(slot.get('deadline'))}")
    failure = live.get("run_failure")
    if failure:
        parts.append(f"last run unanswered ({failure.get('reason')}): {failure.get('detail')}")
    cf = live.get("compaction_failure")
    if cf:
        parts.append(f"compaction failed: {cf.get('error')}")
    if live.get("compactions"):
        parts.append(f"{live['compactions']} compaction(s)")
    return "; ".join(parts) if parts else "idle"


__all__ = ["print_session"]
