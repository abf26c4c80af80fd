"""The writer thread's side of streamed contexts (`SQLiteStorage.get_context`): each part of a
context is a job the writer queues for itself (`_Part`), run only when no other job waits, so a
commit or a read never waits behind the rest of a context; a part can only be queued from the
writer thread (inside a job: `_next_job` finds it next). When the thread ends, every context
still streaming fails with `StorageClosed`, so no reader waits for ever.
"""

from __future__ import annotations

import queue
import sqlite3
from collections import deque
from collections.abc import Callable

from ...errors import StorageClosed
from ..joined import StreamedTexts
from ..writer import Job


class _Part(Job):
    """A part of a streamed context: nobody waits for it; its function hands its outcome to the
    readers of the texts it fills, and an error met before it ran (no connection) fails them."""

    __slots__ = ("texts",)

    def __init__(self, fn: Callable[[sqlite3.Connection], None], texts: StreamedTexts) -> None:
        self.fn, self.batch, self.result, self.error, self.texts = fn, None, None, None, texts

    def finish(self) -> None:
        if self.error is not None:
            self.texts.fail(self.error)


class ContextStreams:
    """Mixed into `SQLiteStorage` (a `WriterThread`): `_stream_part` is its `Schedule`."""

    path: str
    _closed: bool
    _queue: queue.SimpleQueue[Job | None]

    def _init_streams(self) -> None:
        self._streams: set[StreamedTexts] = set()  # contexts streaming in
        self._parts: deque[_Part] = deque()  # their next parts

    def _stream_part(self, part: Callable[[sqlite3.Connection], None] | None, texts: StreamedTexts) -> None:
        """On the writer thread only: queue the next `part` of a streamed context (None: it
        ended)."""
        if part is None:
            self._streams.discard(texts)
        elif self._closed:
            texts.fail(StorageClosed(f"Session file {self.path} is closed", location=self.path))
        else:
            self._streams.add(texts)
            self._parts.append(_Part(part, texts))

    def _next_job(self) -> Job | None:
        """The next job queued; a part of a streamed context only when none is (a reader of a
        text not arrived blocks its event loop, which then queues nothing)."""
        if self._parts:
            try:
                return self._queue.get_nowait()
            except queue.Empty:
                return self._parts.popleft()
        return self._queue.get()

    def _end_streams(self) -> None:
        """The writer thread ends: every context still streaming fails, its readers told."""
        streams, self._streams = self._streams, set()
        self._parts.clear()
        for texts in streams:
            texts.fail(StorageClosed(f"Session file {self.path} is closed", location=self.path))


__all__ = ["ContextStreams"]
