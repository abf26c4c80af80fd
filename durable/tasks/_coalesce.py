"""Coalesced commits of streaming progress (partial answers, tool output).

At most one flush per `interval` seconds; with interval 0 every update is flushed before
`update()` returns. The first window starts with the coalescer (the stream), so an answer that
completes within one window is never flushed at all: its final commit carries it. The last update
is never left behind: a flusher commits it once the window opens again, so a crash loses at most
one window. Used inside a task group that the owner closes
when the stream ends (an in-flight flush still completes: commits are shielded).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio


class Coalescer:
    def __init__(self, interval: float, flush: Callable[[], Awaitable[None]]) -> None:
        self.interval = interval
        self._flush = flush
        self._dirty = False
        self._wake = anyio.Event()
        self._last = anyio.current_time()

    async def update(self) -> None:
        if self.interval <= 0:
            await self._flush()
            return
        self._dirty = True
        self._wake.set()

    async def run_flusher(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            wait = self._last + self.interval - anyio.current_time()
            if wait > 0:
                await anyio.sleep(wait)
            if self._dirty:
                self._dirty = False
                self._last = anyio.current_time()
                await self._flush()

    def settle(self) -> None:
        """Forget pending updates (the caller's next commit carries them)."""
        self._dirty = False
