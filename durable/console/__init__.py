"""`durable console`: a web page to watch sessions live and decide tool calls waiting for approval.

Standalone, `durable console PATH...` reads session files other processes own (read-only, as
`durable watch` does; a decision goes into the file's inbox, which its owner applies) and serves
them on 127.0.0.1 with a random token in the printed URL; `--dsn DSN --space PATTERN` adds the
PostgreSQL session spaces matching PATTERN (`spaces_app`; decisions through the space's inbox).
Embedded, `app(h)` is an ASGI app (Starlette) for a running harness of this process, to mount or
serve (`serve`, with Hypercorn, on trio or asyncio); its token is `app(h).state.token`. The page
is plain HTML, CSS and a little JavaScript in `durable/console/static`, kept live by server-sent
events; everything a model, a tool or a user wrote is shown as text. Needs the `console` extra (starlette, hypercorn).
See `durable.console.web` for the routes and the rules that keep it safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from .sources import FileSource, HarnessSource, Source
from .spaces import Spaces, SpaceSource
from .web import make_app


def app(h: Any, *, token: str | None = None, name: str | None = None) -> Any:
    """The console of the running harness `h`, as an ASGI app (a Starlette app); decisions go
    through `h.approve` / `h.deny`. `token`: default a random one, at `.state.token`."""
    return make_app([HarnessSource(h, name)], token=token)


def files_app(paths: Sequence[str], *, token: str | None = None, key: bytes | str | None = None) -> Any:
    """The console of the session files at `paths` (owned by other processes, or by none);
    `key`: the key of those that are encrypted (`WrongKey` naming the file without it)."""
    return make_app([FileSource(p, key=key) for p in paths], token=token)


def spaces_app(dsn: str, pattern: str = "%", *, token: str | None = None) -> Any:
    """The console of the PostgreSQL session spaces whose name matches the SQL LIKE `pattern` on
    the server at `dsn` (owned by other processes, or by none; `durable.console.spaces`)."""
    spaces = Spaces(dsn, pattern)
    spaces.refresh_sync()
    return make_app(spaces, token=token, refresh=spaces.refresh)


async def serve(asgi: Any, *, host: str = "127.0.0.1", port: int = 0, ready: Any = None) -> None:
    """Serve `asgi` with Hypercorn on the running event loop (trio or asyncio) until cancelled.
    `ready(port)` is called once it listens (the port chosen when `port` is 0)."""
    from hypercorn.config import Config

    class Listening(Config):
        """Hypercorn serves the very socket made here. (Not `fd://N`: Hypercorn would make a
        second socket object owning N and close N when it stops, then the first one would close N
        again when freed, whatever N names by then: in an owner process, an SQLite connection's
        -shm, its WAL locks gone with it, or the session file.)"""

        def create_sockets(self) -> Any:
            return sockets

    config = Listening()
    config.bind = [f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 0.5
    sockets = Config.create_sockets(config)
    sock = sockets.insecure_sockets[0]
    with sock:  # closed here, once, whoever stops first (closing a closed socket object does nothing)
        sock.listen(config.backlog)  # listening before `ready` says so (Hypercorn listens again, harmlessly)
        if ready is not None:
            ready(sock.getsockname()[1])
        await _serve(asgi, config)


async def _serve(asgi: Any, config: Any) -> None:
    """Hypercorn on the running event loop, until cancelled."""
    import sniffio

    if sniffio.current_async_library() == "trio":
        from hypercorn.trio import serve as trio_serve

        await trio_serve(asgi, config, mode="asgi")
    else:  # Hypercorn on asyncio does not take a cancellation well: it is stopped by its trigger
        from hypercorn.asyncio import serve as asyncio_serve

        stop = anyio.Event()

        async def run() -> None:
            with anyio.CancelScope(shield=True):
                await asyncio_serve(asgi, config, mode="asgi", shutdown_trigger=stop.wait)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            try:
                await anyio.sleep_forever()
            finally:
                stop.set()


__all__ = ["FileSource", "HarnessSource", "Source", "SpaceSource", "Spaces", "app", "files_app", "make_app", "serve",
           "spaces_app"]
