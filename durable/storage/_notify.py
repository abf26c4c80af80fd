"""Waking an async waiter from a foreign thread, on trio and on asyncio.

The SQLite writer thread finishes a job and must wake the task that waits for it without
blocking itself on the event loop (a blocking hand-off would serialise the writer behind the
loop and defeat group commit). Both backends have a non-blocking, thread-safe "call soon".
"""

from __future__ import annotations

from collections.abc import Callable

import sniffio

_last: tuple[object, Callable[[Callable[[], object]], None]] | None = None
"""The caller made for the loop last asked (its trio token or asyncio loop, the caller): every
commit job asks for one, and a process runs one loop at a time as a rule, so one entry saves
remaking it per commit."""


def thread_safe_caller(library: str | None = None) -> Callable[[Callable[[], object]], None]:
    """Return `call(fn)`, usable from any thread, that runs `fn()` soon in the current loop.
    `call.loop` identifies that loop (callers with the same one can be woken with one call).
    `library`: the current async library, when the caller already asked sniffio."""
    global _last
    if library is None:
        library = sniffio.current_async_library()
    if library == "trio":
        import trio

        token = trio.lowlevel.current_trio_token()
        last = _last
        if last is not None and last[0] is token:
            return last[1]

        def call_trio(fn: Callable[[], object]) -> None:
            try:
                token.run_sync_soon(fn)
            except trio.RunFinishedError:  # the waiter's loop is gone; nobody is left to wake
                pass

        call_trio.loop = token  # type: ignore[attr-defined]  # a tag on the function: callers of one loop share a wake-up
        _last = (token, call_trio)
        return call_trio
    import asyncio

    loop = asyncio.get_running_loop()
    last = _last
    if last is not None and last[0] is loop:
        return last[1]

    def call_asyncio(fn: Callable[[], object]) -> None:
        try:
            loop.call_soon_threadsafe(fn)
        except RuntimeError:  # loop closed
            pass

    call_asyncio.loop = loop  # type: ignore[attr-defined]  # a tag on the function, as for trio
    _last = (loop, call_asyncio)
    return call_asyncio
