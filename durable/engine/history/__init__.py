"""Importing an existing history into a conversation (`Conversation.seed`): the OpenAI chat, OpenAI
Responses and Anthropic messages formats, each converted to entries by its own module
(`openai_chat`, `openai_responses`, `anthropic`, over `build`), then written as one commit.

Only an idle, empty conversation takes a history; it stays idle (no run starts). A message that
cannot be imported is `InvalidHistory`, naming its index and field, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from ...errors import InvalidHistory, InvalidInput
from ...records import Entry
from ..session import Session
from . import anthropic, openai_chat, openai_responses
from .build import Bad, messages_of

Format = Literal["openai_chat", "openai_responses", "anthropic"]

CONVERTERS: dict[str, Callable[[Sequence[Mapping[str, Any]]], list[Entry]]] = {
    "openai_chat": openai_chat.convert,
    "openai_responses": openai_responses.convert,
    "anthropic": anthropic.convert,
}

_RESPONSES_ITEMS = ("message", "function_call", "function_call_output", "reasoning")
_PARTS: dict[str, Format] = {
    "input_text": "openai_responses", "output_text": "openai_responses", "input_image": "openai_responses",
    "tool_use": "anthropic", "tool_result": "anthropic", "image": "anthropic", "thinking": "anthropic",
    "image_url": "openai_chat",
}


def detect(messages: Sequence[Mapping[str, Any]]) -> Format:
    """The format a history is in, by its first telling item: Responses items or parts, chat tool
    messages or tool calls, Anthropic blocks. A history of plain text messages reads the same in
    all three (taken as chat)."""
    for m in messages:
        if m.get("type") in _RESPONSES_ITEMS:
            return "openai_responses"
        if m.get("role") == "tool" or "tool_calls" in m or "tool_call_id" in m:
            return "openai_chat"
        content = m.get("content")
        for part in content if isinstance(content, list) else ():
            found = _PARTS.get(str(part.get("type"))) if isinstance(part, Mapping) else None
            if found is not None:
                return found
    return "openai_chat"


async def seed(session: Session, conversation_id: str, history: object, format: str | None) -> int:
    """Convert `history` and commit its entries to the idle, empty conversation; returns their count."""
    location = session.storage.location
    fmt = format
    try:
        messages = messages_of(history)
        fmt = detect(messages) if format is None else format
        if fmt not in CONVERTERS:
            raise InvalidInput(f"format must be one of {', '.join(map(repr, CONVERTERS))}, not {format!r}")
        entries = CONVERTERS[fmt](messages)
    except Bad as bad:
        named = "" if fmt is None else f" ({fmt})"
        raise InvalidHistory(f"Message {bad.index} of the history for conversation {conversation_id!r}{named} "
                             f"cannot be imported: {bad.field}: {bad.problem}; nothing was written to {location}"
                             ) from None
    conv = session.conversation(conversation_id)
    if conv.last_seq or conv.live.run is not None or conv.queued:
        raise InvalidInput(f"Conversation {conversation_id!r} in {location} is not idle and empty (last seq "
                           f"{conv.last_seq}); a history is imported only into a new conversation")
    change = session.change()
    for entry in entries:
        change.append(conversation_id, entry)
    change.put_live(conversation_id, conv.live)
    await session.commit(change)
    return len(entries)


__all__ = ["CONVERTERS", "Format", "detect", "seed"]
