"""Clocks for crash tests that cross process boundaries.

`FakeClock` (re-exported from the engine) moves only when a test says so; it lives in one
process. A test that kills real processes needs a clock that every process agrees on without
talking to each other: `ScaledClock` is wall time sped up. Its `now()` is a pure function of the
real time and of a shared `epoch`, so a durable deadline written by one process means the same
instant to the next one, and a 60-second backoff takes 60 ms at `scale=1000`.
"""

from __future__ import annotations

import time

import anyio


class ScaledClock:
    """Wall time running `scale` times faster from `epoch` (real seconds since 1970, the same in
    every process of a test). `now()` never goes back; `sleep_until` sleeps the real time left."""

    def __init__(self, scale: float = 1000.0, *, epoch: float | None = None) -> None:
        if scale <= 0:
            raise ValueError(f"scale must be positive, not {scale}")
        self.scale = scale
        self.epoch = time.time() if epoch is None else epoch

    def now(self) -> float:
        return self.epoch + (time.time() - self.epoch) * self.scale

    async def sleep_until(self, deadline: float, name: str = "") -> None:
        while True:
            left = deadline - self.now()
            if left <= 0:
                return
            await anyio.sleep(left / self.scale)
