"""What the explorer alone can check, knowing each batch it handed the store: the file gives back
what was committed. Every task, live document, submission and entry as the last commit that
returned wrote it, or as a later one still in flight at the crash did (a store finishes a
submitted commit): a record altered or lost, a partial text cut short or grown past its
commit, is a violation naming the record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...storage.protocol import Batch
from .image import load_session

Key = tuple[Any, ...]  # ("task", id), ("live", conversation), ("submission", id), ("entry", conversation, seq)


def _writes(batch: Batch) -> list[tuple[Key, Any]]:
    """(what, its record) for every record `batch` writes, a later write of one in it last."""
    return [*((("task", t.id), t) for t in batch.tasks), *((("live", cid), doc) for cid, doc in batch.live.items()),
            *((("submission", s.id), s) for s in batch.submissions),
            *((("entry", e.conversation_id, e.seq), e.entry) for e in batch.entries)]


def check_committed(source: Any, recorded: Sequence[Batch], returned: Sequence[Batch]) -> list[str]:
    """The records of `source` (a session file or store) against the batches handed to its store
    in commit order (`recorded`) and those whose commit returned (`returned`, by identity)."""
    done = {id(b) for b in returned}
    allowed: dict[Key, list[Any]] = {}  # the last returned version, then any in flight after it
    for batch in recorded:
        for key, record in _writes(batch):
            if id(batch) in done:
                allowed[key] = [record]
            elif key in allowed:
                allowed[key].append(record)
    if not allowed:
        return []
    image = load_session(source)
    if not image.readable:
        return []  # said by the file's own checks
    entries = {(e.conversation_id, e.seq): e.entry for stored in image.entries.values() for e in stored}
    found: dict[Key, Any] = {**{("task", tid): t for tid, t in image.tasks.items()},
             **{("live", cid): doc for cid, doc in image.live.items()},
             **{("submission", sid): s for sid, s in image.submissions.items()},
             **{("entry", *key): entry for key, entry in entries.items()}}
    out = []
    for key, versions in allowed.items():
        got = found.get(key)
        if not any(got == v for v in versions):
            what = " ".join(str(part) for part in key)
            out.append(f"The {what} read back is not what was committed: {_short(got)} instead of "
                       f"{_short(versions[0])}")
    return out


def _short(record: Any) -> str:
    text = repr(record)
    return text if len(text) <= 300 else f"{text[:150]} ... {text[-150:]} ({len(text)} characters)"
