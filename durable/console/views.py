"""What the console page shows of a session, as plain JSON-ready data, from records alone.

`session_state` turns a session's live documents, tasks and recovery notes into the dict the
page renders (conversations with their state, pending approvals, tasks with the kind's view
hooks as `durable inspect` shows them, usage); `entry_data` is one transcript entry.
`Recovery` follows a conversation's entries and tasks and tells, in plain words, what the last
opens found cut off and how each was charged: nothing durable records the `task_interrupted` and
`task_faulted` reports themselves, so the story is read from what they leave behind (an
assistant entry `interrupted` or `aborted`, a tool result saying its call was not run again, a
task's `restarts`, a `faulted` ending). Everything here is data; the page escapes all of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .. import codec, records as r, tasks as _kinds  # noqa: F401 - the standard kinds: their records decode
from ..cli.inspect_data import _task
from ..engine.kinds import kind_class
from ..prices import Prices, in_force


def entry_data(stored: r.StoredEntry) -> dict[str, Any]:
    """One transcript entry: its seq, then the codec's fields (`type` is its kind); an answer's
    reasoning also as the text a person reads (`reasoning_text`, "" when it has none)."""
    data = {"seq": stored.seq, "conversation_id": stored.conversation_id,
            **codec.converter.unstructure(stored.entry, r.Entry)}
    if isinstance(stored.entry, r.AssistantEntry):
        data["reasoning_text"] = r.reasoning_text(stored.entry.reasoning)
    return data


_last_usage: tuple[r.UsageTotals, Prices | None, dict[str, Any]] | None = None


def usage_data(usage: r.UsageTotals, prices: Prices | None = None) -> dict[str, Any]:
    """Usage by model and by kind of token, apart: `input` not read from or written to the cache,
    `cache_read`, `cache_write`, `output` less its `reasoning`, `reasoning`; with each model's cost
    in USD as `prices` say (`Settings.prices`; None: genai-prices when installed), None when its
    price is unknown (`unpriced` names it; the total is None then too). Tokens as reported.
    The last answer is kept and given again for the same usage and prices (a page looks at the
    same totals many times; pricing them is not cheap)."""
    global _last_usage
    last = _last_usage
    if last is not None and last[1] is prices and last[0] == usage:
        return last[2]
    found = _usage_data(usage, prices)
    _last_usage = (usage, prices, found)
    return found


_warm = False


def warm_prices() -> None:
    """Price some usage, once, so that the first look at a session with usage does not pay for
    loading the price table (genai-prices, when installed: about half a second of a core); a
    standalone console does it as it starts."""
    global _warm
    if not _warm:
        in_force(None).priced(r.UsageTotals(models=(r.ModelUsage("openai:gpt-4o", 1, 1, 1),)))
        _warm = True


def _usage_data(usage: r.UsageTotals, prices: Prices | None) -> dict[str, Any]:
    priced = in_force(prices).priced(usage)

    def kinds(m: Any) -> dict[str, Any]:
        return {"requests": m.requests, "input": m.input_tokens - m.cache_read_tokens - m.cache_write_tokens,
                "cache_read": m.cache_read_tokens, "cache_write": m.cache_write_tokens,
                "output": m.output_tokens - m.reasoning_tokens, "reasoning": m.reasoning_tokens}

    models = [{"model": m.model, **kinds(m), "cost": m.cost} for m in priced.models]
    total = {k: sum(m[k] for m in models) for k in ("requests", "input", "cache_read", "cache_write", "output",
                                                    "reasoning")}
    return {"models": models, "total": {**total, "cost": priced.cost}, "unpriced": list(priced.unpriced),
            "tool_calls": usage.tool_calls, "tool_seconds": usage.tool_seconds}


def task_data(t: r.Task) -> dict[str, Any]:
    """A task as `durable inspect` shows it, with the kind's words for it and its phase."""
    kind = kind_class(t.kind)
    return {**_task(t), "describe": kind.describe(t) if kind is not None else t.kind,
            "phase_label": kind.phase_label(t) if kind is not None else None}


def conversation_state(live: r.Live) -> str:
    """One word or two for what a conversation is doing now."""
    gen = live.generation
    if live.approvals:
        return "waiting for approval"
    if gen is not None and gen.retry is not None:
        return "retrying"
    if gen is not None and gen.deferred is not None:
        return "deferred"
    if live.tools:
        return "running tools"
    if gen is not None:
        return "generating"
    if live.run is not None:
        return "running"
    if live.run_failure is not None:
        return "failed"
    return "idle"


class Recovery:
    """The recovery story of a session, grown as its entries are read (each entry once)."""

    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = []

    def read(self, entries: Iterable[r.StoredEntry]) -> None:
        for stored in entries:
            e, where = stored.entry, f"{stored.conversation_id} #{stored.seq}"
            if isinstance(e, r.AssistantEntry) and (e.interrupted or e.stop_reason == "aborted"):
                if e.interrupted:
                    text = (f"An answer (attempt {e.attempt}) was cut off by the death of its process after "
                            f"{len(e.text)} characters: the partial is kept, marked aborted, and the attempt "
                            "is charged (task_interrupted).")
                else:
                    text = (f"An answer (attempt {e.attempt}) was aborted: its partial ({len(e.text)} characters) "
                            "is kept.")
                self.notes.append({"where": where, "kind": "interrupted" if e.interrupted else "aborted",
                                   "seq": stored.seq, "conversation_id": stored.conversation_id, "text": text})
            elif isinstance(e, r.ToolResultEntry) and e.is_error and any(
                    d.code in ("interrupted", "not_rerun", "restart_limit", "faulted") for d in e.diagnostics):
                codes = ", ".join(d.code for d in e.diagnostics)
                self.notes.append({"where": where, "kind": "tool", "seq": stored.seq,
                                   "conversation_id": stored.conversation_id,
                                   "text": f"Tool {e.tool_name} (call {e.call_id}) was cut off ({codes}): {e.content}"})

    def story(self, tasks: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The notes, and a sentence for each task now being recovered or that faulted."""
        out = list(self.notes)
        for t in tasks:
            if t["restarts"] and t["outcome"] is None:
                phase = f", phase {t['phase_label'] or t['phase']}" if (t["phase_label"] or t["phase"]) else ""
                out.append({"where": f"task {t['id']}", "kind": "restarted", "conversation_id": t["conversation_id"],
                            "text": f"Task {t['id']} ({t['describe']}) was cut off {t['restarts']} time(s) in a row "
                                    f"and is {t['state']} again{phase} (task_interrupted: it runs again)."})
            elif t["outcome"] == "faulted":
                why = t["error"]["message"] if t["error"] else "its code raised"
                out.append({"where": f"task {t['id']}", "kind": "faulted", "conversation_id": t["conversation_id"],
                            "text": f"Task {t['id']} ({t['describe']}) faulted (task_faulted): {why}"})
        return out


def session_state(*, name: str, location: str, owner: str, live: Mapping[str, r.Live],
                  tasks: Iterable[r.Task], entry_counts: Mapping[str, int], recovery: Recovery,
                  schemas: Mapping[str, Any] | None = None, live_data: Mapping[str, Any] | None = None,
                  task_rows: list[dict[str, Any]] | None = None, usage: r.UsageTotals | None = None,
                  prices: Prices | None = None) -> dict[str, Any]:
    """The session as the page shows it. `schemas`: the tools' JSON schemas by name, when known
    (embedded), so that the page can say what an edited call is checked against. `live_data`,
    `task_rows`, `usage`: the live documents and the tasks already turned into data (`task_data`:
    `tasks` is then not read) and the live documents' usage summed (the caller's cache), else made
    here. `usage`: the totals as stored; `usage_by_kind`: `usage_data` (costed with `prices`)."""
    task_rows = [task_data(t) for t in tasks] if task_rows is None else task_rows
    ids = sorted(set(live) | set(entry_counts))
    conversations, approvals, total = [], [], r.EMPTY_USAGE if usage is None else usage
    for cid in ids:
        doc = live.get(cid, r.EMPTY_LIVE)
        if usage is None:
            total = total + doc.usage
        conversations.append({"id": cid, "state": conversation_state(doc), "entries": entry_counts.get(cid, 0)})
        for slot in doc.approvals:
            schema = json.loads(slot.parameters) if slot.parameters else (schemas or {}).get(slot.tool)
            data = {k: v for k, v in codec.to_data(slot).items() if k != "parameters"}
            approvals.append({"conversation_id": cid, **data, "schema": schema})
    return {
        "name": name, "location": location, "owner": owner, "conversations": conversations,
        "live": dict(live_data) if live_data is not None else {cid: codec.to_data(doc) for cid, doc in live.items()},
        "tasks": task_rows, "approvals": approvals, "recovery": recovery.story(task_rows),
        "usage": codec.to_data(total), "usage_by_kind": usage_data(total, prices), "schemas_known": schemas is not None,
    }


__all__ = ["Recovery", "conversation_state", "entry_data", "session_state", "task_data", "usage_data", "warm_prices"]
