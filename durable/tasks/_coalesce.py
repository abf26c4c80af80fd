"""Coalesced commits of streaming progress (partial answers, tool output), on one shared schedule.

With interval 0 every update is flushed before `update()` returns. Otherwise flushes happen only
at the ticks of a schedule shared by every stream of the process: the instants `k * interval` of
the event loop's clock (`anyio.current_time()`), for integer k. Every stream with the same
interval wakes at the same tick, so the flushes of many concurrent streams reach the store
together and go into one group commit: transactions per tick do not grow with the number of
streams, and a congested loop cannot make flushes more frequent (it only makes them later). The
schedule is the clock itself: no task owns it, nothing is registered, nothing outlives a stream.

- At most one flush per tick window (`interval`) per stream.
- The first window starts with the coalescer (the stream) and ends at the first tick at least
  `interval` after it: an answer that completes within `interval` is never flushed at all (its
  final commit carries it).
- The last update is never left behind: an update is flushed at the first tick at or after it
  (once the first window is over), so a crash loses at most one window of updates (at most the
  first window, between one and two intervals long, for updates made within it). Flushing a
  stream's first partial exactly `interval` after its first update instead (off the schedule,
  then the next tick) keeps that bound at one interval but measured about twice the flushes per
  turn at 1,000 concurrent conversations (benchmarks/conversations.py), so the first window is
  rounded up to a tick.

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
        self._flush = flush
        self._dirty = False
        self._wake = anyio.Event()
        # The last tick that had a flush of this stream; the first allowed tick ends the first window.
        self._last_tick = tick_at_or_after(anyio.current_time() + interval, interval) - 1 if interval > 0 else 0

    async def update(self) -> None:
        if self.interval <= 0:
            await self._flush()
            return
        self._dirty = True
        self._wake.set()

    async def run_flusher(self) -> None:
        interval = self.interval
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            tick = max(self._last_tick + 1, tick_at_or_after(anyio.current_time(), interval))
            await anyio.sleep_until(tick * interval)
            if self._dirty:
                self._dirty = False
                # A late wake (a congested loop) counts for the window it happens in, so the next
                # flush is at the next tick, with every other stream's.
                self._last_tick = max(tick, math.floor(anyio.current_time() / interval))
                await self._flush()

    def settle(self) -> None:
        """Forget pending updates (the caller's next commit carries them)."""
        self._dirty = False
