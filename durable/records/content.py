"""Content parts: what an input or a tool result holds besides text, as stored.

An input (`Submission`, `UserEntry`) or a tool result (`ToolResultEntry`) made of parts keeps
them in order in its `parts`: `TextPart`s and `Attachment`s. An `Attachment` is a reference to
bytes stored once per session, content-addressed (`sha256`, the hex digest of the bytes), with
their media type, size and the file name they came from; entries never hold the bytes. The store
keeps the bytes in its `attachments` table, written by the commit that first references them
(`durable.storage.protocol.Batch.attachments`), and a request reads them back when it is built.
`placeholder` is how an attachment reads where its bytes are not sent (a compaction's summary
request, `durable inspect`): "[image: image/png, 12 kB]".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, Union

from .._frozen import frozen


@frozen
class TextPart:
    """Text among the parts of an input or a tool result."""

    text: str


@frozen
class Attachment:
    """A reference to stored bytes: an image or a file (`kind`), `sha256` the hex digest of its
    bytes (the key it is stored under, once per session), its `media_type` ("image/png",
    "application/pdf"), its `size` in bytes and the file `name` it came from (None for bytes
    given as such)."""

    kind: Literal["image", "file"]
    sha256: str
    media_type: str
    size: int
    name: str | None = None


Part = Union[TextPart, Attachment]
"""One part of an input or a tool result; stored with a tag ("text", "attachment")."""


def text_of(parts: Iterable[Part]) -> str:
    """The text parts of `parts`, joined by blank lines (what the entry's `text` holds)."""
    return "\n\n".join(p.text for p in parts if isinstance(p, TextPart))


def attachments_of(parts: Iterable[Part]) -> tuple[Attachment, ...]:
    return tuple(p for p in parts if isinstance(p, Attachment))


def placeholder(att: Attachment) -> str:
    """How an attachment reads where its bytes are not sent: "[image: image/png, 12 kB]"
    (with its file name when it has one: "[file report.pdf: application/pdf, 1.2 MB]")."""
    name = f" {att.name}" if att.name else ""
    return f"[{att.kind}{name}: {att.media_type}, {size_text(att.size)}]"


def size_text(size: int) -> str:
    """A size for people: "512 B", "12 kB", "1.2 MB" (powers of 1,000)."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.0f} kB" if size >= 10_000 else f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def placeholder_text(parts: Iterable[Part]) -> str:
    """`parts` as text alone, each attachment as its `placeholder`, joined by blank lines."""
    return "\n\n".join(p.text if isinstance(p, TextPart) else placeholder(p) for p in parts)


__all__ = ["Attachment", "Part", "TextPart", "attachments_of", "placeholder", "placeholder_text", "size_text",
           "text_of"]
