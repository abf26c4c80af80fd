"""The crash explorer: crash a scenario at every commit boundary and check the invariants.

A *scenario* is what a user's agent does, written once: `setup(clock)` builds the outside world
(a faux model, the tools, the settings) afresh for every replay, and `drive(d)` does the host's
part with a `Driver` (submit inputs, abort, compact, wait for the live document); after `drive`
returns, the explorer drives the harness to quiescence (`Driver.settle`).

`explore(scenario)` runs it once without a crash to count its commits, N, then replays it on a
fresh session file crashing just *before* commit k (commits 1..k-1 are on disk; whatever the
process did since is lost with it) and just *after* it (commit k is on disk; its caller never
hears back), for every k: 2N crash points (`depth=2` also crashes each recovery in turn). After
each crash the file is checked as the dead process left it, after a new harness recovered and
settled, and after its clean close; the model, the tools, the `FakeClock` and the execution and
job logs are the world outside the process, the same objects before and after the crash. Each
point's result lists the violations found (empty when every invariant holds), what commit k
wrote and the final transcript; `explore(scenario, only=("after", 7))` reproduces one point.

The records of a result (`CrashPoint`, `PointResult`, `Exploration`) are written in
`durable.testing.exploration` and re-exported here.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

import anyio
import attrs
from attrs import frozen

from .._open import open_harness
from ..engine.clock import FakeClock
from ..errors import StorageClosed
from ..models.fallback import members_of
from ..models.faux import FauxModel
from ..records import Live, ToolCall
from ..settings import Settings
from ..storage.sqlite.store import SQLiteStorage, Synchronous
from .crash import CrashableStorage, abandon_on_crash, crash
from .exploration import CrashPoint, Exploration, Lifetime, PointResult, Side
from .invariants import check_commit_history, check_invariants, describe_session
from .invariants.committed import check_committed
from .observe import ExecutionLog, FauxJobLedger, requests_of
from .quiesce import Decide, Settled, default_answer, default_decision, settle


@attrs.define
class World:
    """The world outside the agent's process for one replay: fresh objects each time.

    `model`: the model (a `FauxModel`, or one of a `FallbackModel`'s, gets its deferred jobs kept
    in a `FauxJobLedger`); `tools`: the tools (each is wrapped to count its executions);
    `settings`: the harness settings;
    `reopen_settings`: the settings of the harness that reopens the file after the crash (default:
    the same); `answer(call)`: the host's answer to a client tool call while settling (None: let
    it time out); `decide(slot)`: the host's decision on a call waiting for approval while
    settling (`Approve(...)`, `Deny(...)`, None: leave it waiting); `findable_jobs`: whether the
    faux provider can find a deferred job by its key (the model protocol's `find`);
    `instructions`, `output` and `deps`: what `open_harness` is given (the same in every lifetime)."""

    model: Any
    tools: Sequence[Any] = ()
    settings: Settings = attrs.field(factory=Settings)
    reopen_settings: Settings | None = None
    answer: Callable[[ToolCall], str | None] | None = default_answer
    findable_jobs: bool = True
    decide: Decide | None = default_decision
    instructions: Sequence[Any] = ()
    output: Any = None
    deps: Any = None


@frozen
class Scenario:
    """A named agent scenario: `setup(clock) -> World` and `async drive(driver)`."""

    name: str
    setup: Callable[[Any], World]
    drive: Callable[[Driver], Awaitable[None]]

    def variant(self, name: str, *, settings: Callable[[Settings], Settings] | None = None,
                reopen_settings: Callable[[Settings], Settings] | None = None) -> Scenario:
        """The same scenario with its settings (and/or the reopening harness's) changed."""

        def setup(clock: Any) -> World:
            world = self.setup(clock)
            base = settings(world.settings) if settings is not None else world.settings
            again = world.reopen_settings or world.settings
            again = reopen_settings(again) if reopen_settings is not None else (settings(again) if settings else again)
            return attrs.evolve(world, settings=base, reopen_settings=again)

        return Scenario(name, setup, self.drive)


def scenario(
    *, setup: Callable[[Any], World], name: str | None = None
) -> Callable[[Callable[[Driver], Awaitable[None]]], Scenario]:
    """Decorator: `@scenario(setup=make_world)` over `async def drive(d): ...` makes a `Scenario`
    named after the function."""

    def wrap(drive: Callable[[Driver], Awaitable[None]]) -> Scenario:
        return Scenario(name or drive.__name__, setup, drive)

    return wrap


class Driver:
    """The host's side of a scenario: the harness, the clock, and helpers that record what the
    host was told (acknowledged submissions) so the invariants can be checked against it."""

    def __init__(self, harness: Any, clock: Any, world: World, *, stuck_after: float = 10.0) -> None:
        self.harness = harness
        self.clock = clock
        self.world = world
        self.acknowledged: list[str] = []
        self.stuck_after = stuck_after
        self.settled: Settled | None = None
        self.on_submit: Callable[[str], None] | None = None

    async def submit(self, text: str | Sequence[Any], *, conversation: str = "root", when_busy: str | None = None,
                     output: Any = None) -> Any:
        """Submit an input; once this returns it is acknowledged (it must survive any crash)."""
        handle = await self.harness.conversation(conversation).submit(text, when_busy=when_busy, output=output)
        self.acknowledged.append(handle.id)
        if self.on_submit is not None:
            self.on_submit(handle.id)
        return handle

    async def abort(self, conversation: str = "root") -> None:
        await self.harness.conversation(conversation).abort()

    async def approve(self, call_id: str, arguments: dict[str, Any] | None = None) -> None:
        await self.harness.approve(call_id, arguments)

    async def deny(self, call_id: str, reason: str = "") -> None:
        await self.harness.deny(call_id, reason)

    async def compact(self, conversation: str = "root") -> int:
        task_id: int = await self.harness.conversation(conversation).compact()
        return task_id

    async def until(self, predicate: Callable[[Live], bool], conversation: str = "root") -> Live:
        """Wait (on commits, not on time) until the committed live document satisfies `predicate`."""
        live: Live
        async for live in self.harness.conversation(conversation).follow():
            if predicate(live):
                return live
        raise RuntimeError(f"The harness closed before the live document of {conversation!r} matched")

    async def settle(self) -> Settled:
        """Drive the harness to quiescence (see `durable.testing.settle`)."""
        self.settled = await settle(self.harness, self.clock, answer=self.world.answer, stuck_after=self.stuck_after,
                                    decide=self.world.decide)
        return self.settled


def _points(only: Any) -> tuple[CrashPoint, ...]:
    if isinstance(only, CrashPoint):
        return (only,)
    if isinstance(only, tuple) and len(only) == 2 and isinstance(only[0], str):
        only = [only]  # one point
    return tuple(p if isinstance(p, CrashPoint) else CrashPoint(p[0], int(p[1])) for p in only)


SHM = "/dev/shm"
SHM_ROOM = 256 << 20


def scratch_dir() -> str | None:
    """Where `explore` puts its session files when no `directory` is given: `SHM` (memory) when
    it is a writable directory with `SHM_ROOM` bytes free, else None (the system's temp
    directory). An in-process crash loses nothing that reached the OS, so the syncs a file on disk
    makes only cost time: long_tool_output's 156 crash points took 10 s there against 15 s on
    this machine's ext4 /tmp."""
    try:
        room = os.statvfs(SHM)
    except OSError:
        return None
    if room.f_bavail * room.f_frsize < SHM_ROOM or not os.access(SHM, os.W_OK | os.X_OK):
        return None
    return SHM


async def explore(
    scenario: Scenario,
    *,
    only: Any = None,
    depth: int = 1,
    sides: Sequence[Side] = ("before", "after"),
    directory: str | os.PathLike[str] | None = None,
    synchronous: Synchronous = "NORMAL",
    stuck_after: float = 10.0,
    progress: Callable[[PointResult], None] | None = None,
    store: Callable[[str], Any] | None = None,
) -> Exploration:
    """Crash `scenario` at every commit boundary (see the module docstring) and return what was
    found.

    What is checked (`check_invariants`, `check_commit_history`, and `check_committed`: the file
    gives back what the commits that returned wrote): the file right after each
    crash, after the recovery settled (the reopened harness gets `World.reopen_settings` if
    given) and after its clean close; with the acknowledged submissions, the tool executions
    (every tool is wrapped by an `ExecutionLog`), the deferred jobs (a `FauxModel` is wrapped by a
    `FauxJobLedger`, which also answers the model protocol's `find`), the model's requests, and
    every batch committed in every lifetime. A harness that does not settle within `stuck_after`
    seconds without a commit is a violation too ("no task runs forever").

    Determinism: a replay is the same program with the same faux answers, so the k-th commit is
    normally the same commit in every replay. Tasks that run concurrently (two tools of one
    round) may commit in another order from one replay to the next; every point is still a real
    crash point of a real run, and `PointResult.commit` says which commit it was.

    `only=("after", 7)` replays one point; `only=[("after", 7), ("before", 2)]` crashes the first
    harness just after its commit 7, then the reopened one just before its commit 2. `depth=2`
    also crashes every reopened harness at every commit boundary of its recovery (the restart
    limit's ground: a task cut off again before it made progress). Session files go to
    `directory` (default: a temporary directory, removed afterwards, in memory where the system
    has room there: `scratch_dir()`). `progress(result)` is
    called after each replay. `store(key)`: the store of a replay's harnesses instead of a
    session file (see `replay`); each replay gets a key of its own, `explore-<scenario>-<tag>-<n>`
    (`store=lambda key: PostgresStorage(dsn, space=key)`: a fresh space per replay, a new store
    object for every harness lifetime, as a new process makes). After a crash the dead harness's
    store is closed (`CrashableStorage.release`): for a leased store this gives the lease up,
    which the next owner sees exactly as a lease that ran out (the takeover bumps the epoch
    either way), without the wait. The spaces are left in place.

    Replays run on `synchronous="NORMAL"` by default: an in-process crash loses nothing in
    either mode (what reached SQLite is in the OS's cache); power cuts are
    `durable.testing.powercut`'s business."""
    with tempfile.TemporaryDirectory(prefix="durable-explore-", dir=directory or scratch_dir()) as tmp:
        counter = iter(range(1 << 30))
        tag = secrets.token_hex(3)  # another explore() on the same server uses other spaces

        async def run(points: tuple[CrashPoint, ...]) -> PointResult:
            n = next(counter)
            path = os.path.join(tmp, f"replay-{n}.sqlite") if store is None else f"explore-{scenario.name}-{tag}-{n}"
            result = await replay(scenario, points, path, synchronous=synchronous, stuck_after=stuck_after,
                                  store=store)
            if points and not result.commit and len(points) == 1 and points[0].commit <= len(baseline.history):
                k = points[0].commit
                result.commit = f"commit {k} (in the run without a crash): {baseline.history[k - 1]}"
            if progress is not None:
                progress(result)
            for suffix in ("", "-wal", "-shm", ".lock", "-partials", "-mark") if store is None else ():
                try:
                    os.unlink(path + suffix)
                except FileNotFoundError:
                    pass
            return result

        baseline = await run(())
        results: list[PointResult] = []
        if only is not None:
            results.append(await run(_points(only)))
        else:
            Crashed = list[tuple[tuple[CrashPoint, ...], PointResult]]  # the points so far, and their result
            frontier: Crashed = [((), baseline)]
            for _ in range(max(1, depth)):
                nxt: Crashed = []
                for prefix, parent in frontier:
                    lifetime = parent.lifetimes[len(prefix)] if len(parent.lifetimes) > len(prefix) else None
                    if lifetime is None:
                        continue
                    for k in range(1, lifetime.commits + 1):
                        for side in sides:
                            points = (*prefix, CrashPoint(side, k))
                            result = await run(points)
                            results.append(result)
                            if result.crashed:
                                nxt.append((points, result))
                frontier = nxt
        return Exploration(scenario.name, baseline.commits, baseline, results)


async def _drive(scenario: Scenario, driver: Driver, first: bool) -> None:
    """A lifetime's body: the scenario's host actions (first harness only), then settling."""
    if first:
        await scenario.drive(driver)
    await driver.settle()


async def _lifetime(store: CrashableStorage, harness: Any, body: Callable[[], Awaitable[None]]) -> str | None:
    """Open `harness`, run `body()` until it returns or the storage crashes, then close cleanly or
    abandon. A crash during the open commit stops the opening. Returns what `body` raised, when
    the crash did not cause it."""
    opened = False
    error = None
    with anyio.CancelScope() as opening:
        store.on_crash.append(lambda: None if opened else opening.cancel())
        try:
            async with harness:
                opened = True
                abandon_on_crash(harness)
                try:
                    async with anyio.create_task_group() as tg:

                        async def watch() -> None:
                            await store.crashed.wait()
                            tg.cancel_scope.cancel()

                        tg.start_soon(watch)
                        try:
                            await body()
                        except Exception as exc:  # noqa: BLE001 - a finding, unless the crash caused it
                            if not store.crashed.is_set():
                                error = f"{type(exc).__name__}: {exc}"
                        tg.cancel_scope.cancel()
                finally:
                    if store.crashed.is_set():
                        crash(harness)
        except StorageClosed:
            if not store.crashed.is_set():  # a clean close cut off by the crash fails this way
                raise
    if not opened:
        harness.abandon()
    return error


async def replay(
    scenario: Scenario,
    points: CrashPoint | Sequence[CrashPoint] | None,
    path: str,
    *,
    synchronous: Synchronous = "NORMAL",
    stuck_after: float = 10.0,
    store: Callable[[str], Any] | None = None,
) -> PointResult:
    """Run `scenario` once on the session file `path`, crashing each successive harness at its
    point (none: no crash), then recover, settle, close and check. See the module docstring.

    `store(path)`: instead of `SQLiteStorage(path, synchronous=...)`, the store of each harness
    lifetime (called once per lifetime; each call must reach the same session, e.g.
    `PostgresStorage(dsn, space=path)`); the checks then read the session through that store
    (`durable.testing.invariants.load_session`)."""
    points = _points([points] if isinstance(points, CrashPoint) else (points or ()))
    clock = FakeClock()
    world = scenario.setup(clock)
    executions = ExecutionLog()
    ledger = FauxJobLedger(findable=world.findable_jobs)
    for member in members_of(world.model):
        if isinstance(member, FauxModel):
            member.keep_requests = None  # record: the invariants check every request sent
    model = ledger.witnessed(world.model)
    tools = executions.wrap_all(world.tools)
    first_settings = world.settings
    again_settings = world.reopen_settings or world.settings
    all_settings = [first_settings, again_settings]
    reports: list[Any] = []
    violations: list[str] = []
    batches: list[Any] = []
    returned: list[Any] = []
    lifetimes: list[Lifetime] = []
    acknowledged: list[str] = []

    def note(phase: str, found: list[str]) -> None:
        for v in found:
            if not any(existing.endswith(": " + v) for existing in violations):
                violations.append(f"{phase}: {v}")

    def make(key: str) -> Any:
        return SQLiteStorage(key, synchronous=synchronous) if store is None else store(key)

    source: Any = path  # what the checks read: the file, or the last lifetime's store (open or closed)

    def checks(**kw: Any) -> list[str]:
        return check_invariants(source, executions=executions, jobs=ledger, requests=requests_of(model),
                                settings=all_settings, acknowledged=acknowledged, **kw)

    commit = ""
    polls = 0
    settled: Settled | None = None
    for i, point in enumerate((*points, None)):
        before = point.commit if point is not None and point.side == "before" else None
        after = point.commit if point is not None and point.side != "before" else None
        inner = make(path)
        source = path if store is None else inner
        crashable = CrashableStorage(inner, crash_before=before, crash_after=after)
        harness = open_harness(crashable, model=model, tools=tools,
                               settings=first_settings if i == 0 else again_settings, clock=clock,
                               report=reports.append, instructions=world.instructions, output=world.output,
                               deps=world.deps)
        driver = Driver(harness, clock, world, stuck_after=stuck_after)
        driver.acknowledged = acknowledged

        error = await _lifetime(crashable, harness, partial(_drive, scenario, driver, i == 0))
        crashed = crashable.crashed.is_set()
        if error is not None:
            violations.append(f"the scenario raised {error}")
        lifetimes.append(Lifetime(crashable.commit_calls, list(crashable.history), crashed))
        if crashed and driver.settled is not None:
            polls += driver.settled.polls
        batches += crashable.batches
        returned += crashable.returned
        phase = "the first harness" if i == 0 else f"reopened harness {i}"
        if crashed:
            if point is not None and point.commit <= len(crashable.history):
                commit = f"commit {point.commit} of {phase}: {crashable.history[point.commit - 1]}"
            await crashable.release()
            note(f"after the crash of {phase}", checks() + check_committed(source, batches, returned))
            continue
        settled = driver.settled
        polls += settled.polls if settled is not None else 0
        if settled is not None and not settled.quiescent:
            violations.append(f"{phase}: {settled.stuck}")
        note(f"after {phase} settled and closed", checks(quiescent=settled is not None and settled.quiescent,
                                                        clean_close=True) + check_committed(source, batches, returned))
        break
    note("in the commit history", check_commit_history(batches))
    crashed_all = (
        len(points) > 0 and all(lt.crashed for lt in lifetimes[: len(points)]) and len(lifetimes) > len(points)
    )
    return PointResult(points, crashed_all, lifetimes, commit, violations, describe_session(source), reports, polls)


__all__ = [
    "CrashPoint",
    "Driver",
    "Exploration",
    "Lifetime",
    "PointResult",
    "Scenario",
    "Side",
    "World",
    "explore",
    "replay",
    "scenario",
]
