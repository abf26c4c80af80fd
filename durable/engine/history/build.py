"""What every history converter shares: `Bad` (a message that cannot be imported, by index and
field) and `Builder`, which turns a history's user messages, assistant messages and tool results
into entries, matching each result to its call (by id, before any later message)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...records import AssistantEntry, Entry, ToolCall, ToolResultEntry, UserEntry

NO_IMAGES = "image parts cannot be imported: durable has no image entries"


class Bad(Exception):
    """Message `index` cannot be imported: `field` (a path in it) and what is wrong with it."""

    def __init__(self, index: int, field: str, problem: str) -> None:
        super().__init__(index, field, problem)
        self.index, self.field, self.problem = index, field, problem


def messages_of(history: object) -> Sequence[Mapping[str, Any]]:
    """The messages of a history: a list of objects (`Bad` at the first that is not one)."""
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
        raise Bad(0, "(history)", f"a history is a list of messages, not {type(history).__name__}")
    for i, message in enumerate(history):
        if not isinstance(message, Mapping):
            raise Bad(i, "(message)", f"a message is an object, not {type(message).__name__}")
    return history


def text_of(value: Any, index: int, field: str) -> str:
    """A field that must be a string."""
    if not isinstance(value, str):
        raise Bad(index, field, f"expected a string, got {type(value).__name__}")
    return value


def joined_text(content: Any, index: int, field: str, texts: Mapping[str, str], refused: Mapping[str, str],
                expected: str) -> str:
    """A content that is a string, or a list of parts: the text of every part whose type is in
    `texts` (mapped to the key holding its text), joined; a part whose type is in `refused` is
    `Bad` with that sentence, any other type `Bad` saying what was `expected`."""
    if not isinstance(content, list):
        return text_of(content, index, field)
    out = []
    for j, part in enumerate(content):
        kind = str(part.get("type")) if isinstance(part, Mapping) else "(not an object)"
        if kind in texts:
            out.append(text_of(part.get(texts[kind]), index, f"{field}[{j}].{texts[kind]}"))
        elif kind in refused:
            raise Bad(index, f"{field}[{j}]", refused[kind])
        else:
            raise Bad(index, f"{field}[{j}].type", f"expected {expected}, got {kind!r}")
    return "".join(out)


def arguments_json(value: Any, index: int, field: str) -> str:
    """A tool call's arguments as JSON text: a string holding a JSON object, or an object."""
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    text = text_of(value, index, field)
    try:
        parsed = json.loads(text or "{}")
    except ValueError as exc:
        raise Bad(index, field, f"not JSON text ({exc})") from None
    if not isinstance(parsed, dict):
        raise Bad(index, field, "the arguments are not a JSON object")
    return text


class Builder:
    """Entries in the making (see the module docstring)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._open: dict[str, tuple[str, int, str]] = {}  # call id -> tool name, message index, field
        self._seen: set[str] = set()

    def user(self, index: int, text: str) -> None:
        self._closed(index)
        self.entries.append(UserEntry(text))

    def assistant(self, index: int, text: str, calls: Sequence[tuple[ToolCall, str]]) -> None:
        """An assistant message: its text and its tool calls, each with its field (for errors)."""
        self._closed(index)
        for call, field in calls:
            if not call.id or not call.name:
                raise Bad(index, field, "a tool call needs a non-empty id and name")
            if call.id in self._seen:
                raise Bad(index, field, f"tool call id {call.id!r} is used twice")
            self._seen.add(call.id)
            self._open[call.id] = (call.name, index, field)
        tool_calls = tuple(call for call, _ in calls)
        self.entries.append(AssistantEntry(text, "tool_use" if tool_calls else "stop", tool_calls))

    def result(self, index: int, field: str, call_id: Any, content: str, is_error: bool = False) -> None:
        """The result of tool call `call_id` (`field`: where the id is)."""
        opened = self._open.pop(text_of(call_id, index, field), None)
        if opened is None:
            raise Bad(index, field, f"no tool call {call_id!r} before it is waiting for a result")
        self.entries.append(ToolResultEntry(call_id, opened[0], content, is_error))

    def finish(self, count: int) -> list[Entry]:
        self._closed(count)
        return self.entries

    def _closed(self, index: int) -> None:
        """Every call made so far has its result (the next message, `index`, comes after them)."""
        for call_id, (_, at, field) in self._open.items():
            raise Bad(at, field, f"tool call {call_id!r} has no result before message {index}")


__all__ = ["NO_IMAGES", "Bad", "Builder", "arguments_json", "joined_text", "messages_of", "text_of"]
