"""Process kills: the agent runs in a child process that is killed with SIGKILL at random times
and at exact commit boundaries, reopened (and sometimes killed again), and finally settled and
closed; every invariant must hold. Seeded and bounded: `DURABLE_KILL_SEED` (default 1) picks the
plans, `DURABLE_KILLS` (default 35) the kills per scenario. `pytest -s` prints the counts."""

from __future__ import annotations

import os

import pytest

from durable.testing import scenarios
from durable.testing.kill import kill_test

SEED = int(os.environ.get("DURABLE_KILL_SEED", "1"))
KILLS = int(os.environ.get("DURABLE_KILLS", "35"))


@pytest.mark.parametrize("name", [s.name for s in scenarios.REQUIRED])
def test_killing_the_agent_process_anywhere_keeps_every_invariant(name):
    report = kill_test(name, kills=KILLS, seed=SEED)
    print(f"\n{report.summary()}")
    assert report.kills >= KILLS
    report.assert_ok()


@pytest.mark.parametrize("name", [s.name for s in scenarios.TOOL_OPTIONS])
def test_killing_the_agent_process_while_calls_wait_for_approval_retry_or_time_out_keeps_every_invariant(name):
    report = kill_test(name, kills=max(1, KILLS // 3), seed=SEED)
    print(f"\n{report.summary()}")
    assert report.kills >= max(1, KILLS // 3)
    report.assert_ok()


def test_a_child_can_be_a_fresh_interpreter_running_python_m_durable_testing_child():
    report = kill_test("tool_round", kills=3, seed=SEED, spawn="exec")
    print(f"\n{report.summary()}")
    assert report.kills >= 3
    report.assert_ok()


@pytest.mark.parametrize("name", ["dynamic_instructions", "structured_output_retry", "usage_limit"])
def test_killing_the_agent_process_keeps_every_invariant_with_instructions_structured_output_and_limits(name):
    report = kill_test(name, kills=max(5, KILLS // 3), seed=SEED)
    print(f"\n{report.summary()}")
    assert report.kills >= max(5, KILLS // 3)
    report.assert_ok()


def test_killing_the_agent_process_while_a_tool_streams_a_long_output_keeps_every_invariant():
    """The output grows beside the file, its task row stamped again in transactions whose gains
    are tagged records there: a kill anywhere, the COMMIT of such a transaction included."""
    report = kill_test("long_tool_output", kills=KILLS, seed=SEED)
    print(f"\n{report.summary()}")
    assert report.kills >= KILLS
    report.assert_ok()
