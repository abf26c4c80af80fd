"""A conversation's model context in memory: append-only, decoded lazily, counted incrementally.

`Context` is the sequence of entries a conversation sends to its model (no compaction summary,
no entry never sent again). Loaded from the store, it holds the entries as stored (JSON text and
the estimated tokens written beside them, or the store's count and total of them): opening a long
conversation and counting its context decodes nothing, and an entry is decoded the first time it
is read (then kept decoded). A long context may still be streaming in from the store when the
first request is built and sent (`durable.storage.joined.StreamedTexts`): reading an entry that
has not arrived waits for it (and raises the store's error if it never comes). Entries
the engine commits are appended decoded. `tokens` is the running estimate of the whole context
(`durable.tokens.entry_tokens`), kept up to date by `append`, never recounted.

A `Context` only grows: a compaction or a refused commit gives the conversation a new one. So
`messages(n)` can hand a request a read-only `Messages` view of the first `n` entries instead
of a copy of the whole context, and that view never changes under it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress, islice, repeat
from typing import overload

from ..records import Attachment, Entry, StoredEntry, ToolResultEntry, UserEntry
from ..storage.joined import JoinedTexts, StreamedSeqs
from ..storage.packing import ATTACHMENT_MARK
from ..storage.protocol import RawContext
from ..tokens import entry_tokens, in_context

_MARK = ATTACHMENT_MARK


def _attachments(entry: Entry) -> tuple[Attachment, ...]:
    parts = entry.parts if isinstance(entry, (UserEntry, ToolResultEntry)) else ()
    return tuple(p for p in parts if isinstance(p, Attachment))


Decode = Callable[[int, str], StoredEntry]
"""Decodes the JSON text of the entry at a seq (raising `CorruptSession` naming it)."""


class Context(Sequence[StoredEntry]):
    """See the module docstring. Indexing gives `StoredEntry`s (decoding on first read)."""

    __slots__ = ("_decode", "_items", "_refs", "_scanned", "_seq_list", "_seqs", "_stored_seqs", "_texts", "tokens")

    def __init__(self, entries: Iterable[StoredEntry] = ()) -> None:
        # An entry; its JSON text until first read; or None: its text is `_texts[index]` until first read.
        self._items: list[StoredEntry | str | None] = list(entries)
        self._stored_seqs: Sequence[int] = ()  # the seqs of the texts the store gave (`_texts`)
        self._seq_list: Sequence[int] = ()  # the same, without waiting: for a text taken already
        self._seqs: list[int] = [e.seq for e in self._items if isinstance(e, StoredEntry)]  # then the others
        self._decode: Decode | None = None
        self.tokens = sum(entry_tokens(e.entry) for e in self._items if isinstance(e, StoredEntry))
        self._refs: list[tuple[int, Attachment]] = []  # (index, attachment) of the entries scanned so far
        self._scanned = 0
        # The texts the store gave, when it counted every one (the first entries, None in `_items`
        # until decoded): a `JoinedTexts` is split a part at a time, as its texts are read.
        self._texts: JoinedTexts | list[str] = []

    @classmethod
    def stored(cls, raw: RawContext, decode: Decode) -> Context:
        """A context of entries as the store gave them (`Storage.get_context`), kept as their
        text. When the store counted every row (`raw.tokens` is their total) this does no work
        per entry. Otherwise a row it could not count (an old file's row the migration could not
        read) is decoded now: to count it and leave it out if it is not sent, or to refuse it
        (`CorruptSession`) before any request holds it. Damage inside a row is found when the
        entry is first read (`CorruptSession` naming the entry, its conversation and the file)."""
        ctx = cls()
        ctx._decode = decode
        if isinstance(raw.tokens, int):
            ctx._texts = raw.bodies if isinstance(raw.bodies, JoinedTexts) else list(raw.bodies)
            ctx._items = [None] * len(raw.bodies)
            ctx._stored_seqs = raw.seqs
            ctx._seq_list = raw.seqs.texts.arrived_seqs if isinstance(raw.seqs, StreamedSeqs) else raw.seqs
            ctx.tokens = raw.tokens
            if raw.attachments == 0:  # none referenced: nothing to look for in the texts
                ctx._scanned = len(raw.bodies)
            return ctx
        items, seqs = ctx._items, ctx._seqs
        total = 0
        for seq, tokens, body in zip(raw.seqs, raw.tokens, raw.bodies, strict=True):
            if tokens is not None:
                items.append(body)
                seqs.append(seq)
                total += tokens
            else:
                stored = decode(seq, body)
                if in_context(stored.entry):
                    items.append(stored)
                    seqs.append(seq)
                    total += entry_tokens(stored.entry)
        ctx.tokens = total
        return ctx

    def append(self, stored: StoredEntry) -> None:
        self._items.append(stored)
        self._seqs.append(stored.seq)
        self.tokens += entry_tokens(stored.entry)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> StoredEntry: ...

    @overload
    def __getitem__(self, index: slice) -> list[StoredEntry]: ...

    def __getitem__(self, index: int | slice) -> StoredEntry | list[StoredEntry]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(len(self._items)))]
        item = self._items[index]
        return item if isinstance(item, StoredEntry) else self._at(index)

    def __iter__(self) -> Iterator[StoredEntry]:
        items = self._items
        for i in range(len(items)):  # by index: entries appended meanwhile are included
            item = items[i]
            yield item if isinstance(item, StoredEntry) else self._at(i)

    def _at(self, index: int) -> StoredEntry:
        item = self._items[index]
        if isinstance(item, StoredEntry):
            return item
        assert self._decode is not None, "only a context loaded from the store holds undecoded entries"
        if index < 0:
            index += len(self._items)
        if item is None:
            texts = self._texts
            if isinstance(texts, JoinedTexts):  # decoded and looked into for attachments: its text is not kept twice
                text = texts.take(index, index < self._scanned)
            else:
                text = texts[index]
                if index < self._scanned:
                    texts[index] = ""
            stored = self._decode(self._seq_list[index], text)
        else:
            stored = self._decode(self.seq_at(index), item)
        self._items[index] = stored
        return stored

    def attachments(self, n: int) -> list[Attachment]:
        """The images and files the first `n` entries reference, in order. Each entry is looked
        at once (the context only grows); one still held as text is decoded only when its text
        holds an attachment (the codec writes one as `{"type":"attachment"`, which no escaped
        string inside the JSON can contain)."""
        items, refs = self._items, self._refs
        start, texts = self._scanned, self._texts
        given = min(len(texts), len(items))
        if start < given:  # the store's texts, looked into without a Python step per entry
            if isinstance(texts, JoinedTexts):
                marked = texts.containing(_MARK, start)
            else:
                marked = list(compress(range(start, given), map(str.__contains__, islice(texts, start, given),
                                                                  repeat(_MARK))))
            for i in marked:
                if i < given:
                    refs += [(i, a) for a in _attachments(self._at(i).entry)]
            start = given
        for i in range(start, len(items)):
            item = items[i]
            if not isinstance(item, str) or _MARK in item:
                refs += [(i, a) for a in _attachments(self._at(i).entry)]
        self._scanned = len(items)
        return [a for i, a in refs if i < n]

    def seq_at(self, index: int) -> int:
        """The seq of the entry at `index`, without decoding it."""
        if index < 0:
            index += len(self._items)
        given = len(self._stored_seqs)
        return self._stored_seqs[index] if index < given else self._seqs[index - given]

    def messages(self, n: int, head: tuple[Entry, ...] = (), tail: tuple[Entry, ...] = ()) -> Messages:
        """The entries of the first `n` stored entries as a read-only view, after `head` and
        before `tail`."""
        return Messages(head, self, n, tail)

    def __repr__(self) -> str:
        decoded = sum(isinstance(i, StoredEntry) for i in self._items)
        return f"<Context of {len(self._items)} entries ({decoded} decoded), ~{self.tokens} tokens>"


class Messages(Sequence[Entry]):
    """A request's messages: `head`, the entries of the first `n` of a `Context`, then `tail`.
    Read-only; equal to any sequence of the same entries (a tuple, a list); slices are tuples."""

    __slots__ = ("_context", "_head", "_n", "_tail")

    def __init__(self, head: tuple[Entry, ...], context: Context, n: int, tail: tuple[Entry, ...]) -> None:
        self._head = head
        self._context = context
        self._n = n
        self._tail = tail

    def __len__(self) -> int:
        return len(self._head) + self._n + len(self._tail)

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Entry, ...]: ...

    def __getitem__(self, index: int | slice) -> Entry | tuple[Entry, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("message index out of range")
        if index < len(self._head):
            return self._head[index]
        index -= len(self._head)
        if index < self._n:
            return self._context[index].entry
        return self._tail[index - self._n]

    def __iter__(self) -> Iterator[Entry]:
        yield from self._head
        context = self._context
        for i in range(self._n):
            yield context[i].entry
        yield from self._tail

    def attachments(self) -> list[Attachment]:
        """The images and files the messages reference, in order (`Context.attachments`)."""
        return [*(a for e in self._head for a in _attachments(e)), *self._context.attachments(self._n),
                *(a for e in self._tail for a in _attachments(e))]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable as they are

    def __repr__(self) -> str:
        return f"Messages({tuple(self)!r})"


__all__ = ["Context", "Messages"]
