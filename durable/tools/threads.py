"""Plain `def` tools: run in a worker thread, so that a blocking call (a file read, a subprocess,
a synchronous client library) never stalls the event loop and every other run of the process.

At most `TOOL_THREADS` plain tools run at once per event loop (one `CapacityLimiter`, apart from
anyio's default one); a call beyond that waits for a thread. A thread cannot be interrupted: when
the call is cancelled (an abort, an interrupt, its `timeout`, a clean close) it is *abandoned*:
the call is answered at once, the thread runs on to its end, and what it returns or raises is
discarded. Since it may still be running, an abandoned call counts as cut off in the middle of
its run whatever its replay policy (`durable.tasks.tool`: "... may have partially run", and not
run again on the next open). After a crash the thread died with the process, and the tool's
replay policy applies as for an async tool.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import anyio
    import anyio.lowlevel

# anyio is imported on first use: a program that only reads a session file (`durable inspect`)
# loads the tools of its task kinds, and never the event-loop libraries.

TOOL_THREADS = 16
"""How many plain `def` tool calls may run at once in one event loop."""

_LIMITER: anyio.lowlevel.RunVar[anyio.CapacityLimiter] | None = None


def tool_threads() -> anyio.CapacityLimiter:
    """The limiter of plain tools' worker threads in the current event loop."""
    global _LIMITER
    import anyio.lowlevel

    if _LIMITER is None:
        _LIMITER = anyio.lowlevel.RunVar("durable_tool_threads")
    try:
        return _LIMITER.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(TOOL_THREADS)
        _LIMITER.set(limiter)
        return limiter


def in_thread(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """An async function calling `fn` in a worker thread, abandoned (not waited for) when cancelled."""

    async def run(*args: Any, **kwargs: Any) -> Any:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), abandon_on_cancel=True,
                                              limiter=tool_threads())

    return run


__all__ = ["TOOL_THREADS", "in_thread", "tool_threads"]
