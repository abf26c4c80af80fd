"""Progress flushes of all streams share one schedule (the ticks `k * interval / 2` of the loop's clock),
so that the flushes of many concurrent streams reach the store together and go into one group
commit. Run on trio's MockClock: time moves only when every task waits, so every instant below is
exact."""

from __future__ import annotations

import random

import anyio
import pytest
import trio.testing

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.storage import MemoryStorage
from durable.engine.progress import ProgressFlusher, tick_at_or_after

pytestmark = pytest.mark.anyio

INTERVAL = 0.125  # a power of two: tick instants are exact floats
TICK = INTERVAL / 2


@pytest.fixture
def anyio_backend():
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


def expected_ticks(created: float, updates: list[float], interval: float) -> list[float]:
    """The documented rule, on ticks of half an interval: the first flush not before half an
    interval from the stream's start, then at most one per interval; an update is flushed at the
    first tick at or after it that these allow."""
    tick = interval / 2
    allowed = tick_at_or_after(created + tick, tick)
    out: list[float] = []
    pending = sorted(updates)
    while pending:
        k = max(allowed, tick_at_or_after(pending[0], tick))
        out.append(k * tick)
        pending = [u for u in pending if u > k * tick]
        allowed = k + 2
    return out


@pytest.fixture
async def flusher():
    """The schedule's task, as the harness runs it."""
    flusher = ProgressFlusher()
    async with anyio.create_task_group() as tg:
        tg.start_soon(flusher.run)
        yield flusher
        tg.cancel_scope.cancel()


async def run_stream(flusher: ProgressFlusher, start: float, updates: list[float], flushes: list[float],
                     created: list[float]) -> None:
    """A stream: starts at `start`, updates at the given instants, is left (as generation.py and
    tool.py do) one interval after its last update has been flushed."""
    await anyio.sleep_until(start)
    created.append(anyio.current_time())

    async def flush() -> None:
        flushes.append(anyio.current_time())

    async with flusher.stream(INTERVAL, flush) as stream:
        for u in updates:
            await anyio.sleep_until(u)
            await stream.update()
        end = expected_ticks(created[0], updates, INTERVAL)[-1] + INTERVAL / 2
        await anyio.sleep_until(end)


async def test_fifty_concurrent_streams_flush_only_at_the_shared_ticks_one_instant_per_window(flusher):
    rnd = random.Random(12)
    base = anyio.current_time()
    plans = []
    for _ in range(50):
        start = base + rnd.uniform(0, 1.0)
        updates = sorted(start + rnd.uniform(0.001, 2.0) for _ in range(rnd.randint(1, 40)))
        plans.append((start, updates, [], []))
    async with anyio.create_task_group() as tg:
        for start, updates, flushes, created in plans:
            tg.start_soon(run_stream, flusher, start, updates, flushes, created)

    instants: set[float] = set()
    for start, updates, flushes, created in plans:
        # Exactly the documented flushes of each stream: nothing in its first half interval, at
        # most one flush per interval, every update flushed at most one interval after it.
        assert flushes == expected_ticks(created[0], updates, INTERVAL)
        assert all(f >= created[0] + TICK for f in flushes)
        assert all(b - a >= INTERVAL for a, b in zip(flushes, flushes[1:]))
        assert all(any(u <= f <= u + INTERVAL for f in flushes) for u in updates)
        instants.update(flushes)
    # All 50 streams flush at the instants of the shared schedule.
    assert all(t == round(t / TICK) * TICK for t in instants)
    flush_count = sum(len(p[2]) for p in plans)
    assert flush_count > 3 * len(instants)  # the streams really did share instants


async def test_an_answer_completing_within_half_an_interval_is_never_flushed(flusher):
    flushes: list[float] = []

    async def flush() -> None:
        flushes.append(anyio.current_time())

    await anyio.sleep(0.01)  # the stream does not start on a tick
    start = anyio.current_time()
    async with flusher.stream(INTERVAL, flush) as stream:
        for _ in range(10):
            await anyio.sleep(INTERVAL / 40)
            await stream.update()
        assert anyio.current_time() < start + TICK
    await anyio.sleep(INTERVAL * 2)  # the tick it was queued for passes: the stream was left
    assert flushes == []


async def test_the_last_update_is_flushed_at_the_next_tick_and_a_congested_wake_keeps_the_shared_schedule(flusher):
    flushes: list[float] = []
    gate = anyio.Event()

    async def flush() -> None:
        flushes.append(anyio.current_time())
        if len(flushes) == 1:
            await gate.wait()  # a slow commit: the stream keeps updating meanwhile

    t0 = tick_at_or_after(anyio.current_time(), TICK) * TICK + 0.01
    await anyio.sleep_until(t0)
    async with flusher.stream(INTERVAL, flush) as stream:
        await stream.update()
        first_tick = tick_at_or_after(t0 + TICK, TICK) * TICK
        await anyio.sleep_until(first_tick + TICK * 4.5)  # the first flush hangs for 4.5 ticks
        await stream.update()
        gate.set()
        await anyio.sleep_until(first_tick + TICK * 10.5)
    # The update made while the commit hung is flushed at the next tick of the shared schedule
    # (not one interval after the slow commit ended), and is not left behind.
    assert flushes == [first_tick, first_tick + 5 * TICK]


async def test_interval_zero_flushes_every_update_before_it_returns(flusher):
    count = 0

    async def flush() -> None:
        nonlocal count
        count += 1

    async with flusher.stream(0, flush) as stream:
        for i in range(1, 4):
            await stream.update()
            assert count == i


async def test_fifty_streaming_conversations_commit_their_partials_only_at_the_shared_ticks():
    """Through the harness: every partial-answer flush of 50 concurrent answers is committed at a
    tick of the schedule, so they reach the store's writer together (one group commit on SQLite).
    A memory store: the mock clock then sees every wait (a writer thread would let it jump)."""
    store = MemoryStorage()
    flush_times: list[float] = []
    real_commit = store.commit

    async def commit(batch):  # type: ignore[no-untyped-def]
        gen = [live.generation for live in batch.live.values() if live.generation is not None]
        if gen and not batch.tasks and not batch.entries and any(g.message.text for g in gen):
            flush_times.append(anyio.current_time())
        await real_commit(batch)

    store.commit = commit  # type: ignore[method-assign]
    text = "x" * 40
    model = FauxModel([faux.reply(text)] * 50, token_size=4, tokens_per_second=40)  # 10 chunks over 0.25 s
    settings = durable.Settings(progress=durable.Progress(persist_within=INTERVAL))
    async with durable.open_harness(store, model=model, settings=settings) as h:
        subs = []
        for i in range(50):
            subs.append(await h.conversation(f"c{i}").submit("hi"))
            await anyio.sleep(0.003)  # the streams start at different instants
        for sub in subs:
            assert isinstance(await sub.wait(), r.Answered)
    assert flush_times, "no partial was flushed"
    assert all(t == round(t / TICK) * TICK for t in flush_times)
    assert len(flush_times) >= 40
    # 50 streams of 0.25 s started over 0.15 s span at most 7 ticks: their flushes share them.
    assert len(set(flush_times)) <= 7


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)}), "asyncio"])
async def test_leaving_a_stream_waits_for_its_flush_in_flight(flusher):
    """The stream's final commit comes after leaving it: a flush that is still committing must
    land first, never after."""
    events: list[str] = []
    started, gate = anyio.Event(), anyio.Event()

    async def flush() -> None:
        events.append("flush started")
        started.set()
        await gate.wait()
        events.append("flush landed")

    async def open_gate_later() -> None:
        await started.wait()
        await anyio.sleep(INTERVAL * 3)
        events.append("gate opened")
        gate.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(open_gate_later)
        async with flusher.stream(INTERVAL, flush) as stream:
            await stream.update()
            await started.wait()  # the first tick came: the flush hangs on the gate
            assert events == ["flush started"]
        events.append("left")
    assert events == ["flush started", "gate opened", "flush landed", "left"]


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)}), "asyncio"])
async def test_a_failing_flush_stops_the_stream_and_its_error_is_raised_where_the_stream_is_left(flusher):
    class Refused(Exception):
        pass

    async def flush() -> None:
        raise Refused("the store refused the partial")

    reached_end = False
    with pytest.raises(Refused, match="the store refused the partial"):
        async with flusher.stream(INTERVAL, flush) as stream:
            await stream.update()
            await anyio.sleep(INTERVAL * 100)  # cancelled by the failed flush at the first tick
            reached_end = True
    assert not reached_end
    # The schedule goes on for the other streams.
    flushed: list[float] = []

    async def ok() -> None:
        flushed.append(anyio.current_time())

    async with flusher.stream(INTERVAL, ok) as stream:
        await stream.update()
        await anyio.sleep(INTERVAL)
    assert len(flushed) == 1
