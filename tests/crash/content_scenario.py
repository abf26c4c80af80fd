"""Scenarios with images. `IMAGE_REQUEST`, for the process-kill test (`test_content_kill`): the
child process submits text and a 200 kB image to a real provider adapter pointed at the parent's
127.0.0.1 server (`DURABLE_CONTENT_SERVER`, API `DURABLE_CONTENT_API`), then settles (imported by
the child as `tests.crash.content_scenario:IMAGE_REQUEST`). `IMAGE_TOOL_ROUND`, for the explorer:
an input with an image, a safe and an unsafe tool each returning an image (the safe one the same
screenshot as the input), then the answer, on the faux model."""

from __future__ import annotations

import os
import random
from typing import Any

import durable
from durable.models.anthropic import AnthropicModel
from durable.models.faux import call, reply
from durable.models.openai import OpenAIModel
from durable.testing.explore import Driver, Scenario, World
from durable.testing.scenarios import base_settings
from durable.testing.scripts import by_input

PICTURE = b"\x89PNG\r\n\x1a\n" + random.Random(3).randbytes(200_000)
KEY = "sk-test-0123456789abcdef"


def model() -> Any:
    url, api = os.environ["DURABLE_CONTENT_SERVER"], os.environ["DURABLE_CONTENT_API"]
    if api == "anthropic":
        return AnthropicModel("claude-test", api_key=KEY, base_url=url)
    return OpenAIModel("gpt-test" if api == "responses" else "llama", api=api, api_key=KEY,  # type: ignore[arg-type]
                       base_url=url + "/v1")


def setup(clock: Any) -> World:
    return World(model=model(), settings=base_settings())


async def drive(driver: Driver) -> None:
    await driver.submit(["What is on this screenshot?", durable.Image(PICTURE)])


IMAGE_REQUEST = Scenario("image_request", setup, drive)


SCREEN = b"\x89PNG\r\n\x1a\n" + random.Random(4).randbytes(3_000)
RECEIPT = b"%PDF-1.7\n" + random.Random(5).randbytes(2_000)


def tools() -> list[durable.Tool]:
    async def screenshot(args: Any, api: Any, ctx: Any) -> Any:
        await api.output("capturing")
        return ["The screen", durable.Image(SCREEN)]

    async def pay(args: Any, api: Any, ctx: Any) -> Any:
        await api.output("paying")
        return durable.File(RECEIPT)

    return [durable.define_tool("screenshot", "Capture the screen", replay="safe", execute=screenshot),
            durable.define_tool("pay", "Pay (not safe to repeat)", execute=pay)]


def tool_world(clock: Any) -> World:
    model = by_input({"Pay what is on my screen": [
        reply("Looking.", tool_calls=[call("screenshot", {}), call("pay", {})]),
        reply("Paid; the receipt is attached."),
    ]}, token_size=8)
    return World(model, tools=tools(), settings=base_settings())


async def drive_tools(driver: Driver) -> None:
    await driver.submit(["Pay what is on my screen", durable.Image(SCREEN)])


IMAGE_TOOL_ROUND = Scenario("image_tool_round", tool_world, drive_tools)
