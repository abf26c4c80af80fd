"""`ModelSettings` in each provider's wire format, and what each provider cannot honour.

`openai_fields` (Responses or Chat Completions) and `anthropic_fields` (Messages) give the body
fields of a request's settings, every field mapped or refused with `UnsupportedModelSetting`
naming the model and the setting: never silently dropped. The adapters' `check_settings` call
them before any request (when the harness is made, a conversation handle is made or an input is
submitted), and each request calls them again. `extra` is returned apart, for the SDK's
`extra_body` (the fields land in the body as given). Tool fields (`tool_choice`,
`parallel_tool_calls`) are sent only with tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

from ..errors import UnsupportedModelSetting
from ..records.model_settings import TOOL_CHOICES, ModelSettings
from .protocol import ModelRequest, ToolSpec, settings_of

__all__ = ["anthropic_fields", "openai_fields", "openai_params"]

OPENAI_HOST = "api.openai.com"
OPENAI_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
OPENAI_TIERS = ("auto", "default", "flex", "scale", "priority")
ANTHROPIC_EFFORTS = ("low", "medium", "high", "xhigh", "max")
ANTHROPIC_TIERS = ("auto", "standard_only")
ANTHROPIC_MIN_BUDGET = 1024


def _one_of(model: str, option: str, value: str, allowed: tuple[str, ...], provider: str) -> None:
    if value not in allowed:
        raise UnsupportedModelSetting(model, option, f"{provider} accepts {', '.join(map(repr, allowed))}, "
                                                     f"not {value!r}")


def openai_fields(model: str, api: Literal["responses", "chat"], s: ModelSettings, tools: Sequence[ToolSpec],
                  cache_key: str = "", official: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """The body fields of settings `s` for OpenAI's `api` (model, max_tokens and temperature
    excepted: the adapter merges those with its own defaults), and the `extra` fields.
    `cache_key` is sent as `prompt_cache_key` to OpenAI's own endpoint (`official`) unless
    `prompt_cache` is False, and to another (a compatible server, which may not know the
    field) only when `prompt_cache` is True."""
    where = "the Responses API" if api == "responses" else "Chat Completions"
    out: dict[str, Any] = {}
    if s.top_p is not None:
        out["top_p"] = s.top_p
    for option, value in (("stop", None if s.stop is None else list(s.stop)), ("seed", s.seed)):
        if value is not None:
            if api == "responses":
                raise UnsupportedModelSetting(model, option, f'{where} has no {option} (OpenAIModel(api="chat") has)')
            out[option] = value
    if s.thinking_budget is not None:
        raise UnsupportedModelSetting(model, "thinking_budget", "OpenAI has no thinking budget in tokens "
                                                                "(use reasoning_effort)")
    if s.reasoning_effort is not None:
        _one_of(model, "reasoning_effort", s.reasoning_effort, OPENAI_EFFORTS, "OpenAI")
        if api == "responses":
            out["reasoning"] = {"effort": s.reasoning_effort}
        else:
            out["reasoning_effort"] = s.reasoning_effort
    if s.service_tier is not None:
        _one_of(model, "service_tier", s.service_tier, OPENAI_TIERS, "OpenAI")
        out["service_tier"] = s.service_tier
    if tools and s.tool_choice is not None:
        if s.tool_choice in TOOL_CHOICES:
            out["tool_choice"] = s.tool_choice
        elif api == "responses":
            out["tool_choice"] = {"type": "function", "name": s.tool_choice}
        else:
            out["tool_choice"] = {"type": "function", "function": {"name": s.tool_choice}}
    if tools and s.parallel_tool_calls is not None:
        out["parallel_tool_calls"] = s.parallel_tool_calls
    if cache_key and (s.prompt_cache or (s.prompt_cache is None and official)):
        out["prompt_cache_key"] = cache_key
    return out, dict(s.extra or {})


def openai_params(model: Any, request: ModelRequest, params: dict[str, Any], max_tokens_field: str) -> dict[str, Any]:
    """`params` with `request`'s settings for the OpenAI `model`: model name, max tokens (as
    `max_tokens_field`) and temperature (the model's defaults under them), every other field,
    and `extra` (in `extra_body`, for the SDK)."""
    s = settings_of(request)
    official = urlsplit(model.base_url).hostname == OPENAI_HOST
    fields, extra = openai_fields(model.name, model.api, s, request.tools, request.cache_key, official)
    params["model"] = s.model or model.model
    max_tokens = s.max_tokens if s.max_tokens is not None else model.max_tokens
    if max_tokens is not None:
        params[max_tokens_field] = max_tokens
    temperature = s.temperature if s.temperature is not None else model.temperature
    if temperature is not None:
        params["temperature"] = temperature
    params.update(fields)
    if extra:
        params["extra_body"] = extra
    return params


def anthropic_fields(model: str, s: ModelSettings, tools: Sequence[ToolSpec], *, max_tokens: int,
                     structured: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The Messages body fields of settings `s` (model, max_tokens and temperature excepted: the
    adapter merges those with its own defaults; `max_tokens` is the one sent), and the `extra`
    fields. `structured`: the request forces the `final_result` tool (structured output)."""
    out: dict[str, Any] = {}
    if s.seed is not None:
        raise UnsupportedModelSetting(model, "seed", "Anthropic's Messages API has no seed")
    if s.top_p is not None:
        out["top_p"] = s.top_p
    if s.stop is not None:
        out["stop_sequences"] = list(s.stop)
    if s.reasoning_effort is not None:
        _one_of(model, "reasoning_effort", s.reasoning_effort, ANTHROPIC_EFFORTS, "Anthropic")
        out["output_config"] = {"effort": s.reasoning_effort}
    if s.thinking_budget is not None:
        if not ANTHROPIC_MIN_BUDGET <= s.thinking_budget < max_tokens:
            raise UnsupportedModelSetting(model, "thinking_budget", f"Anthropic needs at least "
                                          f"{ANTHROPIC_MIN_BUDGET} and below max_tokens ({max_tokens}), "
                                          f"not {s.thinking_budget}")
        if s.temperature is not None:
            raise UnsupportedModelSetting(model, "temperature", "Anthropic refuses a temperature while thinking "
                                                                "(thinking_budget is set)")
        if structured or s.tool_choice not in (None, "auto", "none"):
            raise UnsupportedModelSetting(model, "thinking_budget", "Anthropic refuses a forced tool call while "
                                          "thinking (tool_choice 'required' or a tool's name, or structured output)")
        out["thinking"] = {"type": "enabled", "budget_tokens": s.thinking_budget}
    if s.service_tier is not None:
        _one_of(model, "service_tier", s.service_tier, ANTHROPIC_TIERS, "Anthropic")
        out["service_tier"] = s.service_tier
    if structured and s.tool_choice is not None:
        raise UnsupportedModelSetting(model, "tool_choice", "a structured answer is asked for through a forced "
                                                            "tool on Anthropic, which leaves no other tool choice")
    if tools and (s.tool_choice is not None or s.parallel_tool_calls is not None):
        choice = s.tool_choice or "auto"
        if choice == "none":
            out["tool_choice"] = {"type": "none"}
        else:
            out["tool_choice"] = ({"type": "auto"} if choice == "auto" else {"type": "any"} if choice == "required"
                                  else {"type": "tool", "name": choice})
            if s.parallel_tool_calls is not None:
                out["tool_choice"]["disable_parallel_tool_use"] = not s.parallel_tool_calls
    return out, dict(s.extra or {})
