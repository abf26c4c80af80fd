"""The background integrity check of a resumed harness starts a second after resume, so the
first turn of a freshly opened session does not share the machine with a read of the whole file.
On trio's MockClock: time moves only when every task waits, so the instants are exact."""

from __future__ import annotations

import anyio
import pytest
import trio.testing

import durable
from durable.models import FauxModel, faux
from durable.storage import MemoryStorage

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


async def test_the_background_check_starts_a_second_after_resume_and_the_first_turn_does_not_wait_for_it():
    store = MemoryStorage()
    checked: list[float] = []
    real_check = store.check_integrity

    async def check_integrity() -> list[str]:
        checked.append(anyio.current_time())
        return await real_check()

    store.check_integrity = check_integrity  # type: ignore[method-assign]
    async with durable.open_harness(store, model=FauxModel([faux.reply("Hi!")])) as h:
        resumed = anyio.current_time()
        submission = await h.root.submit("hello")
        assert await submission.wait() == durable.Answered("Hi!", 2)
        assert checked == []  # the first turn ran before the check
        await anyio.sleep(1.5)
        assert checked == [resumed + 1.0]


async def test_no_background_check_when_it_is_turned_off():
    store = MemoryStorage()
    calls = 0
    real_check = store.check_integrity

    async def check_integrity() -> list[str]:
        nonlocal calls
        calls += 1
        return await real_check()

    store.check_integrity = check_integrity  # type: ignore[method-assign]
    settings = durable.Settings(check_integrity=False)
    async with durable.open_harness(store, model=FauxModel([]), settings=settings):
        await anyio.sleep(5)
    assert calls == 0
