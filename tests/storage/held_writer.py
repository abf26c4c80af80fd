"""Commits queued behind a held writer thread, so that the store writes them as one group (any
store with a writer thread: `call_in_writer` and `commit`)."""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager
from typing import Any

import anyio

from durable.errors import StorageError
from durable.storage import Batch


@asynccontextmanager
async def writer_held(store: Any):
    """Hold the writer thread inside a job until the block exits: every job queued meanwhile
    waits behind it, and is written when the block exits."""
    release = threading.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(store.call_in_writer, lambda _: release.wait())
        await anyio.wait_all_tasks_blocked()
        try:
            yield
        finally:
            release.set()


async def commit_behind_held_writer(store: Any, batches: list[Batch], in_order: bool = False) -> list:
    """Queue every batch while the writer is held, then let it write them; return each batch's
    outcome (None, or the exception its caller got). `in_order` queues them one after another
    (each caller waits before the next starts), so their order in the queue is the list's."""
    outcome: dict[int, BaseException | None] = {}

    async def commit(i: int) -> None:
        try:
            await store.commit(batches[i])
            outcome[i] = None
        except StorageError as exc:
            outcome[i] = exc

    async with anyio.create_task_group() as tg:
        async with writer_held(store):
            for i in range(len(batches)):
                tg.start_soon(commit, i)
                if in_order:
                    await anyio.wait_all_tasks_blocked()
            await anyio.wait_all_tasks_blocked()
    return [outcome[i] for i in range(len(batches))]
