"""Process kills of a `FallbackModel` run (`durable.testing.scenarios.MODELS`): the primary rejects
the key, the secondary answers through a tool round (streamed, or as deferred jobs polled on it);
killed anywhere, every invariant of docs/spec.md §6 holds, attempts counted per member. (The
explorer covers their every commit boundary with the other scenarios, tests/crash/test_explore.py.)"""

from __future__ import annotations

import pytest

from durable.testing import scenarios
from durable.testing.kill import kill_test


@pytest.mark.parametrize("name", [s.name for s in scenarios.MODELS])
def test_killing_the_agent_process_anywhere_in_a_fallback_run_keeps_every_invariant(name):
    report = kill_test(name, kills=8, seed=1)
    print(f"\n{report.summary()}")
    report.assert_ok()
