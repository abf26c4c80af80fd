"""`durable console PATH...`: the console page (`durable.console`) over session files, served by
Hypercorn on trio until Ctrl-C. Prints the URL with its token once it listens."""

from __future__ import annotations

import sys

from ..errors import DurableError


class ConsoleUnavailable(DurableError):
    """`durable console` needs the `console` extra (starlette, hypercorn), which is not installed."""


def run_console(paths: list[str], *, host: str, port: int, token: str | None) -> None:
    try:
        import hypercorn  # noqa: F401
        import starlette  # noqa: F401
    except ImportError as exc:
        raise ConsoleUnavailable(f"durable console needs the console extra: pip install 'durable-harness[console]' "
                                 f"({exc.name} is not installed)") from None
    import trio

    from ..console import files_app, serve

    app = files_app(paths, token=token)

    def ready(bound: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        print(f"durable console: http://{shown}:{bound}/?token={app.state.token}", flush=True)
        print(f"serving {len(paths)} session(s): {', '.join(paths)}; Ctrl-C to stop", file=sys.stderr, flush=True)

    trio.run(lambda: serve(app, host=host, port=port, ready=ready))


__all__ = ["ConsoleUnavailable", "run_console"]
