"""A crash at every commit boundary of a run with model settings (the explorer): every request the
reopened harness sends asks for the settings stored with the run, not for the reopening harness's
own (which differ), and every invariant holds."""

from __future__ import annotations

from typing import Any

import pytest

from durable import ModelSettings
from durable.models.faux import call, reply
from durable.testing import Driver, Scenario, World, explore
from durable.testing.scenarios import base_settings, lookup_tool
from durable.testing.scripts import by_input

pytestmark = pytest.mark.anyio

ASKED = ModelSettings(temperature=0.3, top_p=0.9, seed=7, tool_choice="auto", extra={"user": "u-1"})


def _world(clock: Any) -> World:
    def checked(step: Any) -> Any:
        def answer(request: Any) -> Any:
            if request.settings != ASKED:
                return reply(f"WRONG SETTINGS {request.settings!r}")
            return step

        return answer

    model = by_input({"Price?": [checked(reply("Let me look.", tool_calls=[call("lookup", {"q": "book"})])),
                                 checked(reply("5 EUR, with the stored settings."))]}, token_size=8)
    return World(model, tools=[lookup_tool()],
                 settings=base_settings(model_settings=ModelSettings(temperature=0.3, tool_choice="auto")),
                 reopen_settings=base_settings(model_settings=ModelSettings(temperature=0.9, max_tokens=5)))


async def _drive(d: Driver) -> None:
    """The harness's settings, a conversation handle's and the input's (`ASKED` merged)."""
    handle = d.harness.conversation("root", model_settings=ModelSettings(top_p=0.9, extra={"user": "u-1"}))
    sub = await handle.submit("Price?", model_settings=ModelSettings(seed=7))
    d.acknowledged.append(sub.id)


model_settings = Scenario("model_settings", _world, _drive)


async def test_every_crash_point_sends_the_stored_settings_again():
    exploration = await explore(model_settings)
    print(f"\n{exploration.summary()}")
    assert exploration.commits > 0
    exploration.assert_ok()
    answered = 0
    for result in [exploration.baseline, *exploration.results]:
        assert "WRONG SETTINGS" not in result.transcript
        if "Price?" in result.transcript:  # the input was committed before the crash: it is answered
            assert "5 EUR, with the stored settings." in result.transcript, result.transcript
            answered += 1
    assert answered == len(exploration.results)  # the baseline, and every crash but the one before the input
