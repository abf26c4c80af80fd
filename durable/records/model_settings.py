"""Typed model settings (`ModelSettings`): what a request asks of the model beyond its context.

Given per harness (`Settings.model_settings`, or the older `Settings.model_options` dict, converted
by `from_options`), per conversation handle and per submission, and merged in that order by
`merge` (a later field that is not None wins; `extra` dicts are merged key by key). The merged
settings of a run are stored with its generation task's input, so an attempt sent again after a
crash asks for the same. Each provider maps every field to its wire format or refuses it with
`UnsupportedModelSetting` (docs/spec.md §3); nothing here knows a provider.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import field, fields

from .._frozen import OMITTED_WHEN_DEFAULT, frozen
from ..errors import InvalidModelSettings

TOOL_CHOICES = ("auto", "required", "none")
"""The `tool_choice` values that are not a tool's name."""


def _stop(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


_OMIT = OMITTED_WHEN_DEFAULT


@frozen
class ModelSettings:
    """What a request asks of the model; None (the default of every field) leaves the choice to
    the next layer, then to the model's own defaults.

    `temperature`, `top_p`; `max_tokens` (of the answer); `stop` (sequences ending the answer);
    `seed`; `reasoning_effort` (a reasoning model's effort: "low", "medium", "high", ... as the
    provider names them); `thinking_budget` (tokens a model may think, Anthropic); `tool_choice`:
    "auto", "required" (some tool), "none" or the name of a tool; `parallel_tool_calls`;
    `service_tier`; `prompt_cache` (False: no cache breakpoints and no cache key are sent; None
    or True: placed automatically, see docs/models.md, prompt caching); `extra`: fields added to the
    request body as given (a later layer's key wins); `model`: the provider's model name for the
    request instead of the model's own (kept from `model_options`)."""

    temperature: float | None = field(default=None, metadata=_OMIT)
    top_p: float | None = field(default=None, metadata=_OMIT)
    max_tokens: int | None = field(default=None, metadata=_OMIT)
    stop: tuple[str, ...] | None = field(default=None, converter=_stop, metadata=_OMIT)
    seed: int | None = field(default=None, metadata=_OMIT)
    reasoning_effort: str | None = field(default=None, metadata=_OMIT)
    thinking_budget: int | None = field(default=None, metadata=_OMIT)
    tool_choice: str | None = field(default=None, metadata=_OMIT)
    parallel_tool_calls: bool | None = field(default=None, metadata=_OMIT)
    service_tier: str | None = field(default=None, metadata=_OMIT)
    prompt_cache: bool | None = field(default=None, metadata=_OMIT)
    extra: dict[str, Any] | None = field(default=None, metadata=_OMIT)
    model: str | None = field(default=None, metadata=_OMIT)

    def __attrs_post_init__(self) -> None:
        def bad(name: str, why: str) -> InvalidModelSettings:
            return InvalidModelSettings(f"ModelSettings.{name} {why}, not {getattr(self, name)!r}")

        for name in ("temperature", "top_p"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
                raise bad(name, "must be a number of at least 0")
        if self.top_p is not None and self.top_p > 1:
            raise bad("top_p", "must be at most 1")
        for name in ("max_tokens", "thinking_budget"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise bad(name, "must be a whole number of at least 1")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise bad("seed", "must be a whole number")
        if self.stop is not None and not all(isinstance(s, str) and s for s in self.stop):
            raise bad("stop", "must be non-empty strings")
        for name in ("reasoning_effort", "tool_choice", "service_tier", "model"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise bad(name, "must be a non-empty string")
        for name in ("parallel_tool_calls", "prompt_cache"):
            if getattr(self, name) not in (None, True, False):
                raise bad(name, "must be True, False or None")
        extra = self.extra
        if extra is not None and not (isinstance(extra, dict) and all(isinstance(k, str) for k in extra)):
            raise bad("extra", "must be a dict with string keys")
        try:
            json.dumps(extra, allow_nan=False)
        except (TypeError, ValueError):
            raise bad("extra", "must hold JSON values (it is sent and stored as JSON)") from None

    def merged(self, later: ModelSettings | None) -> ModelSettings:
        """These settings with `later`'s fields that are not None (its `extra` keys added)."""
        if later is None or later == NO_SETTINGS:
            return self
        values = {f.name: getattr(self, f.name) for f in fields(ModelSettings)}
        for f in fields(ModelSettings):
            value = getattr(later, f.name)
            if value is not None:
                values[f.name] = {**(self.extra or {}), **value} if f.name == "extra" else value
        return ModelSettings(**values)

    def set_fields(self) -> tuple[str, ...]:
        """The names of the fields that are not None, in order."""
        return tuple(f.name for f in fields(ModelSettings) if getattr(self, f.name) is not None)

    def as_options(self) -> dict[str, Any]:
        """The fields the older `model_options` dict had (model, max_tokens, temperature), as that
        dict: what `ModelRequest.options` carries for models that read it."""
        return {name: getattr(self, name) for name in ("model", "max_tokens", "temperature")
                if getattr(self, name) is not None}


NO_SETTINGS = ModelSettings()


def merge(*layers: ModelSettings | None) -> ModelSettings:
    """The layers merged in order (harness, conversation, submission): a later field that is not
    None wins; `extra` dicts are merged key by key."""
    out = NO_SETTINGS
    for layer in layers:
        out = out.merged(layer)
    return out


_KNOWN = tuple(f.name for f in fields(ModelSettings))


def from_options(options: Mapping[str, Any], where: str = "Settings.model_options") -> ModelSettings:
    """The `model_options` dict as `ModelSettings` (its keys are the field names). An unknown key
    is `InvalidModelSettings` naming it and `where`: it was silently ignored before."""
    unknown = sorted(k for k in options if k not in _KNOWN)
    if unknown:
        raise InvalidModelSettings(
            f"{where} has unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(_KNOWN)}); use durable.ModelSettings")
    return ModelSettings(**dict(options))


__all__ = ["NO_SETTINGS", "TOOL_CHOICES", "ModelSettings", "from_options", "merge"]
