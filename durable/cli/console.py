"""`durable console [PATH...] [--dsn DSN --space PATTERN]`: the console page (`durable.console`)
over session files and PostgreSQL session spaces, served by Hypercorn on trio until Ctrl-C.
Prints the URL with its token once it listens."""

from __future__ import annotations

import sys

from ..errors import DurableError


class ConsoleUnavailable(DurableError):
    """`durable console` needs the `console` extra (starlette, hypercorn), which is not installed."""


def run_console(paths: list[str], *, host: str, port: int, token: str | None, dsn: str | None = None,
                space_pattern: str = "%", key: bytes | None = None) -> None:
    try:
        import hypercorn  # noqa: F401
        import starlette  # noqa: F401
    except ImportError as exc:
        raise ConsoleUnavailable(f"durable console needs the console extra: pip install 'durable-harness[console]' "
                                 f"({exc.name} is not installed)") from None
    import trio

    from ..console import FileSource, Source, Spaces, make_app, serve

    sources: list[Source] = [FileSource(p, key=key) for p in paths]
    refresh = None
    if dsn is not None:
        spaces = Spaces(dsn, space_pattern)
        spaces.refresh_sync()
        files = list(sources)

        async def refresh() -> None:  # new spaces after the files (indexes stay)
            await spaces.refresh()
            sources[len(files):] = spaces
        sources += spaces
    app = make_app(sources, token=token, refresh=refresh)
    shown_spaces = f"; spaces matching {space_pattern!r} on {spaces.db.location}" if dsn is not None else ""

    def ready(bound: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        print(f"durable console: http://{shown}:{bound}/?token={app.state.token}", flush=True)
        print(f"serving {len(paths)} session file(s): {', '.join(paths)}{shown_spaces}; Ctrl-C to stop",
              file=sys.stderr, flush=True)

    trio.run(lambda: serve(app, host=host, port=port, ready=ready))


__all__ = ["ConsoleUnavailable", "run_console"]
