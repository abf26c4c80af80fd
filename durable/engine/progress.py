"""Coalesced commits of streaming progress (partial answers, tool output): one shared schedule,
kept by one task per harness.

With interval 0 every update is flushed before `update()` returns. Otherwise flushes happen only
at the ticks `k * interval / 2` of the event loop's clock, shared by every stream of the process,
so the flushes of concurrent streams reach the store together (one group commit per tick) and a
congested loop makes flushes later, never more frequent:

- at most one flush per `interval` per stream (after a flush at a tick, the next is two ticks on);
- the first flush is at the first tick at least `interval / 2` after the stream started (an
  answer done within half an interval is never flushed: its final commit carries it);
- the last update is flushed at the first tick the two rules allow, so a crash loses at most
  `interval` of updates (docs/spec.md §2).

The harness runs `ProgressFlusher.run` in its task group; a stream (`ProgressFlusher.stream`, an
async context manager around the streaming loop) only marks itself dirty and queues itself at
its due tick, costing no task of its own. Leaving the stream waits for its flush in flight, so a
flush never lands after the stream's final commit; a flush that fails cancels the stream's body
and its error is raised where the stream is left.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Awaitable, Callable
from types import TracebackType

import anyio
import anyio.abc

from .._loop import loop


def tick_at_or_after(t: float, interval: float) -> int:
    """The index k of the first tick `k * interval` that is not before `t`."""
    k = math.ceil(t / interval)
    while k * interval < t:  # float rounding
        k += 1
    while (k - 1) * interval >= t:
        k -= 1
    return k


class ProgressFlusher:
    """The flush schedule of one harness (see the module docstring)."""

    def __init__(self) -> None:
        self._loop = loop()  # made inside the event loop: its primitives looked up once (`durable._loop`)
        self._due: list[tuple[float, int, int, Stream]] = []  # (instant, order, tick, stream)
        self._order = itertools.count()
        self._sleep: anyio.CancelScope | None = None

    def stream(self, interval: float, flush: Callable[[], Awaitable[None]]) -> Stream:
        """A stream whose progress `flush` commits, at most once per `interval` seconds (0: on
        every update). Use it as `async with flusher.stream(...) as s: ... await s.update()`."""
        return Stream(self, interval, flush)

    async def run(self) -> None:
        """The schedule's task: runs until cancelled (the harness's task group)."""
        async with anyio.create_task_group() as tg:
            try:
                while True:
                    due = self._due
                    now = self._loop.current_time()
                    while due and due[0][0] <= now:
                        _, _, tick, stream = heapq.heappop(due)
                        stream._on_tick(tick, tg)
                    with self._loop.cancel_scope(deadline=due[0][0] if due else math.inf) as self._sleep:
                        await self._loop.sleep_forever()
                    self._sleep = None
            finally:
                self._sleep = None

    def _queue(self, tick: int, step: float, stream: Stream) -> None:
        at = tick * step
        heapq.heappush(self._due, (at, next(self._order), tick, stream))
        sleep = self._sleep
        if sleep is not None and at < sleep.deadline:
            sleep.deadline = at


class Stream:
    """One stream's progress on the shared schedule; made by `ProgressFlusher.stream`."""

    __slots__ = ("_closed", "_dirty", "_done", "_error", "_flush", "_flusher", "_flushing", "_next", "_queued",
                 "_scope", "_step", "interval")

    def __init__(self, flusher: ProgressFlusher, interval: float, flush: Callable[[], Awaitable[None]]) -> None:
        self.interval = interval
        self._flusher = flusher
        self._flush = flush
        self._step = interval / 2
        self._dirty = False
        self._queued = False
        self._flushing = False
        self._closed = False
        self._done: anyio.Event | None = None
        self._error: BaseException | None = None
        self._scope: anyio.CancelScope | None = None
        # The first tick a flush of this stream may happen at (half an interval after its start).
        self._next = tick_at_or_after(flusher._loop.current_time() + self._step, self._step) if interval > 0 else 0

    async def __aenter__(self) -> Stream:
        if self.interval > 0:
            self._scope = self._flusher._loop.cancel_scope()
            self._scope.__enter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool:
        # Pending updates are forgotten: the caller's next commit carries them.
        self._closed = True
        self._dirty = False
        scope, self._scope = self._scope, None
        if self._flushing:
            with anyio.CancelScope(shield=True):
                self._done = anyio.Event()
                await self._done.wait()
        suppressed = bool(scope.__exit__(exc_type, exc, tb)) if scope is not None else False
        if self._error is not None:
            raise self._error
        return suppressed

    async def update(self) -> None:
        """Progress was made: flush it now (interval 0) or at its due tick."""
        if self.interval <= 0:
            await self._flush()
            return
        self._dirty = True
        if not self._queued and not self._flushing and not self._closed:
            self._enqueue()

    def _enqueue(self) -> None:
        self._queued = True
        step = self._step
        self._flusher._queue(max(self._next, tick_at_or_after(self._flusher._loop.current_time(), step)), step, self)

    def _on_tick(self, tick: int, tg: anyio.abc.TaskGroup) -> None:
        self._queued = False
        if self._closed or not self._dirty:
            return
        self._dirty = False
        # A late wake (a congested loop) counts for the tick it happens in, so the next flush is
        # on the shared schedule, with every other stream's.
        self._next = max(tick, math.floor(self._flusher._loop.current_time() / self._step)) + 2
        self._flushing = True
        tg.start_soon(self._run_flush)

    async def _run_flush(self) -> None:
        try:
            await self._flush()
        except Exception as exc:  # noqa: BLE001 - raised in the stream's own task, where it is left
            self._error = exc
            if self._scope is not None:
                self._scope.cancel()
        finally:
            self._flushing = False
            if self._done is not None:
                self._done.set()
            elif self._dirty and not self._closed and self._error is None:
                self._enqueue()


__all__ = ["ProgressFlusher", "Stream", "tick_at_or_after"]
