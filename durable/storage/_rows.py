"""Decoding stored JSON rows back into records, with errors that name the record and file.

Shared by both backends so that a bad row is refused the same way everywhere.
"""

from __future__ import annotations

from typing import TypeVar

from .. import codec
from ..errors import CorruptSession
from ..records import Entry, Live, StoredEntry, Submission, Task

T = TypeVar("T")


def _load(body: str, cls: type[T], what: str, location: str) -> T:
    try:
        return codec.loads(body, cls)
    except codec.CodecError as exc:
        raise CorruptSession(f"{what} in {location} cannot be read: {exc}", location=location) from exc


def task(body: str, task_id: int, location: str) -> Task:
    return _load(body, Task, f"Task {task_id}", location)


def entry(conversation_id: str, seq: int, body: str, location: str) -> StoredEntry:
    what = f"Entry {seq} of conversation {conversation_id!r}"
    value: Entry = _load(body, Entry, what, location)  # type: ignore[arg-type]  # a Union is no type[T] (no TypeForm)
    return StoredEntry(conversation_id, seq, value)


_FRAMES = {kind: f'{{"type":"{kind}",' for kind in ("user", "assistant", "tool_result", "compaction")}


def framed(kind: str, body: str) -> bool:
    """Whether an entry's JSON text is framed as the codec writes it: an object whose first key
    is its tag, the same as its `kind` column, and that is closed. A cheap check of a row kept
    undecoded (a row damaged inside is refused when it is decoded)."""
    frame = _FRAMES.get(kind)
    return frame is not None and body.startswith(frame) and body.endswith("}")


def submission(body: str, submission_id: str, location: str) -> Submission:
    return _load(body, Submission, f"Submission {submission_id}", location)


def live(body: str, conversation_id: str, location: str) -> Live:
    return _load(body, Live, f"Live document of conversation {conversation_id!r}", location)
