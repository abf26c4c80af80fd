"""The event loop's primitives that every step calls, looked up once per run instead of per call.

On trio, each call of `anyio.current_time()`, `anyio.CancelScope()`, `anyio.move_on_after()`,
`anyio.sleep_forever()` or `anyio.lowlevel.cancel_shielded_checkpoint()` first asks sniffio which
library runs the loop and finds anyio's backend module for it (four calls), then goes through
anyio's wrapper to trio's own.
An object that lives within one run of the loop (a harness, an open store) calls `loop()` once,
inside the loop, and keeps what it returns: trio's own functions on trio (what anyio's trio backend
calls, and its cancel scopes are trio's), anyio's otherwise. Imports anyio and sniffio only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import anyio
import anyio.lowlevel
import sniffio


class Loop(NamedTuple):
    current_time: Callable[[], float]
    cancel_scope: Callable[..., Any]  # `(deadline=, shield=)`: a scope with anyio.CancelScope's API
    move_on_after: Callable[[float], Any]  # a scope with `deadline`, `cancel_called`, `cancelled_caught`
    cancel_shielded_checkpoint: Callable[[], Awaitable[None]]
    sleep_forever: Callable[[], Awaitable[None]]


_ANYIO = Loop(anyio.current_time, anyio.CancelScope, anyio.move_on_after, anyio.lowlevel.cancel_shielded_checkpoint,
              anyio.sleep_forever)


def loop() -> Loop:
    """The primitives of the event loop running now (call it inside the loop)."""
    try:
        library = sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        return _ANYIO
    if library != "trio":
        return _ANYIO
    import trio

    return Loop(trio.current_time, trio.CancelScope, trio.move_on_after, trio.lowlevel.cancel_shielded_checkpoint,
                trio.sleep_forever)


__all__ = ["Loop", "loop"]
