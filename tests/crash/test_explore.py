"""The explorer over durable's own scenarios: every commit boundary, both sides, zero violations.

`pytest -s` prints how many crash points each scenario covered."""

from __future__ import annotations

import os

import pytest

from durable.testing import explore, scenarios
from tests import moves

pytestmark = pytest.mark.anyio

def _cases():
    for s in scenarios.ALL:
        yield pytest.param(s, id=s.name)
    limit1 = scenarios.tool_round.variant("tool_round_reopened_with_restart_limit_1",
                                          reopen_settings=lambda st: _evolve(st, restart_limit=1))
    yield pytest.param(limit1, id=limit1.name)
    no_retry = scenarios.streamed_answer.variant(
        "streamed_answer_reopened_without_retries",
        reopen_settings=lambda st: _evolve(st, retry=_evolve(st.retry, enabled=False)))
    yield pytest.param(no_retry, id=no_retry.name)
    deferred_limit1 = scenarios.deferred_answer.variant("deferred_answer_restart_limit_1",
                                                        settings=lambda st: _evolve(st, restart_limit=1))
    yield pytest.param(deferred_limit1, id=deferred_limit1.name)
    # A tool cut off once is at the limit: ended `restart_limit`, past its timeout or not.
    timeout_limit1 = scenarios.tool_timeout.variant("tool_timeout_restart_limit_1",
                                                    settings=lambda st: _evolve(st, restart_limit=1))
    yield pytest.param(timeout_limit1, id=timeout_limit1.name)
    # A death in prepare (the instructions assembled) at the limit: the run ends, nothing is sent.
    prepare_limit1 = scenarios.dynamic_instructions.variant("dynamic_instructions_restart_limit_1",
                                                            settings=lambda st: _evolve(st, restart_limit=1))
    yield pytest.param(prepare_limit1, id=prepare_limit1.name)


def _evolve(value, **changes):
    import attrs

    return attrs.evolve(value, **changes)


@pytest.mark.parametrize("scenario", list(_cases()))
async def test_every_commit_boundary_of_the_scenario_keeps_every_invariant(scenario, monkeypatch, run_dir):
    with moves.recording(monkeypatch) as seen:
        exploration = await explore(scenario)
    print(f"\n{exploration.summary()}")
    assert exploration.commits > 0
    assert exploration.crash_points == 2 * exploration.commits, [str(r.point) for r in exploration.missed]
    exploration.assert_ok()
    # Quiescence was seen from events (idle tasks, wake(), fake-clock timers), never by waiting.
    assert sum(r.polls for r in [exploration.baseline, *exploration.results]) == 0
    if scenario in scenarios.ALL:  # (not a variant) its moves, for the tables' test in tests/engine/test_transitions.py
        moves.save(run_dir, scenario.name, seen)


def _depth2_cases():
    chosen = os.environ.get("DURABLE_EXPLORE_DEPTH2", "")
    pool = list(scenarios.ALL) + [
        scenarios.streamed_answer.variant("streamed_answer_restart_limit_1", settings=lambda st: _evolve(st, restart_limit=1)),
        scenarios.tool_round.variant("tool_round_restart_limit_2", settings=lambda st: _evolve(st, restart_limit=2)),
    ]
    names = {s.name for s in pool} if chosen == "all" else set(filter(None, chosen.split(","))) or {
        "streamed_answer_restart_limit_1", "deferred_answer"}
    return [pytest.param(s, id=s.name) for s in pool if s.name in names]


@pytest.mark.parametrize("scenario", _depth2_cases())
async def test_a_second_crash_at_every_commit_boundary_of_the_recovery_keeps_every_invariant(scenario):
    """Depth 2: crash the first harness at every boundary, then the reopened one at every boundary
    of its recovery (restarts accumulate: the restart limit's ground). All scenarios with
    DURABLE_EXPLORE_DEPTH2=all."""
    exploration = await explore(scenario, depth=2)
    single = 2 * exploration.commits
    print(f"\n{exploration.summary()} ({single} single crashes, {exploration.crash_points - single} double)")
    assert exploration.crash_points > single
    # Concurrent tool tasks may commit in another order in a replay: a few second points are
    # then past the end of that replay's recovery (it crashed once, recovered, and was checked).
    assert len(exploration.missed) <= len(exploration.results) // 20, [r.only() for r in exploration.missed]
    exploration.assert_ok()
