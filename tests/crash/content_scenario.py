"""A scenario for a process-kill test of an input with an image (`test_content_kill`): the child
process submits text and a 200 kB image to a real provider adapter pointed at the parent's
127.0.0.1 server (`DURABLE_CONTENT_SERVER`, API `DURABLE_CONTENT_API`), then settles. Imported by
the child as `tests.crash.content_scenario:IMAGE_REQUEST`."""

from __future__ import annotations

import os
import random
from typing import Any

import durable
from durable.models.anthropic import AnthropicModel
from durable.models.openai import OpenAIModel
from durable.testing.explore import Driver, Scenario, World
from durable.testing.scenarios import base_settings

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
