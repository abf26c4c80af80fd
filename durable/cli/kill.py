"""SIGKILL injection for the demo: `--kill-after SECONDS`, and the `DURABLE_DEMO_KILL_AT` points
reached in the committed live document (what the demo's crash tests use)."""

from __future__ import annotations

import os
import signal
import sys

import anyio

from .. import records as r
from .demo_model import Step
from .plain_view import Ui

KILL_POINTS = ("stream", "tool", "backoff", "poll")


async def kill_after(seconds: float, ui: Ui) -> None:
    await anyio.sleep(seconds)
    kill_now(ui, f"--kill-after {seconds:g}: the demo kills itself with SIGKILL now")


def kill_now(ui: Ui, why: str) -> None:
    """SIGKILL this process: nothing is closed, flushed or written back (what a crash leaves)."""
    ui.event("kill", why)
    ui.stop()
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def kill_point_reached(kill_at: str, live: r.Live, current: Step | None) -> bool:
    """Whether the committed `live` document is at `kill_at`: "stream" (a partial answer of 20+
    characters), "tool" (the unsafe tool's first output), "backoff" (a retry timer) or "poll" (a
    deferred job); "<point>@<n>" only while input n is answered."""
    point, _, number = kill_at.partition("@")
    if number and (current is None or str(current.number) != number):
        return False
    gen = live.generation
    return (
        (point == "stream" and gen is not None and len(gen.message.text) >= 20)
        or (point == "tool" and any(s.name == "save_note" and s.output and s.status == "running" for s in live.tools))
        or (point == "backoff" and gen is not None and gen.retry is not None)
        or (point == "poll" and gen is not None and gen.deferred is not None)
    )
