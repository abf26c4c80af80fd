"""The Anthropic messages format: `{"role": "user" | "assistant", "content": ...}`, content a
string or blocks: `text`, an assistant's `tool_use` (`id`, `name`, `input`), a user's
`tool_result` (`tool_use_id`, `content`, `is_error`) before its text. Thinking blocks are left
out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...records import Entry, ToolCall
from .build import NO_IMAGES, Bad, Builder, arguments_json, joined_text, text_of

_SKIPPED = ("thinking", "redacted_thinking")


def convert(messages: Sequence[Mapping[str, Any]]) -> list[Entry]:
    out = Builder()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("user", "assistant"):
            raise Bad(i, "role", f"expected 'user' or 'assistant', got {role!r}")
        content = m.get("content")
        if isinstance(content, str):
            if role == "user":
                out.user(i, content)
            else:
                out.assistant(i, content, [])
            continue
        if not isinstance(content, list):
            raise Bad(i, "content", f"expected a string or a list of blocks, got {type(content).__name__}")
        texts: list[str] = []
        calls: list[tuple[ToolCall, str]] = []
        for j, block in enumerate(content):
            kind = block.get("type") if isinstance(block, Mapping) else None
            field = f"content[{j}]"
            if kind == "text":
                texts.append(text_of(block.get("text"), i, f"{field}.text"))
            elif kind == "tool_use" and role == "assistant":
                calls.append((ToolCall(text_of(block.get("id"), i, f"{field}.id"),
                                       text_of(block.get("name"), i, f"{field}.name"),
                                       arguments_json(block.get("input", {}), i, f"{field}.input")), f"{field}.id"))
            elif kind == "tool_result" and role == "user":
                if texts:
                    raise Bad(i, field, "a tool result comes before the message's text")
                out.result(i, f"{field}.tool_use_id", block.get("tool_use_id"),
                           _result(block.get("content", ""), i, f"{field}.content"), block.get("is_error") is True)
            elif kind in ("image", "document"):
                raise Bad(i, field, NO_IMAGES if kind == "image" else "document blocks cannot be imported")
            elif kind not in _SKIPPED:
                raise Bad(i, f"{field}.type", f"a {role} message cannot hold a {kind!r} block")
        if role == "assistant":
            out.assistant(i, "".join(texts), calls)
        elif texts:
            out.user(i, "".join(texts))
    return out.finish(len(messages))


def _result(content: Any, i: int, field: str) -> str:
    return joined_text(content, i, field, {"text": "text"}, {"image": NO_IMAGES}, "'text'")


__all__ = ["convert"]
