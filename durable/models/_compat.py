"""The dialects of the OpenAI-compatible servers people run locally, for `OpenAIModel(api="chat")`:
how a Chat Completions stream from Ollama, llama.cpp's `llama-server`, vLLM or LM Studio is read
back into protocol events where it differs from what api.openai.com sends. Each part states the
differences it absorbs, and what is done about each:

- `rejects_stream_options`: older builds and proxies refuse `stream_options`;
- `chat_usage`: usage comes in a last chunk, in the chunk with the `finish_reason`, or not at all;
- `ToolCallAssembler`: tool calls come in fragments with an `index`, whole, without an index,
  with one index repeated, or with their arguments as a JSON object;
- `chat_stop`: `finish_reason` values beyond OpenAI's, or none at all;
- `DoneWatch`: the `data: [DONE]` line, which the SDK swallows.

None of the four runs OpenAI background responses: `deferred=True` with `api="chat"` is refused
at construction (`BackgroundJobsUnsupported`), and with `api="responses"` a server that cannot
run them (no `/v1/responses`, `background` rejected, or answered at once as Ollama does) makes
`submit` raise a non-retryable `ModelError` naming the base URL (see `OpenAIModel`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from ..records import ModelStopReason, ToolCall, Usage
from ._sdk import get_field
from .protocol import ModelError

__all__ = ["DoneWatch", "ToolCallAssembler", "chat_stop", "chat_usage", "rejects_stream_options"]



def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def chat_usage(usage: Any) -> Usage:
    """A chunk's usage; a missing or odd field is 0.

    OpenAI sends usage only when asked (`stream_options`), in one last chunk with empty
    `choices`. Without `include_usage` a server may send none; llama.cpp and Ollama put it in the
    chunk that carries the `finish_reason`. The caller reads it from whichever chunk has it (the
    last one wins); none is `Usage(0, 0)`. OpenAI's `prompt_tokens_details.cached_tokens` and
    `completion_tokens_details.reasoning_tokens` are the cache reads and the reasoning part."""
    return Usage(_count(get_field(usage, "prompt_tokens")), _count(get_field(usage, "completion_tokens")),
                 reasoning_tokens=_count(get_field(get_field(usage, "completion_tokens_details"), "reasoning_tokens")),
                 cache_read_tokens=_count(get_field(get_field(usage, "prompt_tokens_details"), "cached_tokens")))


def rejects_stream_options(error: ModelError) -> bool:
    """Whether the server refused the request because of `stream_options`.

    OpenAI and the current versions of the four servers accept `{"include_usage": true}`, but
    older builds and some proxies in front of them reject the unknown field (HTTP 400, or 422
    from a FastAPI validator, whose message names `stream_options`). Such a request is sent again
    once without it, and the model instance stops sending it."""
    return error.status_code in (400, 422) and "stream_options" in f"{error.message} {error.raw!r}"


class ToolCallAssembler:
    """Tool-call fragments of a Chat Completions stream, in any of the dialects, to `ToolCall`s.

    OpenAI sends a call's id and name in its first fragment and the arguments in pieces, each
    with the call's `index`. Ollama and LM Studio send each whole call in one chunk; some servers
    (older llama.cpp and vLLM tool parsers) omit `index`, repeat index 0 for several calls with
    different ids, or give the arguments as a JSON object instead of a string. Each gives the
    same list: a fragment without an index belongs to the call with its id, else to a new call
    if it has a new id, else to the call at its position in the chunk (or the call being built);
    object arguments are `json.dumps`-ed; a call without an id gets `call_<n>`."""

    def __init__(self) -> None:
        self._slots: dict[int, dict[str, Any]] = {}  # key -> {"id", "name", "arguments"}
        self._alias: dict[int, int] = {}  # a server's index -> the slot it now continues
        self._last: int | None = None

    def _new(self) -> int:
        key = max(self._slots, default=-1) + 1
        self._slots[key] = {"id": None, "name": "", "arguments": []}
        return key

    def _key(self, part: Any, position: int, count: int) -> int:
        call_id = get_field(part, "id") or None
        index = get_field(part, "index")
        if isinstance(index, int) and not isinstance(index, bool):
            key = self._alias.get(index)
            if key is None:
                key = self._new()
            elif call_id and self._slots[key]["id"] not in (None, call_id):
                key = self._new()  # the same index again for another call
            self._alias[index] = key
            return key
        if call_id:
            for key, slot in self._slots.items():
                if slot["id"] == call_id:
                    return key
            return self._new()
        ordered = sorted(self._slots)
        if count > 1 and position < len(ordered):
            return ordered[position]
        return self._last if self._last is not None else self._new()

    def add(self, parts: Any) -> None:
        """The `tool_calls` of one chunk's delta."""
        if not isinstance(parts, list | tuple):
            return
        for position, part in enumerate(parts):
            key = self._key(part, position, len(parts))
            self._last = key
            slot = self._slots[key]
            slot["id"] = slot["id"] or get_field(part, "id") or None
            function = get_field(part, "function")
            slot["name"] = slot["name"] or get_field(function, "name") or ""
            arguments = get_field(function, "arguments")
            if isinstance(arguments, str):
                slot["arguments"].append(arguments)
            elif arguments is not None:
                slot["arguments"].append(json.dumps(arguments, ensure_ascii=False))

    def calls(self) -> tuple[ToolCall, ...]:
        """The calls so far, in the order they were opened, with unique ids."""
        out: list[ToolCall] = []
        seen: set[str] = set()
        for n, key in enumerate(sorted(self._slots)):
            slot = self._slots[key]
            call_id = slot["id"] if slot["id"] and slot["id"] not in seen else f"call_{n}"
            while call_id in seen:
                call_id += "_"
            seen.add(call_id)
            text = "".join(slot["arguments"])
            out.append(ToolCall(call_id, slot["name"], text if text.strip() else "{}"))
        return tuple(out)


_STOP: dict[str, ModelStopReason] = {
    "stop": "stop", "eos": "stop", "eos_token": "stop", "stop_sequence": "stop", "end_turn": "stop",
    "length": "length", "max_tokens": "length",
    "tool_calls": "tool_use", "function_call": "tool_use", "tool_use": "tool_use",
}


def chat_stop(finish: str | None, *, text: str, calls: bool, done: bool) -> tuple[ModelStopReason, str | None] | None:
    """The stop reason (and, for `error`, its message) of a finished Chat Completions stream, or
    None when the stream was cut (no finish reason and no `[DONE]`: a `connection` error). With
    calls, only a `tool_use` answer keeps them: the caller drops them for any other stop reason.

    Besides `stop`, `length`, `tool_calls`, `content_filter` and the legacy `function_call`,
    servers send `eos` / `eos_token` / `stop_sequence` (text-generation servers), `tool_calls`
    with no call in the message, `stop` for a message with tool calls (Ollama), `abort` (vLLM),
    or no finish reason at all before `data: [DONE]`. They map onto the model stop reasons as
    `check_final` wants them: calls always mean `tool_use` (unless the answer was cut by `length`
    or refused: then the calls, maybe truncated, are dropped); `tool_calls` / `function_call`
    without calls is `stop` when there is text and `error` when there is none; no finish reason
    after `[DONE]` is `stop`; any other value is `error`."""
    if finish is None:
        if not done:
            return None
        return ("tool_use" if calls else "stop"), None
    stop = _STOP.get(finish)
    if stop is None:
        return "error", f"OpenAI stopped the response: {finish}"
    if calls:
        return ("length", None) if stop == "length" else ("tool_use", None)
    if stop == "tool_use":
        if text:
            return "stop", None
        return "error", f"OpenAI stopped the response: finish_reason {finish!r} without any tool call or text"
    return stop, None


class DoneWatch:
    """Wraps the SSE decoder of an SDK stream to notice the `data: [DONE]` line, which the SDK
    swallows: a stream that ends after it without a finish reason ended on purpose."""

    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder
        self.done = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._decoder, name)

    async def aiter_bytes(self, iterator: Any) -> AsyncIterator[Any]:
        async for sse in self._decoder.aiter_bytes(iterator):
            if str(get_field(sse, "data") or "").startswith("[DONE]"):
                self.done = True
            yield sse

    @classmethod
    def attach(cls, stream: Any) -> DoneWatch | None:
        """Watch an SDK stream not iterated yet; None if this SDK's stream has no decoder to wrap."""
        decoder = getattr(stream, "_decoder", None)
        if decoder is None or not hasattr(decoder, "aiter_bytes"):
            return None
        watch = cls(decoder)
        stream._decoder = watch
        return watch
