"""The model behind `durable demo --model`: the scripted faux model (no key), or OpenAI,
Anthropic or Gemini (imported only when chosen; a missing key raises `MissingCredentials`)."""

from __future__ import annotations

import os
from typing import Any

from .demo_model import DemoModel, make_answer


def make_model(kind: str, db: str, speed: float) -> Any:
    """The model for `--model`. Raises `MissingCredentials` (a ValueError) without a key."""
    name = os.environ.get("DURABLE_DEMO_MODEL")
    if kind == "openai":
        from durable.models.openai import OpenAIModel

        api = os.environ.get("DURABLE_DEMO_OPENAI_API", "responses")
        return OpenAIModel(name or "gpt-4o-mini", api=api)  # type: ignore[arg-type]  # checked by OpenAIModel
    if kind == "anthropic":
        from durable.models.anthropic import AnthropicModel

        return AnthropicModel(name or "claude-3-5-haiku-latest")
    if kind == "google":
        from durable.models.gemini import GeminiModel

        return GeminiModel(name or "gemini-2.5-flash")
    return DemoModel(make_answer(db, speed), speed)
