"""A reasoning model's tool loop under the crash toolkit: the explorer crashes it at every commit
boundary (each reasoning delta is one: `persist_within=0`), and `kill_test` SIGKILLs a child
process running it at random commits and reopens it; every invariant holds after each, among them
that a partial reasoning block stays on an aborted entry and that no request carried one."""

from __future__ import annotations

import pytest

from durable.testing import explore, kill_test, scenarios

pytestmark = pytest.mark.anyio


async def test_a_crash_at_every_commit_boundary_of_a_reasoning_tool_loop_keeps_every_invariant():
    exploration = await explore(scenarios.reasoning_tool_loop)
    assert exploration.commits > 6  # the deltas of two reasoning streams, each a commit boundary
    assert exploration.crash_points == 2 * exploration.commits
    exploration.assert_ok()


def test_sigkilling_a_child_mid_reasoning_anywhere_keeps_every_invariant():
    report = kill_test("reasoning_tool_loop", kills=8, seed=3)
    print(f"\n{report.summary()}")
    assert report.kills >= 8
    report.assert_ok()
