"""A Responses API response read back into protocol records: the final message of a completed,
incomplete or failed response (its text, tool calls, reasoning items and usage), for
`durable.models.openai` (streamed and background responses alike)."""

from __future__ import annotations

from typing import Any

from ..records import ToolCall, Usage
from ._reasoning import output_reasoning
from ._sdk import get_field
from .errors import classify_status
from .protocol import FinalMessage, ModelError

__all__ = ["PROVIDER", "arguments", "failed", "response_message", "responses_usage"]

PROVIDER = "openai"


def arguments(text: str | None) -> str:
    """Raw JSON arguments; a tool called without arguments gets "{}" rather than ""."""
    return text if text and text.strip() else "{}"


def response_message(response: Any, streamed_text: str | None = None) -> FinalMessage:
    """The final message of a completed or incomplete Responses API response."""
    text_parts: list[str] = []
    calls: list[ToolCall] = []
    for item in get_field(response, "output") or []:
        kind = get_field(item, "type")
        if kind == "message":
            for part in get_field(item, "content") or []:
                if get_field(part, "type") == "output_text":
                    text_parts.append(get_field(part, "text") or "")
                elif get_field(part, "type") == "refusal":
                    text_parts.append(get_field(part, "refusal") or "")
        elif kind == "function_call":
            calls.append(ToolCall(get_field(item, "call_id") or get_field(item, "id") or f"call_{len(calls)}",
                                  get_field(item, "name") or "", arguments(get_field(item, "arguments"))))
    total = responses_usage(get_field(response, "usage"))
    text = streamed_text if streamed_text else "".join(text_parts)
    thought = output_reasoning(get_field(response, "output"))
    if get_field(response, "status") == "incomplete":
        reason = get_field(get_field(response, "incomplete_details"), "reason")
        if reason == "content_filter":
            return FinalMessage(text, "error", tuple(calls), total,
                                error="OpenAI stopped the response: content filter", reasoning=thought)
        return FinalMessage(text, "length", tuple(calls), total, reasoning=thought)
    return FinalMessage(text, "tool_use" if calls else "stop", tuple(calls), total, reasoning=thought)


def responses_usage(usage: Any) -> Usage:
    """A Responses API `usage`: input tokens (of which `input_tokens_details.cached_tokens` came
    from the prompt cache) and output tokens (of which `output_tokens_details.reasoning_tokens`
    were reasoning); a missing field is 0."""
    if not usage:
        return Usage()
    return Usage(get_field(usage, "input_tokens") or 0, get_field(usage, "output_tokens") or 0,
                 reasoning_tokens=get_field(get_field(usage, "output_tokens_details"), "reasoning_tokens") or 0,
                 cache_read_tokens=get_field(get_field(usage, "input_tokens_details"), "cached_tokens") or 0)


def failed(response: Any, secrets: tuple[str, ...]) -> ModelError:
    """The error of a response whose status is `failed`."""
    error = get_field(response, "error")
    body = {"code": get_field(error, "code"), "message": get_field(error, "message") or "The response failed"}
    return classify_status(None, body, provider=PROVIDER, api_key=secrets, default="server")
