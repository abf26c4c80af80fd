"""Workers: processes that take over PostgreSQL session spaces whose owner is gone, finish their
work, and let them go.

A space keeps one owner (a lease, see `durable.storage.postgres`). A *host* opens its space with
`open_harness(PostgresStorage(dsn, space))` and uses the host API as on a file, renewing the
lease while it lives. When it dies (SIGKILL, a lost machine, a partition) its lease runs out and
a worker takes the space over: it opens it (recovery charges the interrupted work exactly as a
reopened file does), runs it until nothing is active and no durable timer is due within
`idle_seconds`, then closes it, releasing the lease (the host, restarted, gets in at once). A
space released with work left (a timer pending, a submission queued) is picked up too.

`run_worker(dsn, app=...)` is the loop (`durable worker --dsn ... --app module:factory` on the
command line). Each round it asks for candidate spaces (lease expired or released, matching
`space_pattern` (SQL LIKE), with a live task, a queued submission or an input in its inbox from
`durable.remote`; `FOR UPDATE SKIP LOCKED`, so that workers look at different rows) and opens
them one by one, `max_spaces` at once; the lease decides between two workers that chose the same
space (the loser gets `SessionLocked` and moves on). A space whose only work is a timer not yet
due is skipped until then; one with nothing a worker can move (a client tool waiting for its
host) is skipped until another owner has opened it.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio
import anyio.abc
from attrs import field, frozen

from ._open import open_harness
from .engine.reports import ErrorReport, ReportCallback
from .errors import DurableError, SessionLocked
from .models.protocol import Model
from .settings import Settings
from .tools import Tool

_CANDIDATES = """
SELECT l.space, l.epoch FROM durable.leases l
 WHERE l.space LIKE %s AND l.expires_at < clock_timestamp()
   AND (EXISTS (SELECT 1 FROM durable.tasks t WHERE t.space = l.space AND t.live)
        OR EXISTS (SELECT 1 FROM durable.submissions s WHERE s.space = l.space AND s.status = 'queued')
        {inbox})
 ORDER BY l.expires_at
 LIMIT %s
 FOR UPDATE OF l SKIP LOCKED"""

_INBOX = "OR EXISTS (SELECT 1 FROM durable.inbox i WHERE i.space = l.space)"  # inputs from durable.remote


@frozen
class WorkerApp:
    """What a worker runs a space with: the application's model, tools and settings (the same
    ones its hosts open their spaces with)."""

    model: Model
    tools: tuple[Tool, ...] = field(default=(), converter=tuple)
    settings: Settings | None = None


def load_app(spec: str) -> WorkerApp:
    """`module:attr`: a `WorkerApp`, or a callable returning one (called once)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise DurableError(f"--app takes module:attribute, not {spec!r}")
    try:
        value: Any = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise DurableError(f"Cannot load the worker app {spec!r}: {exc}") from exc
    if callable(value) and not isinstance(value, WorkerApp):
        try:
            value = value()
        except Exception as exc:
            raise DurableError(f"The worker app factory {spec!r} raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(value, WorkerApp):
        raise DurableError(f"The worker app {spec!r} is a {type(value).__name__}, not a durable.worker.WorkerApp")
    return value


def find_spaces(dsn: str, space_pattern: str = "%", limit: int = 8) -> list[tuple[str, int]]:
    """Spaces a worker may take over now, with their lease's epoch (blocking; one short
    transaction on its own connection)."""
    from .storage.postgres import driver as _pg_driver

    psycopg = _pg_driver.import_psycopg()
    with psycopg.connect(dsn, autocommit=False) as conn:
        exists = conn.execute("SELECT to_regclass('durable.leases') IS NOT NULL").fetchone()[0]
        if not exists:
            return []
        has_inbox = conn.execute("SELECT to_regclass('durable.inbox') IS NOT NULL").fetchone()[0]
        sql = _CANDIDATES.format(inbox=_INBOX if has_inbox else "")  # an inbox since schema version 4
        rows = conn.execute(sql, (space_pattern, limit)).fetchall()
        conn.rollback()
    return [(space, int(epoch)) for space, epoch in rows]


async def run_space(dsn: str, space: str, app: WorkerApp, *, lease_seconds: float = 30.0,
                    idle_seconds: float = 1.0, report: ReportCallback | None = None,
                    on_taken: Callable[[], None] | None = None) -> tuple[float | None, int]:
    """Take `space` over, run it until idle, let it go. Returns the time (wall clock) of its next
    durable timer, if one remains, and the epoch it held. Raises `SessionLocked` when another
    process holds it; `on_taken()` is called once it is open (recovery done)."""
    from .storage.postgres.store import PostgresStorage

    store = PostgresStorage(dsn, space, lease_seconds=lease_seconds)
    async with open_harness(store, model=app.model, tools=app.tools, settings=app.settings, report=report) as h:
        if on_taken is not None:
            on_taken()
        await h.resume()
        while store.lease_lost is None:
            wake = h.wake()
            if not wake.active and (wake.next_timer is None or wake.next_timer > h.clock.now() + idle_seconds):
                # Nothing left for the harness to place or decide either (durable.remote).
                if not await store.take_inbox(1) and not await store.take_decisions(1):
                    return wake.next_timer, store.epoch
            await anyio.sleep(0.05)
    return None, store.epoch


async def run_worker(dsn: str, app: WorkerApp, *, space_pattern: str = "%", lease_seconds: float = 30.0,
                     poll_seconds: float = 1.0, idle_seconds: float = 1.0, max_spaces: int = 8,
                     stop: anyio.Event | None = None, report: ReportCallback | None = None,
                     on_space: Callable[[str, str], None] | None = None) -> None:
    """Run a worker until `stop` is set (forever without one). `on_space(space, what)` is told
    "taken", "released" or "locked" (for logs and tests). Errors while running one space are
    reported (`ErrorReport`) and the worker goes on; see the module docstring."""
    reporter = report or (lambda _: None)
    running: set[str] = set()
    not_before: dict[str, float] = {}  # a space whose next timer is not due yet
    # A space left with nothing this worker can move (a client tool waiting for its host): not
    # opened again until another owner has had it (every open bumps the lease's epoch).
    parked: dict[str, int] = {}
    limiter = anyio.Semaphore(max_spaces)

    async def one(space: str) -> None:
        try:
            next_timer, epoch = await run_space(dsn, space, app, lease_seconds=lease_seconds,
                                                idle_seconds=idle_seconds, report=report,
                                                on_taken=lambda: on_space and on_space(space, "taken"))
            if next_timer is not None:
                not_before[space] = next_timer
            else:
                parked[space] = epoch
            if on_space:
                on_space(space, "released")
        except SessionLocked:
            if on_space:
                on_space(space, "locked")
        except (DurableError, OSError) as exc:
            reporter(ErrorReport(f"Worker: space {space!r} stopped: {exc}", raw=repr(exc), topic="storage"))
        finally:
            running.discard(space)
            limiter.release()

    async with anyio.create_task_group() as tg:
        if stop is not None:
            async def stopper() -> None:
                await stop.wait()
                tg.cancel_scope.cancel()
            tg.start_soon(stopper)
        while True:
            try:
                found = await anyio.to_thread.run_sync(find_spaces, dsn, space_pattern, max_spaces * 2)
            except (DurableError, OSError, _psycopg_error()) as exc:
                reporter(ErrorReport(f"Worker: looking for spaces failed: {exc}", raw=repr(exc), topic="storage"))
                found = []
            now = time.time()
            for space in _due(found, running, not_before, parked, now):
                await limiter.acquire()
                running.add(space)
                tg.start_soon(one, space)
            await anyio.sleep(poll_seconds)


def _due(found: Iterable[tuple[str, int]], running: set[str], not_before: dict[str, float],
         parked: dict[str, int], now: float) -> list[str]:
    return [s for s, epoch in found
            if s not in running and not_before.get(s, 0.0) <= now and parked.get(s) != epoch]


def _psycopg_error() -> type[BaseException]:
    from .storage.postgres import driver as _pg_driver

    error: type[BaseException] = _pg_driver.import_psycopg().Error
    return error


__all__ = ["WorkerApp", "find_spaces", "load_app", "run_space", "run_worker"]
