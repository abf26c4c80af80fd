"""Images and files as the host and tools hand them in: `durable.Image` and `durable.File`, and
the one way an input or a tool's return value becomes stored parts (`content_parts`).

`Image(path_or_bytes, media_type=None)` and `File(...)` read a path when made (a path that cannot
be read is `AttachmentError` naming it) and tell the media type from the bytes (PNG, JPEG, GIF,
WebP, PDF) or else from the file's name; one that cannot be told, or an `Image` of a type that is
not an image, is `AttachmentError` naming the file. `content_parts` checks each against
`settings.max_attachment_bytes` (`AttachmentTooLarge`, naming the file and the limit) before
anything is committed, and returns the parts to store with the bytes to write once, by sha256.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import ClassVar, Literal

from .errors import AttachmentError, AttachmentTooLarge
from .records.content import Attachment, Part, TextPart, size_text, text_of

Blobs = dict[str, tuple[str, bytes]]
"""Bytes to store, by sha256: (media type, bytes)."""
Parts = tuple[str, tuple[Part, ...], Blobs]
"""An input or a result as `content_parts` makes it: its text, its parts, the bytes to store."""

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)


def guess_media_type(data: bytes, name: str | None) -> str | None:
    """The media type of `data`, from its first bytes, else from the file `name`; None: unknown."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if name is not None:
        import mimetypes  # on first use: `import durable` stays light

        found, _ = mimetypes.guess_type(name, strict=False)
        if found is not None:
            return found
    return None


class Content:
    """An image or a file to send (see `Image`, `File`): its bytes (`data`), `media_type`, the
    file `name` it was read from (None for bytes) and `sha256`, the hex digest of the bytes."""

    kind: ClassVar[Literal["image", "file"]]
    __slots__ = ("data", "media_type", "name", "sha256")

    def __init__(self, source: str | os.PathLike[str] | bytes, media_type: str | None = None) -> None:
        what = type(self).__name__
        if isinstance(source, (bytes, bytearray, memoryview)):
            data, name = bytes(source), None
        elif isinstance(source, (str, os.PathLike)):
            name = os.fspath(source)
            try:
                with open(name, "rb") as f:
                    data = f.read()
            except OSError as exc:
                raise AttachmentError(f"{what} {name!r} cannot be read: {exc.strerror or exc}") from None
        else:
            raise AttachmentError(f"{what} takes a path or bytes, not {type(source).__name__}")
        if media_type is None:
            media_type = guess_media_type(data, name)
            if media_type is None:
                raise AttachmentError(f"The media type of the {self._named(name)} is not known: pass media_type=")
        if not isinstance(media_type, str) or "/" not in media_type:
            raise AttachmentError(f"The {self._named(name)} has the media type {media_type!r}, not a type/subtype")
        if self.kind == "image" and not media_type.startswith("image/"):
            raise AttachmentError(f"The {self._named(name)} is {media_type}, not an image: use durable.File")
        self.data = data
        self.media_type = media_type
        self.name = name
        import hashlib  # imported when an attachment is made, not with durable

        self.sha256 = hashlib.sha256(data).hexdigest()

    def _named(self, name: str | None) -> str:
        what = type(self).__name__.lower()
        return f"{what} {name!r}" if name is not None else f"{what} given as bytes"

    @property
    def described(self) -> str:
        """How messages name it: "image 'shot.png'", "file given as bytes"."""
        return self._named(self.name)

    def attachment(self) -> Attachment:
        """The stored reference to it."""
        name = os.path.basename(self.name) if self.name is not None else None
        return Attachment(self.kind, self.sha256, self.media_type, len(self.data), name)

    def __repr__(self) -> str:
        source = repr(self.name) if self.name is not None else f"<{len(self.data)} bytes>"
        return f"{type(self).__name__}({source}, media_type={self.media_type!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Content)
        return (self.sha256, self.media_type, self.name) == (other.sha256, other.media_type, other.name)

    def __hash__(self) -> int:
        return hash((type(self), self.sha256, self.media_type, self.name))


class Image(Content):
    """An image to send to the model: `Image("shot.png")`, `Image(png_bytes)`,
    `Image(data, media_type="image/webp")`. See the module docstring for its errors."""

    kind = "image"
    __slots__ = ()


class File(Content):
    """A file to send to the model (a PDF, a text file): `File("report.pdf")`,
    `File(data, media_type="application/pdf")`. See the module docstring for its errors."""

    kind = "file"
    __slots__ = ()


def has_content(value: object) -> bool:
    """Whether `value` is an `Image`/`File` or a list or tuple holding one (a tool's return value
    then becomes parts)."""
    if isinstance(value, Content):
        return True
    return isinstance(value, (list, tuple)) and any(isinstance(v, Content) for v in value)


def content_parts(value: str | Content | Sequence[str | Content], where: str, limit: int) -> Parts:
    """An input or a tool's return value as (its text, its parts, the bytes to store by sha256).
    A plain string has no parts. `where` ("an input for conversation 'root'", "tool shot") names
    it in errors: `AttachmentError` for a part that is not a str, an `Image` or a `File`;
    `AttachmentTooLarge` for one over `limit` bytes."""
    if isinstance(value, str):
        return value, (), {}
    items = [value] if isinstance(value, Content) else list(value)
    parts: list[Part] = []
    blobs: Blobs = {}
    for item in items:
        if isinstance(item, str):
            parts.append(TextPart(item))
        elif isinstance(item, Content):
            if len(item.data) > limit:
                raise AttachmentTooLarge(
                    f"The {item.described} in {where} is {size_text(len(item.data))} ({len(item.data)} bytes), over "
                    f"the limit of {size_text(limit)} (settings.max_attachment_bytes = {limit})")
            parts.append(item.attachment())
            blobs[item.sha256] = (item.media_type, item.data)
        else:
            raise AttachmentError(f"A part of {where} is a {type(item).__name__}: parts are str, durable.Image or "
                                  f"durable.File")
    return text_of(parts), tuple(parts), blobs


__all__ = ["Blobs", "Content", "File", "Image", "Parts", "content_parts", "guess_media_type", "has_content"]
