"""The explorer over durable's own scenarios: every commit boundary, both sides, zero violations.

`pytest -s` prints how many crash points each scenario covered."""

from __future__ import annotations

import pytest

from durable.testing import explore, scenarios

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


def _evolve(value, **changes):
    import attrs

    return attrs.evolve(value, **changes)


@pytest.mark.parametrize("scenario", list(_cases()))
async def test_every_commit_boundary_of_the_scenario_keeps_every_invariant(scenario):
    exploration = await explore(scenario)
    print(f"\n{exploration.summary()}")
    assert exploration.commits > 0
    assert exploration.crash_points == 2 * exploration.commits, [str(r.point) for r in exploration.missed]
    exploration.assert_ok()
