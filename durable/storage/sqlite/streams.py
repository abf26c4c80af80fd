"""The writer thread's side of streamed contexts (`SQLiteStorage.get_context`): each part of a
context is a job the writer queues for itself (`_Part`), run only when no other job waits, so a
commit or a read never waits behind the rest of a context; a part can only be queued from the
writer thread (inside a job: `_next_job` finds it next). When the thread ends, every context
still streaming fails with `StorageClosed`, so no reader waits for ever. Other work nobody waits
for is queued the same way (`_when_idle`).
"""

from __future__ import annotations

import queue
import sqlite3
from collections import deque
from collections.abc import Callable

from ...errors import StorageClosed
from ..joined import StreamedTexts
from ..writer import Job


class _Idle(Job):
    """A job the writer queues for itself, run when no other job waits; nobody waits for it (an
    error it meets is dropped: its function says what it leaves undone)."""

    __slots__ = ()

    def __init__(self, fn: Callable[[sqlite3.Connection], None]) -> None:
        self.fn, self.batch, self.result, self.error = fn, None, None, None

    def finish(self) -> None:
        pass


class _Part(_Idle):
    """A part of a streamed context: its function hands its outcome to the readers of the texts
    it fills, and an error met before it ran (no connection) fails them."""

    __slots__ = ("texts",)

    def __init__(self, fn: Callable[[sqlite3.Connection], None], texts: StreamedTexts) -> None:
        super().__init__(fn)
        self.texts = texts

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
        self._parts: deque[_Idle] = deque()  # their next parts, and other work for when idle

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

    def _when_idle(self, fn: Callable[[sqlite3.Connection], None]) -> None:
        """On the writer thread only: run `fn(connection)` when no other job waits."""
        if not self._closed:
            self._parts.append(_Idle(fn))

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
