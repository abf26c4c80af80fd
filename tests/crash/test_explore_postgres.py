"""The crash explorer on PostgreSQL (issue 16): every commit boundary of two ready-made scenarios,
both sides, on a real server (the `postgres_dsn` fixture), zero violations.

Each replay runs on a space of its own; every harness lifetime opens a new `PostgresStorage` on
it (as a new process would), and a reopened harness takes the space over from the crashed one
(a new lease epoch). The invariants are checked on the rows the server holds."""

from __future__ import annotations

import pytest

from durable.storage import PostgresStorage
from durable.testing import explore, scenarios

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("scenario", [scenarios.tool_round, scenarios.deferred_answer], ids=lambda s: s.name)
async def test_every_commit_boundary_of_the_scenario_keeps_every_invariant_on_postgresql(scenario, postgres_dsn):
    spaces: list[str] = []
    stores: list[PostgresStorage] = []

    def store(space: str) -> PostgresStorage:
        spaces.append(space)
        stores.append(PostgresStorage(postgres_dsn, space=space))
        return stores[-1]

    exploration = await explore(scenario, store=store)
    print(f"\n{exploration.summary()} (PostgreSQL, {len(set(spaces))} spaces, {len(spaces)} stores)")
    assert exploration.commits > 0
    assert exploration.crash_points == 2 * exploration.commits, [str(r.point) for r in exploration.missed]
    exploration.assert_ok()
    # One space per replay (the run without a crash, then one per point), reopened after each crash.
    assert len(set(spaces)) == 1 + exploration.crash_points
    assert len(spaces) == len(set(spaces)) + sum(
        sum(lt.crashed for lt in r.lifetimes) for r in [exploration.baseline, *exploration.results])
    # Each lifetime of a replay owned the space as a new lease epoch: 1, then 2 after the crash.
    epochs: dict[str, list[int]] = {}
    for s in stores:
        epochs.setdefault(s.space, []).append(s.epoch)
    assert all(e == list(range(1, len(e) + 1)) for e in epochs.values()), epochs
    assert max(len(e) for e in epochs.values()) == 2
    assert "postgresql://" in exploration.baseline.transcript
