"""Texts kept as a store read them, joined in parts, and split one part at a time when one of its
texts is first read (`JoinedTexts`): a long model context is read as a few joined texts
(`durable.storage.sqlite.context`), and a request whose model never reads its messages (or reads
only some) does not pay for splitting every one of them.

A part's texts are joined by `SEP`, which no text holds (the store checks that a part holds as
many separators as it has texts, less one, before it gives one). Imports nothing of durable.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, compress, repeat
from typing import overload

SEP = "\x1e"
"""The separator of the texts of a part (a record separator: a JSON text never holds it raw)."""


class JoinedTexts(Sequence[str]):
    """A sequence of texts held as `parts`, each `counts[k]` texts joined by `SEP`. Reading a text
    splits its part once; `forget` drops a text the reader keeps in another form."""

    __slots__ = ("_len", "_parts", "_split", "_starts")

    def __init__(self, parts: Sequence[str], counts: Sequence[int]) -> None:
        self._parts: list[str] = list(parts)
        self._split: list[list[str] | None] = [None] * len(self._parts)
        self._starts = list(accumulate(counts, initial=0))
        self._len = self._starts.pop()

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

    def _part(self, k: int) -> list[str]:
        texts = self._split[k]
        if texts is None:
            texts = self._split[k] = self._parts[k].split(SEP)
            self._parts[k] = ""  # held once: split
        return texts

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
        k = bisect_right(self._starts, index) - 1
        self._part(k)[index - self._starts[k]] = ""


__all__ = ["SEP", "JoinedTexts"]
