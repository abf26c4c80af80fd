"""The provider part of a model's name ("openai" for "openai:gpt-4o"), as errors and reports name it."""

from __future__ import annotations


def provider_of(model: object) -> str | None:
    name = getattr(model, "name", None)
    return name.split(":", 1)[0] if isinstance(name, str) else None
