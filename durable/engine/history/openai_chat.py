"""The OpenAI chat format: `{"role": "user" | "assistant" | "tool", "content": ...}` messages,
an assistant's `tool_calls` (`{"id", "type": "function", "function": {"name", "arguments"}}`)
and a tool message's `tool_call_id`; content a string, null, or a list of `text` (or
`refusal`) parts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...records import Entry, ToolCall
from .build import NO_IMAGES, Bad, Builder, arguments_json, joined_text, text_of

_TEXTS = {"text": "text", "refusal": "refusal"}
_REFUSED = {"image_url": NO_IMAGES, "input_audio": "audio parts cannot be imported",
            "file": "file parts cannot be imported"}


def convert(messages: Sequence[Mapping[str, Any]]) -> list[Entry]:
    out = Builder()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "user":
            out.user(i, _content(m, i))
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            if not isinstance(calls, list):
                raise Bad(i, "tool_calls", "expected a list")
            out.assistant(i, _content(m, i, optional=True), [_call(c, i, j) for j, c in enumerate(calls)])
        elif role == "tool":
            out.result(i, "tool_call_id", m.get("tool_call_id"), _content(m, i))
        elif role in ("system", "developer"):
            raise Bad(i, "role", f"{role} messages are not history: give them as the harness's instructions")
        else:
            raise Bad(i, "role", f"expected 'user', 'assistant' or 'tool', got {role!r}")
    return out.finish(len(messages))


def _content(m: Mapping[str, Any], i: int, *, optional: bool = False) -> str:
    content = m.get("content")
    if content is None and (optional or "content" in m):
        return ""
    return joined_text(content, i, "content", _TEXTS, _REFUSED, "'text'")


def _call(call: Any, i: int, j: int) -> tuple[ToolCall, str]:
    field = f"tool_calls[{j}]"
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        raise Bad(i, f"{field}.function", "expected an object with the name and arguments")
    name = text_of(function.get("name"), i, f"{field}.function.name")
    arguments = arguments_json(function.get("arguments", "{}"), i, f"{field}.function.arguments")
    return ToolCall(text_of(call.get("id"), i, f"{field}.id"), name, arguments), f"{field}.id"


__all__ = ["convert"]
