"""The injected clock: wall time for durable deadlines, and named timers that wait for them.

Durable deadlines (retry backoffs, poll times, client tool deadlines) are absolute wall-clock
seconds stored in the file, so they survive a restart. `SystemClock` sleeps on the event loop
until the deadline. `FakeClock` never moves by itself: tests `advance()` it, and every timer has
a name so a test can wait until the harness is parked on the timer it expects.
"""

from __future__ import annotations

import itertools
import time
from typing import Protocol

import anyio


class Clock(Protocol):
    """What the harness asks of a clock: wall time in seconds (`now`), and a named, cancellable
    wait until a deadline. Durable deadlines are stored as `now()` values, so a clock must agree
    with the one the file was written with (wall time) across restarts."""

    def now(self) -> float: ...

    async def sleep_until(self, deadline: float, name: str = "") -> None:
        """Return once `now() >= deadline`. Cancellable."""
        ...


class SystemClock:
    """The real clock: `time.time()`, and event-loop sleeps until the deadline. The default."""

    def now(self) -> float:
        return time.time()

    async def sleep_until(self, deadline: float, name: str = "") -> None:
        while True:
            delay = deadline - time.time()
            if delay <= 0:
                return
            await anyio.sleep(delay)


class FakeClock:
    """A clock that moves only when told. `timers` lists (name, deadline) of parked sleepers."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = start
        self._changed = anyio.Event()
        self.timers: dict[int, tuple[str, float]] = {}
        self._parked = anyio.Event()
        self._keys = itertools.count()

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self.set(self._now + seconds)

    def set(self, when: float) -> None:
        self._now = when
        self._changed.set()
        self._changed = anyio.Event()

    async def sleep_until(self, deadline: float, name: str = "") -> None:
        key = next(self._keys)
        try:
            while self._now < deadline:
                self.timers[key] = (name, deadline)
                self._parked.set()
                self._parked = anyio.Event()
                await self._changed.wait()
        finally:
            self.timers.pop(key, None)

    async def wait_for_timer(self, name: str | None = None) -> float:
        """Wait until some task sleeps on a timer (named `name`, if given) that has not fired yet
        (its deadline is after `now()`); return its deadline."""
        while True:
            for timer_name, deadline in list(self.timers.values()):
                if (name is None or timer_name == name) and deadline > self._now:
                    return deadline
            await self._parked.wait()
