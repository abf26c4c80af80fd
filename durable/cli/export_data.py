"""What `durable export` writes: whole conversations, as JSON or as a Markdown transcript.

`export_session(path)` reads every entry of every conversation (or of one) through
`SessionReader`: read-only, without the lock, safe while the owner process runs, and without a
cap (unlike `durable inspect`, which shows the last entries). The JSON is the codec's shape, the
one `durable inspect --json` uses for entries and submissions; `to_markdown` turns it into a
transcript a person can read or paste. This module imports neither anyio, trio nor a provider SDK.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from .. import codec, records as r
from ..errors import StorageError
from ..storage.sqlite.reader import SessionReader
from .inspect_data import shown_text, submission_data


class UnknownConversation(StorageError):
    """`--conversation` names a conversation the session file does not hold."""


def export_session(path: str | os.PathLike[str], *, conversation: str | None = None,
                   key: bytes | None = None) -> dict[str, Any]:
    """Every entry and submission of each conversation (or of `conversation` alone), with its
    live document, read in one snapshot of the session file at `path`. `key`: the key of an
    encrypted file (`WrongKey` without it, or with another)."""
    path = os.fspath(path)
    if os.path.islink(path):  # as the owner does: the file itself, with its -wal beside it
        path = os.path.realpath(path)
    with SessionReader(path, key=key) as reader, reader.snapshot():
        ids = reader.conversation_ids()
        if conversation is not None:
            if conversation not in ids:
                held = ", ".join(repr(c) for c in ids) or "none"
                raise UnknownConversation(f"Session file {path} has no conversation {conversation!r} "
                                          f"(it has: {held})", location=path)
            ids = [conversation]
        live = reader.live_documents()
        conversations = []
        for cid in ids:
            conversations.append({
                "id": cid,
                "entries": [{"seq": e.seq, **codec.converter.unstructure(e.entry, r.Entry)}
                            for e in reader.entries(cid)],
                "submissions": [submission_data(s) for s in reader.submissions(conversation_id=cid)],
                "live": codec.to_data(live.get(cid, r.EMPTY_LIVE)),
            })
        return {"file": path, "conversations": conversations}


def to_json(data: dict[str, Any]) -> str:
    """The export as JSON text (stable keys, UTF-8 kept as is)."""
    return json.dumps(data, indent=2, ensure_ascii=False)


def _fence(text: str) -> str:
    """`text` in a fenced block whose fence is longer than any run of backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _readable(arguments: str) -> str:
    """Tool call arguments as indented JSON with characters as they are (else as stored)."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


def _reasoning_markdown(block: dict[str, Any]) -> str:
    """A reasoning block as a quote: its text (or summary), and what it is when not plain."""
    how = ("redacted by the provider" if block.get("redacted") is not None else
           "cut off, never sent back" if block.get("partial") else "")
    text = block.get("text") or "\n\n".join(block.get("summary") or ())
    lines = [f"**Reasoning**{f' ({how})' if how else ''}", *(text.splitlines() if text else ())]
    return "\n".join(f"> {line}".rstrip() for line in lines)


def _entry_markdown(e: dict[str, Any]) -> str:
    kind, seq = e["type"], e["seq"]
    if kind == "user":
        return f"### {seq} · user\n\n{shown_text(e)}"
    if kind == "assistant":
        notes = [str(e["stop_reason"])]
        if e.get("attempt", 1) > 1:
            notes.append(f"attempt {e['attempt']}")
        if e.get("interrupted"):
            notes.append("cut off by a crash")
        if e.get("model"):
            notes.append(f"by {e['model']}")
        parts = [f"### {seq} · assistant ({', '.join(notes)})"]
        parts += [_reasoning_markdown(block) for block in e.get("reasoning") or ()]
        if e.get("text"):
            parts.append(e["text"])
        for call in e.get("tool_calls") or ():
            parts.append(f"Tool call `{call['name']}` (call {call['id']}):\n\n" + _fence(_readable(call["arguments"])))
        if e.get("error"):
            parts.append(f"> Error: {e['error']}")
        return "\n\n".join(parts)
    if kind == "tool_result":
        title = f"### {seq} · tool result `{e['tool_name']}` (call {e['call_id']})" + (
            ", error" if e.get("is_error") else "")
        return f"{title}\n\n{_fence(shown_text(e))}"
    if kind == "compaction":
        return (f"### {seq} · compaction summary (keeps entries from {e['first_kept_seq']} on)\n\n"
                f"{e['summary']}")
    return f"### {seq} · {kind}\n\n{_fence(json.dumps(e, ensure_ascii=False))}"  # pragma: no cover - new kinds


def to_markdown(data: dict[str, Any]) -> str:
    """The export as a Markdown transcript: one section per conversation, one heading per entry."""
    sections = []
    for conv in data["conversations"]:
        count = len(conv["entries"])
        head = f"# Conversation `{conv['id']}`\n\n_{count} {'entry' if count == 1 else 'entries'}, from {data['file']}_"
        sections.append("\n\n".join([head, *(_entry_markdown(e) for e in conv["entries"])]))
    return "\n\n".join(sections) + "\n"


__all__ = ["UnknownConversation", "export_session", "to_json", "to_markdown"]
