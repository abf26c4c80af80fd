"""The explorer over a `FallbackModel`: the primary rejects the key, the secondary answers through a
tool round; a crash at every commit boundary (both sides) keeps every invariant of docs/spec.md
§6, attempts counted per member. And a deferred secondary: its job polled on it after any crash.
The same with real processes killed anywhere (`kill_test`)."""

from __future__ import annotations

from typing import Any

import pytest

from durable.models import FallbackModel
from durable.models.faux import call, error, reply
from durable.settings import StreamSettings
from durable.testing import explore
from durable.testing.explore import Driver, Scenario, World
from durable.testing.kill import kill_test
from durable.testing.scenarios import base_settings, lookup_tool
from durable.testing.scripts import by_input

pytestmark = pytest.mark.anyio


def _members(deferred: bool) -> FallbackModel:
    primary = by_input(default=error("Invalid API key", kind="auth", status_code=401), name="openai:gpt-4o")
    secondary = by_input({"Price?": [reply("Checking.", tool_calls=[call("lookup", {"q": "book"})]),
                                     reply("It costs 5 EUR.")]},
                         token_size=8, name="anthropic:claude-sonnet-4-5", deferred=deferred, polls=2)
    return FallbackModel([primary, secondary])


def _world(clock: Any) -> World:
    return World(_members(False), tools=[lookup_tool()], settings=base_settings())


def _deferred_world(clock: Any) -> World:
    return World(_members(True), tools=[lookup_tool()], settings=base_settings(stream=StreamSettings(deferred=True)))


async def _drive(d: Driver) -> None:
    await d.submit("Price?")


fallback_tool_round = Scenario("fallback_tool_round", _world, _drive)
fallback_deferred_secondary = Scenario("fallback_deferred_secondary", _deferred_world, _drive)


@pytest.mark.parametrize("scenario", [fallback_tool_round, fallback_deferred_secondary], ids=lambda s: s.name)
async def test_every_commit_boundary_of_a_fallback_run_keeps_every_invariant(scenario):
    exploration = await explore(scenario)
    print(f"\n{exploration.summary()}")
    assert exploration.commits > 0
    assert exploration.crash_points == 2 * exploration.commits, [str(r.point) for r in exploration.missed]
    exploration.assert_ok()


@pytest.mark.parametrize("name", ["fallback_tool_round", "fallback_deferred_secondary"])
def test_killing_the_agent_process_anywhere_in_a_fallback_run_keeps_every_invariant(name):
    report = kill_test(f"tests.crash.test_fallback_explore:{name}", kills=8, seed=1)
    print(f"\n{report.summary()}")
    report.assert_ok()
