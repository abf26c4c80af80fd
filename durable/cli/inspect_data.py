"""What `durable inspect` shows, as one plain JSON-ready dict, read through `SessionReader`.

`read_session(path)` returns file facts, conversations with their last entries, submissions,
tasks and the live documents. It is safe while the owner process runs: the file is read through
`durable.storage.sqlite.reader` (read-only, URL-quoted, never locked, nothing written), and the records
it returns (decoded by `durable.codec`) are turned back into the codec's JSON shape here. This
module imports neither anyio, trio nor a provider SDK.

A file that is missing, not a session, of a newer schema or damaged is refused with the same
error classes the harness raises (`StorageError`, `NotASession`, `SchemaTooNew`,
`CorruptSession`), naming the file; nothing in it is changed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .. import codec, records as r, tasks as _kinds  # noqa: F401 - the standard kinds: their records decode
from ..engine.kinds import kind_class
from ..prices import DEFAULT_PRICES, Prices
from ..records.content import placeholder_text
from ..storage.sqlite.reader import FileFacts, SessionReader, owner_of
from ..storage.sqlite.schema import SCHEMA_VERSION

DEFAULT_SYNCHRONOUS = "EXTERNAL"  # what `open_harness` sets on its connection unless told otherwise


# What `--state` accepts: the stored states, and the outcomes of ended (terminal) tasks.
TASK_STATES = ("pending", "running", "sleeping", "waiting", "terminal", "done", "failed", "faulted", "aborted")


def read_session(path: str | os.PathLike[str], *, last: int = 10, kinds: Sequence[str] = (),
                 states: Sequence[str] = (), prices: Prices = DEFAULT_PRICES,
                 key: bytes | None = None) -> dict[str, Any]:
    """Everything `durable inspect` shows about the session file at `path`.

    `last` bounds what grows with history: the entries shown per conversation, and the ended
    tasks and settled submissions shown (live tasks and unsettled submissions are always all
    shown). `kinds` and `states` (any of `TASK_STATES`) filter the tasks: with either, every task
    that matches one of the kinds and one of the states is shown, ended ones too, without the
    `last` bound. `costs` prices each conversation's usage with `prices` (`genai-prices`, when
    installed, by default). `key`: the key of an encrypted file (`WrongKey` without it)."""
    unknown = sorted(set(states) - set(TASK_STATES))
    if unknown:
        raise ValueError(f"Unknown task state(s) {', '.join(unknown)} (expected: {', '.join(TASK_STATES)})")
    path = os.fspath(path)
    if os.path.islink(path):  # as the owner does: the file itself, with its -wal beside it
        path = os.path.realpath(path)
    with SessionReader(path, key=key) as reader, reader.snapshot():  # one commit in every section
        live = reader.live_documents()
        conversations = []
        for cid in reader.conversation_ids():
            count, last_seq = reader.entry_span(cid)
            entries = [{"seq": e.seq, **codec.converter.unstructure(e.entry, r.Entry)}
                       for e in reader.entries(cid, last=last)]
            conversations.append({"id": cid, "entry_count": count, "last_seq": last_seq, "entries": entries})
        return {
            "file": _file_facts(reader.file_facts(), path),
            "conversations": conversations,
            "submissions": sorted((submission_data(s) for s in reader.submissions(settled_last=last)),
                                  key=lambda s: (s["created_at"] or 0, s["id"])),
            "tasks": _tasks(reader, last, kinds, states),
            "live": {cid: codec.to_data(doc) for cid, doc in live.items()},
            "costs": {cid: costs_data(doc.usage, prices) for cid, doc in live.items() if doc.usage.models},
        }


def costs_data(usage: r.UsageTotals, prices: Prices = DEFAULT_PRICES) -> dict[str, Any]:
    """What a conversation's usage cost (USD), per model and in total, as `prices` say: None where a
    model's price is unknown (`unpriced` names them), and then for the total too."""
    priced = prices.priced(usage)
    return {"models": {m.model: m.cost for m in priced.models}, "total": priced.cost,
            "unpriced": list(priced.unpriced)}


def _tasks(reader: SessionReader, last: int, kinds: Sequence[str], states: Sequence[str]) -> list[dict[str, Any]]:
    if not kinds and not states:
        return [_task(t) for t in reader.tasks(ended_last=last)]
    found = [t for kind in sorted(set(kinds)) for t in reader.tasks(kind=kind)] if kinds else reader.tasks()
    shown = [_task(t) for t in sorted(found, key=lambda t: t.id)]
    if states:
        wanted = set(states)
        shown = [t for t in shown if t["state"] in wanted or t["outcome"] in wanted]
    return shown


def _file_facts(f: FileFacts, path: str) -> dict[str, Any]:
    return {
        "path": f.path,
        "size_bytes": f.size_bytes,
        "wal_bytes": f.wal_bytes,
        "page_size": f.page_size,
        "page_count": f.page_count,
        "schema_version": f.schema_version,
        "supported_schema_version": SCHEMA_VERSION,
        "journal_mode": f.journal_mode,
        # `synchronous` is a setting of each connection, not of the file: the owner sets it when
        # it opens. What the owner chose is not recorded, so this is the library default.
        "synchronous": DEFAULT_SYNCHRONOUS,
        "synchronous_source": "the library default; set per connection by the owner, not stored in the file",
        "owner_pid": owner_of(path),
        "counts": {
            "conversations": f.conversations,
            "entries": f.entries,
            "submissions": f.submissions,
            "tasks": f.tasks,
            "live_tasks": f.live_tasks,
            "attachments": f.attachments,
            "attachment_bytes": f.attachment_bytes,
        },
    }


def submission_data(s: r.Submission) -> dict[str, Any]:
    status = s.status
    unanswered = status if isinstance(status, r.Unanswered) else None
    return {
        "id": s.id,
        "conversation_id": s.conversation_id,
        "text": s.text,
        "status": codec.tag_of(status),
        "reason": unanswered.reason if unanswered else None,
        "detail": unanswered.detail if unanswered else None,
        "task_id": s.task_id,
        "seq": s.seq,
        "created_at": s.created_at,
        **({"parts": codec.to_data(s.parts, tuple[r.Part, ...])} if s.parts else {}),
    }


def shown_text(e: dict[str, Any]) -> str:
    """The text of a user entry or tool result in the codec's JSON shape, its images and files as
    their placeholders ("[image shot.png: image/png, 12 kB]"): what the views print."""
    parts = e.get("parts")
    if not parts:
        return str(e.get("text") if e.get("type") == "user" else e.get("content") or "")
    return placeholder_text(codec.from_data(parts, tuple[r.Part, ...]))


def _task(t: r.Task) -> dict[str, Any]:
    state, checkpoint, outcome = t.state, t.checkpoint, t.outcome
    error = outcome.error if isinstance(outcome, (r.Failed, r.Faulted)) else None
    return {
        "id": t.id,
        "kind": t.kind,
        "conversation_id": t.conversation_id,
        "parent_id": t.parent_id,
        "state": codec.tag_of(state),
        "until": state.until if isinstance(state, r.Sleeping) else None,
        "waiting_on": list(state.on) if isinstance(state, r.Waiting) else None,
        "phase": codec.tag_of(checkpoint) if checkpoint is not None else None,
        "attempt": getattr(checkpoint, "attempt", None),
        "restarts": t.restarts,
        "stop": t.stop,
        "outcome": codec.tag_of(outcome) if outcome is not None else None,
        "error": {"message": error.message, "reason": error.detail.reason} if error else None,
        "tool": None,
        "inputs": None,
        "updated_at": t.updated_at,
        **_kind_details(t),
    }


def _kind_details(t: r.Task) -> dict[str, Any]:
    """The fields the task's kind adds (`TaskKind.details`: a tool's call, a run's inputs...)."""
    kind = kind_class(t.kind)
    return kind.details(t) if kind is not None else {}


__all__ = ["TASK_STATES", "read_session", "shown_text", "submission_data"]
