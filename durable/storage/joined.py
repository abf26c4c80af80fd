"""Texts kept as a store read them, joined in parts, and split one part at a time when one of its
texts is first read (`JoinedTexts`): a long model context is read as a few joined texts
(`durable.storage.sqlite.context`), and a request whose model never reads its messages (or reads
only some) does not pay for splitting every one of them. `StreamedTexts`: the same, its parts
still arriving from the store's writer thread while the first request is built and sent; a text
read before its part arrived is waited for.

A part's texts are joined by `SEP`, which no text holds (the store checks that a part holds as
many separators as it has texts, less one, before it gives one). Imports nothing of durable.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, compress, repeat
from typing import Any, overload

SEP = "\x1e"
"""The separator of the texts of a part (a record separator: a JSON text never holds it raw)."""


class JoinedTexts(Sequence[str]):
    """A sequence of texts held as `parts`, each `counts[k]` texts joined by `SEP`. Reading a text
    splits its part once; `forget` drops a text the reader keeps in another form."""

    __slots__ = ("_filled", "_len", "_parts", "_split", "_starts")

    def __init__(self, parts: Sequence[str], counts: Sequence[int]) -> None:
        self._parts: list[str] = list(parts)
        self._split: list[list[str] | None] = [None] * len(self._parts)
        self._starts = list(accumulate(counts, initial=0))
        self._len = self._filled = self._starts.pop()  # `_filled`: how many have arrived (all)

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._len))]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("text index out of range")
        k = bisect_right(self._starts, index) - 1
        return self._part(k)[index - self._starts[k]]

    def __iter__(self) -> Iterator[str]:
        for k in range(len(self._parts)):
            yield from self._part(k)

    def _wait(self, index: int) -> None:
        raise IndexError("text index out of range")

    def _part(self, k: int) -> list[str]:
        texts = self._split[k]
        if texts is None:
            texts = self._split[k] = self._parts[k].split(SEP)
            self._parts[k] = ""  # held once: split
        return texts

    def first_starts_with(self, prefix: str) -> bool:
        """Whether there is a first text and it starts with `prefix` (which holds no `SEP`),
        without splitting its part."""
        if not self._len:
            return False
        if not self._filled:
            self._wait(0)
        texts = self._split[0]
        return (texts[0] if texts is not None else self._parts[0]).startswith(prefix)

    def containing(self, mark: str, start: int = 0) -> list[int]:
        """The indexes from `start` of the texts that hold `mark`, splitting only the parts that
        hold it."""
        found: list[int] = []
        for k, first in enumerate(self._starts):
            texts = self._split[k]
            if texts is None:
                if mark not in self._parts[k]:
                    continue
                texts = self._part(k)
            found += compress(range(first, first + len(texts)), map(str.__contains__, texts, repeat(mark)))
        return [i for i in found if i >= start]

    def forget(self, index: int) -> None:
        """Drop the text at `index` (read, and kept by the reader in another form): it reads as ""
        from now on."""
        self.take(index, True)

    def take(self, index: int, forget: bool) -> str:
        """The text at `index` (0 <= index < len), dropped (`forget`) as it is given."""
        if index >= self._filled:
            self._wait(index)
        k = bisect_right(self._starts, index) - 1
        texts = self._split[k] or self._part(k)
        i = index - self._starts[k]
        text = texts[i]
        if forget:
            texts[i] = ""
        return text




class StreamedTexts(JoinedTexts):
    """`JoinedTexts` of a known number of texts whose parts arrive from another thread (a store's
    writer: `add`, then `finish` or `fail`) while they are read. Reading a text that has not
    arrived waits for it, blocking the reading thread (which holds no lock the writer needs); a
    stream that failed raises its error to every reader of a text it did not give. `seq(i)`: the
    seq of the i-th text, waited for the same way."""

    __slots__ = ("_cond", "_done", "_error", "_seqs")

    def __init__(self, total: int) -> None:
        super().__init__((), ())
        self._len = total
        self._filled = 0
        self._seqs = array("q")  # machine integers, not an int object each (see `context._read`)
        self._done = False
        self._error: BaseException | None = None
        self._cond = threading.Condition()

    # ---------------------------------------------------------------- the writer's side

    def add(self, joined: str | list[str], count: int, seqs: Sequence[int]) -> None:
        """A part: `count` texts, joined by `SEP` (or already split), and their seqs."""
        with self._cond:
            self._parts.append(joined if isinstance(joined, str) else "")
            self._split.append(None if isinstance(joined, str) else joined)
            self._seqs.extend(seqs)
            self._starts.append(self._filled)
            self._filled += count  # last: a reader that sees it finds the part whole
            self._cond.notify_all()

    def finish(self) -> None:
        with self._cond:
            self._done = True
            self._cond.notify_all()

    def fail(self, error: BaseException) -> None:
        with self._cond:
            if not self._done:
                self._error, self._done = error, True
            self._cond.notify_all()

    @property
    def done(self) -> bool:
        return self._done

    @property
    def given(self) -> int:
        """How many texts arrived so far."""
        return self._filled

    @property
    def arrived_seqs(self) -> Sequence[int]:
        """The seqs of the texts arrived so far (the list grows as parts arrive)."""
        return self._seqs

    # ---------------------------------------------------------------- the reader's side

    def _wait(self, index: int) -> None:
        if index < self._filled:
            return
        with self._cond:
            while index >= self._filled and not self._done:
                self._cond.wait()
        if index >= self._filled:
            raise self._error or IndexError("text index out of range")

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, int):
            self._wait(index + self._len if index < 0 else index)
        return super().__getitem__(index)

    def __iter__(self) -> Iterator[str]:
        for i in range(self._len):
            yield self[i]

    def containing(self, mark: str, start: int = 0) -> list[int]:
        if self._len:
            self._wait(self._len - 1)
        return super().containing(mark, start)

    def seq(self, index: int) -> int:
        if index >= self._filled:
            self._wait(index)
        return self._seqs[index]


class StreamedSeqs(Sequence[int]):
    """The seqs of a `StreamedTexts`, each waited for as its text is."""

    __slots__ = ("texts",)

    def __init__(self, texts: StreamedTexts) -> None:
        self.texts = texts

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        texts = self.texts
        if isinstance(index, int) and 0 <= index < texts._filled:  # arrived: no wait
            return texts._seqs[index]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return texts.seq(index + len(self) if index < 0 else index)


def compact_seqs(seqs: Sequence[int]) -> Sequence[int]:
    """The seqs of a context as read (increasing), held without an int object each: a `range` when
    they follow each other (the usual case), else machine integers. A context is read on each turn
    of a conversation whose context was dropped while idle (`Settings.keep_idle_context`), and a
    list of ints as long as the conversation, held for the turn, made Python's allocator take
    pools that the objects made meanwhile kept: the resident set grew with the length of the
    conversations run (issue 29)."""
    if seqs and seqs[-1] - seqs[0] + 1 == len(seqs):
        return range(seqs[0], seqs[-1] + 1)
    return seqs if isinstance(seqs, array) else array("q", seqs)


__all__ = ["SEP", "JoinedTexts", "StreamedSeqs", "StreamedTexts", "compact_seqs"]
