"""Following the demo's conversation: each commit of the live document and the new entries
turned into events for the display, the history line once recovery has written what it keeps,
and the `kill_at` points checked on every commit."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

import anyio

from .. import records as r
from .demo_model import DemoProgress
from .kill import kill_now, kill_point_reached
from .plain_view import Ui

if TYPE_CHECKING:
    from ..engine.harness import Harness


class Watcher:
    """Follows the root conversation's committed live document; on every commit reads the new
    entries and turns the changes into events, and kills the process at `kill_at`.

    `recovering` holds the tasks the open found cut off, with their checkpoint at open. The
    history line ("the conversation has N entries, K aborted partials") waits until each of them
    has moved on (a new checkpoint, or ended): by then recovery has written the partial answers
    it keeps, so the line counts them."""

    def __init__(self, h: Harness, ui: Ui, progress: DemoProgress, kill_at: str | None, *,
                 recovering: dict[int, r.Checkpoint | None] | None = None, history: bool = False) -> None:
        self.h = h
        self.ui = ui
        self.progress = progress
        self.kill_at = kill_at
        self.prev: r.Live | None = None  # None: nothing shown yet (what is live at open is not "new")
        self.recovering = dict(recovering or {})
        self.history_owed = history
        self._lock = anyio.Lock()

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        # `follow()` is an async generator: closed here, so its registration ends with the watcher.
        async with aclosing(cast(AsyncGenerator[r.Live, None], self.h.root.follow())) as follow:
            first = await follow.__anext__()  # registered: no commit after this is missed
            task_status.started()
            await self._show(first)
            async for live in follow:
                await self._show(live)

    async def _show(self, live: r.Live) -> None:
        await self.sync()
        await self._history_when_recovered()
        task = await self.h.task(live.run.task_id) if live.run else None
        self.ui.live(live, task, self.progress.current)
        self._events(self.prev, live)
        # What was committed before this process opened is no kill point.
        if self.prev is not None and self.kill_at and kill_point_reached(self.kill_at, live, self.progress.current):
            kill_now(self.ui, f"DURABLE_DEMO_KILL_AT={self.kill_at}: the demo kills itself with SIGKILL now")
        self.prev = live

    async def sync(self) -> None:
        """Show the entries committed since the last look."""
        async with self._lock:
            for stored in await self.h.root.entries(self.progress.last_seq + 1):
                self.progress.last_seq = stored.seq
                self.ui.entry(stored)

    async def _history_when_recovered(self) -> None:
        for task_id, checkpoint in list(self.recovering.items()):
            task = await self.h.task(task_id)
            if task is None or task.terminal or task.checkpoint != checkpoint:
                del self.recovering[task_id]
                # Read after the entries shown so far: the commit that moved it on (and wrote the
                # partial it keeps) may have landed since; show its entries before counting them.
                await self.sync()
        if not self.recovering:
            await self.show_history()

    async def show_history(self) -> None:
        """The history line, once (also when the phase ends before recovery moved on)."""
        if self.history_owed:
            self.history_owed = False
            self.ui.history(await self.h.root.entries(1, self.progress.last_seq))

    def _events(self, prev: r.Live | None, live: r.Live) -> None:
        opening = prev is None
        prev = prev or r.Live()
        gen, old = live.generation, prev.generation
        if gen is not None and gen.retry is not None and (old is None or old.retry != gen.retry):
            rt = gen.retry
            code = f", HTTP {rt.status_code}" if rt.status_code else ""
            self.ui.event("retry", f"attempt {rt.attempt} failed ({rt.kind}{code}): {rt.error}; "
                                   f"attempt {rt.attempt + 1} in {max(0.0, rt.at - time.time()):.1f} s")
        if gen is not None and gen.deferred is not None and (old is None or old.deferred != gen.deferred):
            if old is None or old.deferred is None or old.attempt != gen.attempt:
                self.ui.event("deferred", f"attempt {gen.attempt} asks for the answer as a background job, "
                                          "polled until it is ready")
            else:
                wait = max(0.0, gen.deferred.poll_at - time.time())
                self.ui.event("deferred", f"the job is still running; next poll in {wait:.1f} s")
        old_slots = {s.task_id for s in prev.tools}
        for slot in live.tools:
            if slot.task_id not in old_slots and not opening:
                self.ui.event("tool", f"{slot.name} started (task {slot.task_id})")
        if live.run_failure is not None and live.run_failure != prev.run_failure:
            f = live.run_failure
            self.ui.event("unanswered", f"run of task {f.task_id} ended: {f.reason}: {f.detail}")
