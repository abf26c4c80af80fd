"""What an entry weighs in a model's context: the provider-neutral token estimate, and which
entries are sent to a model at all.

Used on both sides of the store: `encode_batch` writes each entry's estimate beside it (the
`tokens` column of a session file), so that a harness opening a long conversation counts its
context without decoding it; the engine adds the estimate of every entry it appends. Both
count with `entry_tokens`, so the two always agree. Imports the records only.
"""

from __future__ import annotations

from collections.abc import Iterable

from .records.content import Attachment, Part
from .records.entries import AssistantEntry, CompactionEntry, Entry, ToolResultEntry, UserEntry

NOT_SENT = -1
"""The stored estimate of an entry that is never sent to a model again (see `in_context`)."""


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate (4 characters a token) for compaction thresholds."""
    return (len(text) + 3) // 4


IMAGE_TOKENS = 1_600
"""The estimate of an image (what a provider charges for one of about a megapixel)."""


def attachment_tokens(parts: Iterable[Part]) -> int:
    """The estimate of the images and files among `parts`: `IMAGE_TOKENS` an image, a file one
    token per 16 bytes (at least `IMAGE_TOKENS`)."""
    return sum(IMAGE_TOKENS if p.kind == "image" else max(IMAGE_TOKENS, p.size // 16)
               for p in parts if isinstance(p, Attachment))


def in_context(entry: Entry) -> bool:
    """Aborted and failed partial answers stay in the conversation but are never sent again."""
    return not (isinstance(entry, AssistantEntry) and entry.stop_reason in ("aborted", "error"))


def entry_tokens(entry: Entry) -> int:
    """The estimated tokens `entry` adds to a model's context (a compaction summary: what it
    adds when it leads the context)."""
    if isinstance(entry, UserEntry):
        return estimate_tokens(entry.text) + (attachment_tokens(entry.parts) if entry.parts else 0)
    if isinstance(entry, ToolResultEntry):
        return estimate_tokens(entry.content) + (attachment_tokens(entry.parts) if entry.parts else 0)
    if isinstance(entry, AssistantEntry):
        return estimate_tokens(entry.text) + sum(estimate_tokens(c.arguments) + 8 for c in entry.tool_calls)
    if isinstance(entry, CompactionEntry):
        return estimate_tokens(entry.summary)
    return 0


def stored_tokens(entry: Entry) -> int:
    """What the `tokens` column holds for `entry`: its estimate, or `NOT_SENT`."""
    return entry_tokens(entry) if in_context(entry) else NOT_SENT


__all__ = ["IMAGE_TOKENS", "NOT_SENT", "attachment_tokens", "entry_tokens", "estimate_tokens", "in_context",
           "stored_tokens"]
