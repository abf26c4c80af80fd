"""Time for the silent-stream tests: it stands still until the stream's first text arrives, then
runs as real time.

A stream silence of 0.25 s bounds every wait of an attempt, the first ones included (connecting,
the SDK's first use: lazy imports, type building). On a loaded machine those alone can take
longer than 0.25 s of real time, and the attempt would time out before the text the test expects.
With the event loop's clock held (trio's `MockClock` at rate 0; on asyncio a loop whose `time()`
stands still) no wait can run out before `release()`; released once the first text was yielded,
the silent wait after it runs out after exactly `stream_silence` seconds, as in production.

    HELD = HeldTime()
    @pytest.mark.parametrize("anyio_backend", HELD.backends())
    async def test_x(server, anyio_backend):
        HELD.hold()
        ... collect_until_error(HELD.release_after_text(model.stream(request)))
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import trio.testing

from durable.models.protocol import TextDelta


class _HeldLoop(asyncio.SelectorEventLoop):
    def __init__(self, held: HeldTime) -> None:
        super().__init__()
        self._held = held

    def time(self) -> float:
        return self._held.asyncio_now()


class HeldTime:
    def __init__(self) -> None:
        self.trio_clock = trio.testing.MockClock(rate=0)
        self._frozen_at: float | None = 0.0  # asyncio: the time shown while held
        self._released = (0.0, 0.0)  # asyncio: (time shown, monotonic) at the release

    def backends(self) -> list[Any]:
        """The `anyio_backend` parameters: trio and asyncio, each on this clock."""
        return [("trio", {"clock": self.trio_clock}), ("asyncio", {"loop_factory": lambda: _HeldLoop(self)})]

    def asyncio_now(self) -> float:
        if self._frozen_at is not None:
            return self._frozen_at
        shown, at = self._released
        return shown + time.monotonic() - at

    def hold(self) -> None:
        """Stop time (from now on, until `release()`)."""
        self.trio_clock.rate = 0
        self._frozen_at = self.asyncio_now()

    def release(self) -> None:
        """Let time run as real time again, from where it stood."""
        self.trio_clock.rate = 1
        if self._frozen_at is not None:
            self._released = (self._frozen_at, time.monotonic())
            self._frozen_at = None

    async def release_after_text(self, stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """`stream`'s events; time is released once its first text delta was yielded."""
        async with aclosing(stream) as events:  # type: ignore[type-var]
            async for event in events:
                yield event
                if isinstance(event, TextDelta):
                    self.release()
