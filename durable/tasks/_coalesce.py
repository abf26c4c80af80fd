"""Coalesced commits of streaming progress (partial answers, tool output), on one shared schedule.

With interval 0 every update is flushed before `update()` returns. Otherwise flushes happen only
at the ticks of a schedule shared by every stream of the process: the instants `k * interval / 2`
of the event loop's clock (`anyio.current_time()`), for integer k. Every stream with the same
interval wakes at the same ticks, so the flushes of many concurrent streams reach the store
together and go into one group commit: transactions per tick do not grow with the number of
streams, and a congested loop cannot make flushes more frequent (it only makes them later). The
schedule is the clock itself: no task owns it, nothing is registered, nothing outlives a stream.

- At most one flush per `interval` per stream: after a flush at a tick, the stream's next one is
  two ticks later at the earliest.
- The first flush is at the first tick at least `interval / 2` after the stream started: an
  answer that completes within half an interval is never flushed at all (its final commit
  carries it).
- The last update is never left behind: an update is flushed at the first tick at or after it
  that the two rules above allow, so a crash loses at most `interval` of updates (docs/spec.md §2).

Why half-interval ticks: on ticks `k * interval` the first window would last between one and two
intervals (or the first flush would fall off the schedule); on half-interval ticks every bound
above holds and the streams still share their flush instants (benchmarks/conversations.py).

Used inside a task group that the owner closes when the stream ends, after `settle()` (an
in-flight flush still completes: commits are shielded), so a flush never lands after the
stream's own final commit.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

import anyio


def tick_at_or_after(t: float, interval: float) -> int:
    """The index k of the first tick `k * interval` that is not before `t`."""
    k = math.ceil(t / interval)
    while k * interval < t:  # float rounding
        k += 1
    while (k - 1) * interval >= t:
        k -= 1
    return k


class Coalescer:
    def __init__(self, interval: float, flush: Callable[[], Awaitable[None]]) -> None:
        self.interval = interval
        self._tick = interval / 2
        self._flush = flush
        self._dirty = False
        self._wake = anyio.Event()
        # The first tick a flush of this stream may happen at (half an interval after its start).
        self._next = tick_at_or_after(anyio.current_time() + self._tick, self._tick) if interval > 0 else 0

    async def update(self) -> None:
        if self.interval <= 0:
            await self._flush()
            return
        self._dirty = True
        self._wake.set()

    async def run_flusher(self) -> None:
        step = self._tick
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            tick = max(self._next, tick_at_or_after(anyio.current_time(), step))
            await anyio.sleep_until(tick * step)
            if self._dirty:
                self._dirty = False
                # A late wake (a congested loop) counts for the tick it happens in, so the next
                # flush is on the shared schedule, with every other stream's.
                self._next = max(tick, math.floor(anyio.current_time() / step)) + 2
                await self._flush()

    def settle(self) -> None:
        """Forget pending updates (the caller's next commit carries them)."""
        self._dirty = False
