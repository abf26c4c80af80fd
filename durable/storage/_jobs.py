"""The jobs of the SQLite store's writer thread: a call or a commit, its outcome, and the wake-up
of the caller waiting for it on its own event loop."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio

from ._notify import thread_safe_caller
from .protocol import Batch, EncodedBatch


class Job:
    """One job for the writer thread: a call (`fn`), or a commit (`batch`, encoded there)."""

    __slots__ = ("_wake", "batch", "encoded", "error", "fn", "result")

    def __init__(self, fn: Callable[[sqlite3.Connection], Any] | None, batch: Batch | None):
        self.fn = fn
        self.batch = batch
        self.encoded: EncodedBatch | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        event = anyio.Event()
        call = thread_safe_caller()
        self._wake = (call, event)

    @property
    def event(self) -> anyio.Event:
        return self._wake[1]

    def finish(self) -> None:
        call, event = self._wake
        call(event.set)


def finish_all(jobs: list[Job]) -> None:
    """Wake the callers of many jobs: one hand-off to each event loop, not one per job."""
    if len(jobs) == 1:
        jobs[0].finish()
        return
    by_loop: dict[Any, tuple[Callable[[Callable[[], object]], None], list[anyio.Event]]] = {}
    for job in jobs:
        call, event = job._wake
        by_loop.setdefault(getattr(call, "loop", call), (call, []))[1].append(event)
    for call, events in by_loop.values():
        call(partial(_set_all, events))


def _set_all(events: list[anyio.Event]) -> None:
    for event in events:
        event.set()
