"""durable.engine.ownership against stores without and with a lease (a stand-in implementing
`durable.storage.protocol.Leased`; the real PostgreSQL store: tests/storage/test_postgres_workers)."""

from __future__ import annotations

import anyio
import pytest
from trio.testing import wait_all_tasks_blocked

from durable.engine import ownership
from durable.errors import LockLost
from durable.storage import MemoryStorage
from durable.storage.protocol import Leased, ownership_deadline

pytestmark = pytest.mark.anyio


class LeasedStandIn:
    location = "space 'x' on a stand-in"

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.lease_lost: LockLost | None = None
        self.lost = anyio.Event()

    def lease_deadline(self) -> float:
        return self.deadline

    async def wait_lease_lost(self) -> LockLost:
        await self.lost.wait()
        assert self.lease_lost is not None
        return self.lease_lost

    def lose(self) -> None:
        self.lease_lost = LockLost("taken over", location=self.location)
        self.lost.set()


async def test_a_store_without_a_lease_owns_until_closed_and_external_work_starts_at_once():
    store = MemoryStorage()
    assert not isinstance(store, Leased)
    assert ownership_deadline(store) == float("inf")
    await ownership.before_external_work(store, "A tool")  # returns at once


async def test_past_the_deadline_external_work_waits_until_a_renewal_moves_it():
    store = LeasedStandIn(deadline=0.0)
    assert isinstance(store, Leased)
    started = anyio.Event()

    async def work() -> None:
        await ownership.before_external_work(store, "A tool")  # type: ignore[arg-type]  # a stand-in
        started.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(work)
        await wait_all_tasks_blocked()
        assert not started.is_set()
        store.deadline = float("inf")  # a renewal landed
        with anyio.fail_after(5):
            await started.wait()


async def test_past_the_deadline_a_lost_lease_fails_the_work_with_lock_lost_naming_it():
    store = LeasedStandIn(deadline=0.0)
    failed: list[LockLost] = []

    async def work() -> None:
        try:
            await ownership.before_external_work(store, "Tool step (task 3)")  # type: ignore[arg-type]
        except LockLost as exc:
            failed.append(exc)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(work)
            await wait_all_tasks_blocked()
            store.lose()
    assert [str(e) for e in failed] == ["Tool step (task 3) was not started: taken over"]


async def test_the_watch_calls_back_once_the_lease_is_lost():
    store = LeasedStandIn(deadline=float("inf"))
    seen: list[BaseException] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(ownership.watch, store, seen.append)
            await wait_all_tasks_blocked()
            assert seen == []
            store.lose()
    assert seen == [store.lease_lost]
