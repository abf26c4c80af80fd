"""Long JSON bodies of a session file stored compressed (SQLite schema 10): a streamed answer of
300 kB is written once more as its assistant entry (and an ended task's checkpoint), and text
compresses a few times over, so packing the long bodies cuts the bytes a turn writes.

A body (the codec's JSON text of a task, entry, submission or live document) of `PACK_FROM`
characters or more is stored as `z1:` + base64 of its UTF-8 deflated at level 1 (`pack`), when
that is at least a tenth smaller than its UTF-8 and it holds none of `MARKS`: the texts SQL looks
for inside stored bodies (an attachment in a context's totals, a hash a prune keeps), so that a
packed body never hides one. Only new writes of a SQLite store pack (`durable.storage.bodies`);
reads accept both: the codec's JSON starts with `{`, never `z1:`. Pieces of long texts
(`durable.storage.texts`) are any text and never packed.

Unpacking never raises: a packed body that does not unpack (damaged) is given as it is stored,
and the reader that decodes it names the row (`CorruptSession`), as for any other damage.
Imports nothing of durable but the texts searched for.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Sequence

from .joined import SEP
from .sweep import MARK as ATTACHMENT_REFERENCE

PACKED = "z1:"
"""The prefix of a packed body (the codec's JSON never starts with it)."""
PACK_FROM = 2048
"""Characters from which a body is packed (a shorter one gains a few hundred bytes at most)."""
_LEVEL = 1  # fast: a long answer's body is packed on the writer thread as it commits
ATTACHMENT_MARK = '{"type":"attachment"'
"""How the codec writes an image or a file in an entry's JSON text (no escaped string inside the
JSON can hold it): a text without it references none."""
MARKS = (ATTACHMENT_MARK, ATTACHMENT_REFERENCE)
"""What SQL looks for inside stored bodies (`instr`): a body holding one is stored plain. The
context totals count the entries holding `ATTACHMENT_MARK` (`durable.storage.sqlite.totals`, the
copies of a fork); a prune keeps every attachment whose hash follows `"sha256"` in a body it reads
(`durable.storage.sweep`), reading only the bodies that hold it."""


def pack(body: str) -> str:
    """`body` as stored: packed when it is long, holds no mark and packs to 90% of its UTF-8 or less."""
    if len(body) < PACK_FROM or any(mark in body for mark in MARKS):
        return body
    data = body.encode()  # the codec escapes a lone surrogate: its JSON is always UTF-8
    out = PACKED + base64.b64encode(zlib.compress(data, _LEVEL)).decode("ascii")
    return out if len(out) * 10 <= len(data) * 9 else body


def unpack(body: str) -> str:
    """A stored body as its JSON text: unpacked if packed; as it is when it does not unpack."""
    if not body.startswith(PACKED):
        return body
    try:
        return zlib.decompress(base64.b64decode(body[len(PACKED):], validate=True)).decode()
    except (binascii.Error, ValueError, zlib.error):  # damaged: the reader that decodes it says so
        return body


def unpack_joined(joined: str) -> str:
    """Bodies joined by `SEP` (`durable.storage.joined`) with each packed one unpacked: the same
    text when none is. A body that unpacks into a text holding `SEP` (damaged) stays packed, so
    the joined text still splits into as many bodies."""
    if not joined.startswith(PACKED) and SEP + PACKED not in joined:
        return joined
    bodies = joined.split(SEP)
    for i, body in enumerate(bodies):
        if body.startswith(PACKED) and SEP not in (text := unpack(body)):
            bodies[i] = text
    return SEP.join(bodies)


def unpack_all(bodies: Sequence[str]) -> Sequence[str]:
    """`unpack` of every body; the same sequence when none is packed."""
    if not any(body.startswith(PACKED) for body in bodies):
        return bodies
    return [unpack(body) for body in bodies]


__all__ = ["ATTACHMENT_MARK", "MARKS", "PACKED", "PACK_FROM", "pack", "unpack", "unpack_all", "unpack_joined"]
