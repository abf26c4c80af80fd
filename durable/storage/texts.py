"""Long texts kept apart from their rows, so that a text that grows is written by what it gained.

A streamed answer is committed again and again as it grows (the partial in the live document, a
tool's output in its checkpoint and its slot); written inline, every commit would rewrite all of
it, quadratic in its length. Instead the long texts of a live row (`LONG`, `LIVE_LONG` characters,
in known places: `split_task`, `split_live`) are blanked in its JSON body and each kept as a
*stream* of pieces in a `texts` table keyed by `stream << SHIFT | piece`; the row's `texts` column
maps its fields to their streams (JSON). A store holds its streams in memory too
(`durable.storage.held.HeldTexts`, loaded when it opens): a text that only grew is written as its
last piece rewritten and new pieces after it (a page or so a commit, whatever the text's length; a
new stream, numbered after every other, is appended at the end of the table), anything else as a
new stream; a row written without a text lets its stream go (dropped once no row maps to it), and
a live document whose row did not change is not written again. Rows may map to one stream: a
running tool's output, its task's and its slot's, is one stream, written once. Reads join the
pieces back, by stream number. Only live rows keep texts apart: an ended task's are inline.

Imports the records and attrs only (the codec encodes the blanked records).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .._frozen import evolve
from ..records import Live, Task

LONG = 1024
"""Characters from which a text of a live task is kept in pieces apart from its row (its `SHARED`
output: from `LIVE_LONG`)."""
LIVE_LONG = 256
"""Characters from which a streamed text of a live document is kept apart: lower, so that a
partial answer soon grows by appends (`durable.storage.sqlite.partials`), not row rewrites."""
SHARED = "output"
"""The field of a live task that its live document's slot holds too (a running tool's output,
`durable.storage.held.kin`): kept apart from `LIVE_LONG` like the slot's, so that both map to one
stream from its start and its flushes grow it by appends, not by rewriting the task's row."""
PIECE = 3800
"""Characters a piece holds at most: an ASCII piece fills most of one page of SQLite's table."""
SHIFT = 20
"""A piece's key is `stream << SHIFT | n`: up to 2**20 pieces a text."""

Texts = dict[str, str]  # a row's long texts by field
Put = tuple[int, str]  # the key of a piece, its text
Drop = tuple[int, int]  # the first and last key of the pieces of a stream
Append = tuple[int, int, str]  # a stream, its length before (characters), what it gained

_STR_FIELDS: dict[type, tuple[str, ...]] = {}


def _str_fields(cls: type) -> tuple[str, ...]:
    found = _STR_FIELDS.get(cls)
    if found is None:
        found = _STR_FIELDS[cls] = tuple(f.name for f in attrs.fields(cls) if f.type in (str, "str"))
    return found


def storable(text: str) -> str:
    """`text` as it can be stored as UTF-8 in a piece or the side file: a surrogate pair (a
    character split over two stream deltas by a model's encoder) joined into its character, and a
    lone surrogate replaced by U+FFFD (a JSON body escapes them, raw pieces cannot hold them).
    Costs nothing for ASCII text (`str.isascii` reads a flag) and one encode otherwise."""
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def split_task(task: Task) -> tuple[Task, Texts]:
    """A live task with its checkpoint's long `str` fields blanked, and those texts."""
    cp = task.checkpoint
    if cp is None or task.terminal:
        return task, {}
    texts = {name: storable(value) for name in _str_fields(type(cp))
             if len(value := getattr(cp, name)) >= (LIVE_LONG if name == SHARED else LONG)}
    if not texts:
        return task, {}
    return evolve(task, checkpoint=evolve(cp, **dict.fromkeys(texts, ""))), texts


def split_live(live: Live) -> tuple[Live, Texts]:
    """A live document with its long partial answer, partial reasoning and tool outputs blanked,
    and those texts."""
    texts: Texts = {}
    gen = live.generation
    if gen is not None and len(gen.message.text) >= LIVE_LONG:
        texts["generation"] = storable(gen.message.text)
        gen = evolve(gen, message=evolve(gen.message, text=""))
    if gen is not None and len(gen.message.reasoning) >= LIVE_LONG:
        texts["reasoning"] = storable(gen.message.reasoning)
        gen = evolve(gen, message=evolve(gen.message, reasoning=""))
    slots = live.tools
    if any(len(s.output) >= LIVE_LONG for s in slots):
        texts.update((f"tool:{s.task_id}", storable(s.output)) for s in slots if len(s.output) >= LIVE_LONG)
        slots = tuple(evolve(s, output="") if len(s.output) >= LIVE_LONG else s for s in slots)
    if not texts:
        return live, {}
    return evolve(live, generation=gen, tools=slots), texts


def join_task(task: Task, texts: Mapping[str, str]) -> Task:
    cp = task.checkpoint
    return task if cp is None or not texts else evolve(task, checkpoint=evolve(cp, **texts))


def join_live(live: Live, texts: Mapping[str, str]) -> Live:
    gen = live.generation
    if "generation" in texts and gen is not None:
        gen = evolve(gen, message=evolve(gen.message, text=texts["generation"]))
    if "reasoning" in texts and gen is not None:
        gen = evolve(gen, message=evolve(gen.message, reasoning=texts["reasoning"]))
    slots = tuple(evolve(s, output=texts[f"tool:{s.task_id}"]) if f"tool:{s.task_id}" in texts else s
                  for s in live.tools)
    return evolve(live, generation=gen, tools=slots)


def join_json(body: Any, kind: str, texts: Mapping[str, str]) -> Any:
    """The same as `join_task`/`join_live` on a decoded JSON object (`kind` "task" or "live"),
    for readers that keep rows as JSON; a body without the places named is left as it is."""
    if kind == "task":
        cp = body.get("checkpoint") if isinstance(body, dict) else None
        if isinstance(cp, dict):
            cp.update((k, v) for k, v in texts.items() if k in cp)
        return body
    if isinstance(body, dict):
        msg = (body.get("generation") or {}).get("message") if isinstance(body.get("generation"), dict) else None
        if isinstance(msg, dict) and "generation" in texts:
            msg["text"] = texts["generation"]
        if isinstance(msg, dict) and "reasoning" in texts:
            msg["reasoning"] = texts["reasoning"]
        for slot in body.get("tools") or ():
            if isinstance(slot, dict) and f"tool:{slot.get('task_id')}" in texts:
                slot["output"] = texts[f"tool:{slot['task_id']}"]
    return body


def streams_of(column: str | None) -> dict[str, int]:
    """A row's `texts` column: its fields kept apart, and their streams."""
    return {str(k): int(v) for k, v in json.loads(column).items()} if column else {}


def column(streams: Mapping[str, int]) -> str | None:
    return json.dumps(dict(sorted(streams.items())), separators=(",", ":")) if streams else None


def bounds(stream: int) -> Drop:
    """The first and last key a stream's pieces may have."""
    return stream << SHIFT, ((stream + 1) << SHIFT) - 1


def stream_texts(pieces: Iterable[tuple[int, str]]) -> dict[int, str]:
    """Every stream's text, from all the pieces (key, text) in key order."""
    by_stream: dict[int, list[tuple[int, str]]] = {}
    for key, body in pieces:
        by_stream.setdefault(key >> SHIFT, []).append((key, body))
    return {number: join_pieces(found) for number, found in by_stream.items()}


def join_pieces(pieces: Iterable[tuple[int, str]]) -> str:
    """A stream's text from its pieces (key, text) in key order; a piece missing (damage) ends it."""
    parts = []
    for n, (key, body) in enumerate(pieces):
        if key & ((1 << SHIFT) - 1) != n:
            break
        parts.append(body)
    return "".join(parts)


class Stream:
    """One text kept apart: its stream number, its text, and how many of its characters the
    table holds (`stored`: fewer after appends kept beside the file, `HeldTexts.grew`)."""

    __slots__ = ("number", "stored", "text")

    def __init__(self, number: int, text: str, stored: int | None = None) -> None:
        self.number = number
        self.text = text
        self.stored = len(text) if stored is None else stored

    def puts(self) -> list[Put]:
        """The pieces to write so that the table holds the whole text: from the one holding its
        last stored character (or the first) on."""
        first, number, text = max(0, (self.stored - 1) // PIECE), self.number, self.text
        return [((number << SHIFT) | n, text[n * PIECE:(n + 1) * PIECE])
                for n in range(first, max(1, -(-len(text) // PIECE)))]


def row_digest(body: str, texts: str | None) -> bytes:
    """A live document's row, as `HeldTexts` remembers it: a 128-bit BLAKE2b digest (collisions,
    which would skip the write of a changed row, are out of reach)."""
    h = hashlib.blake2b(body.encode(), digest_size=16)
    if texts is not None:
        h.update(b"\x00" + texts.encode())
    return h.digest()


def task_digest(row: tuple[Any, ...], texts: str | None) -> bytes:
    """A task's row (`rows.EncodedTask`: its columns but its id, then `texts`), as `HeldTexts`
    remembers it."""
    return row_digest("\x00".join(map(str, row[1:7])), texts)
