"""The OpenAI Responses input format: message items (`{"role", "content"}`, `"type": "message"`
optional; content a string or `input_text` / `output_text` / `refusal` parts), `function_call`
items (`call_id`, `name`, `arguments`) joined to the assistant message before them, and
`function_call_output` items (`call_id`, `output`). Reasoning items are left out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...records import Entry, ToolCall
from .build import NO_IMAGES, Bad, Builder, arguments_json, joined_text, text_of

_TEXTS = {"input_text": "text", "output_text": "text", "text": "text", "refusal": "refusal"}
_REFUSED = {"input_image": NO_IMAGES, "input_file": "file parts cannot be imported"}


def convert(items: Sequence[Mapping[str, Any]]) -> list[Entry]:
    out = Builder()
    pending: tuple[int, str, list[tuple[ToolCall, str]]] | None = None  # an assistant message being built

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            out.assistant(*pending)
            pending = None

    for i, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call":
            call = ToolCall(text_of(item.get("call_id"), i, "call_id"), text_of(item.get("name"), i, "name"),
                            arguments_json(item.get("arguments", "{}"), i, "arguments"))
            if pending is None:
                pending = (i, "", [])
            pending[2].append((call, "call_id"))
            continue
        flush()
        if kind == "function_call_output":
            out.result(i, "call_id", item.get("call_id"), _text(item.get("output"), i, "output"))
        elif kind == "reasoning":
            continue
        elif kind != "message":
            raise Bad(i, "type", f"expected 'message', 'function_call' or 'function_call_output', got {kind!r}")
        elif item.get("role") == "user":
            out.user(i, _text(item.get("content"), i, "content"))
        elif item.get("role") == "assistant":
            pending = (i, _text(item.get("content"), i, "content"), [])
        elif item.get("role") in ("system", "developer"):
            raise Bad(i, "role", f"{item.get('role')} messages are not history: give them as the harness's "
                                 f"instructions")
        else:
            raise Bad(i, "role", f"expected 'user' or 'assistant', got {item.get('role')!r}")
    flush()
    return out.finish(len(items))


def _text(content: Any, i: int, field: str) -> str:
    return joined_text(content, i, field, _TEXTS, _REFUSED, "'input_text' or 'output_text'")


__all__ = ["convert"]
