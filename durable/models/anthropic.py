"""Anthropic behind the model protocol: Messages streaming, and Message Batches for deferred mode.

Owns the conversion of conversation records to Anthropic messages and of the Messages stream
back to protocol events. Invariants:
- `stream` yields text deltas, each tool call once its `input_json_delta`s are complete, and
  `UsageEvent`s, and ends with exactly one `FinalMessage`; a stream that ends before its
  `message_delta` stop reason raises `ModelError(kind="connection")`. Usage is cumulative: each
  `UsageEvent` replaces the one before (one when the message starts, with the input tokens; one
  with the total just before the final message).
- Every provider failure, including an `error` event inside a stream, leaves as a classified
  `ModelError` without the API key in it.
- The SDK never retries (`max_retries=0`): the harness owns retries.
- The `anthropic` package is imported when a model is constructed, never when `durable` or
  `durable.models` is imported.
- Consecutive user-side entries (tool results, user text, a summary) become one user message,
  tool results first as the API requires after a `tool_use` turn.
- Structured output (`request.output`) is a `final_result` tool the model must call (the only
  choice without other tools); its input, streamed as text, is the answer (`_answered`).
- Extended thinking streams as `ReasoningDelta`s; its blocks (signed, or redacted) are sent
  back unchanged (`durable.models._reasoning`). Its tokens are in `output_tokens`, not apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..records import (
    AssistantEntry,
    CompactionEntry,
    Entry,
    ModelStopReason,
    Reasoning,
    ToolCall,
    ToolResultEntry,
    Usage,
    UserEntry,
)
from ..records.model_settings import ModelSettings
from ._reasoning import ANTHROPIC, ThinkingBlocks, anthropic_block, anthropic_reasoning
from ._sdk import SUMMARY_PREFIX, SDKModel, api_key_from, get_field, import_sdk, scrubbed
from .caching import mark_anthropic
from .content import anthropic_blocks
from .errors import END, classify_status, close_quietly
from .protocol import (
    OUTPUT_TOOL,
    DeferredHandle,
    FetchResult,
    FinalMessage,
    ModelError,
    ModelRequest,
    ReasoningDelta,
    StillRunning,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    UsageEvent,
    sendable_reasoning,
    settings_of,
)
from .settings_wire import anthropic_fields

__all__ = ["AnthropicModel", "anthropic_messages", "batch_custom_id"]

PROVIDER = "anthropic"

_STOP: dict[str, ModelStopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_use",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}

_SDK_ARGUMENTS = frozenset({"model", "max_tokens", "messages", "system", "tools", "tool_choice", "stream",
                            "stop_sequences", "thinking", "service_tier", "metadata", "output_config"})
"""The body fields `messages.create` takes as arguments; the others go in `extra_body`."""



def _plain(obj: Any) -> Any:
    """An SDK model as plain data (for error bodies)."""
    dump = getattr(obj, "model_dump", None)
    return dump() if callable(dump) else obj


def _tool_input(arguments: str) -> dict[str, Any]:
    """A tool call's JSON arguments as the object Anthropic wants; arguments that are not a
    JSON object (invalid, truncated, empty) are sent as `{}`."""
    try:
        value = json.loads(arguments)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def batch_custom_id(key: str) -> str:
    """A request key as a batch `custom_id` (1-64 of `[A-Za-z0-9_-]`)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", key)[:64] or "request"


# --------------------------------------------------------------------------- records -> wire


def anthropic_messages(messages: Sequence[Entry], attachments: Mapping[str, bytes] = {}) -> list[dict[str, Any]]:
    """The Messages API `messages` for a conversation (`attachments`: the bytes of its images and
    files, by sha256, sent as blocks: `durable.models.content`)."""
    out: list[dict[str, Any]] = []
    user_blocks: list[dict[str, Any]] = []

    def flush_user() -> None:
        if not user_blocks:
            return
        if len(user_blocks) == 1 and user_blocks[0]["type"] == "text":
            out.append({"role": "user", "content": user_blocks[0]["text"]})
        else:
            out.append({"role": "user", "content": list(user_blocks)})
        user_blocks.clear()

    for entry in messages:
        if isinstance(entry, UserEntry):
            user_blocks.extend(anthropic_blocks(entry.parts, attachments) if entry.parts
                               else [{"type": "text", "text": entry.text}])
        elif isinstance(entry, CompactionEntry):
            user_blocks.append({"type": "text", "text": SUMMARY_PREFIX + entry.summary})
        elif isinstance(entry, ToolResultEntry):
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": entry.call_id,
                                     "is_error": entry.is_error}
            if entry.parts:
                block["content"] = anthropic_blocks(entry.parts, attachments)
            elif entry.content:
                block["content"] = entry.content
            user_blocks.append(block)
        elif isinstance(entry, AssistantEntry):
            # Thinking blocks first, unchanged (signatures, redacted data), as the API requires them
            # back with the tool_use blocks they led to.
            content = [anthropic_block(b) for b in sendable_reasoning(entry, ANTHROPIC)]
            content += [{"type": "text", "text": entry.text}] if entry.text else []
            content += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)}
                for c in entry.tool_calls
            ]
            if content:  # the API refuses an assistant message without content
                flush_user()
                out.append({"role": "assistant", "content": content})
    flush_user()
    return out


# --------------------------------------------------------------------------- wire -> records


_INPUT_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _usage(usage: Any, seen: dict[str, int] | None = None) -> Usage:
    """Total input (uncached, cache writes and cache reads: the last two also as
    `cache_write_tokens` and `cache_read_tokens`) and output tokens. The counts are cumulative:
    with `seen`, each field the provider reports replaces the one seen before and a field it
    leaves out (a `message_delta` often does) keeps its earlier value."""
    seen = {} if seen is None else seen
    for name in (*_INPUT_FIELDS, "output_tokens"):
        value = get_field(usage, name)
        if value is not None:
            seen[name] = value
    return Usage(sum(seen.get(f, 0) for f in _INPUT_FIELDS), seen.get("output_tokens", 0),
                 cache_read_tokens=seen.get("cache_read_input_tokens", 0),
                 cache_write_tokens=seen.get("cache_creation_input_tokens", 0))


def _final(text: str, stop_reason: str | None, calls: tuple[ToolCall, ...], usage: Usage,
           reasoning: tuple[Reasoning, ...] = ()) -> FinalMessage:
    stop = _STOP.get(stop_reason or "")
    if stop is None:
        what = "refused to answer" if stop_reason == "refusal" else f"stopped the response: {stop_reason}"
        return FinalMessage(text, "error", calls, usage, error=f"Anthropic {what}", reasoning=reasoning)
    return FinalMessage(text, stop, calls, usage, reasoning=reasoning)


def _answered(final: FinalMessage, answer: str | None) -> FinalMessage:
    """A message that called the `final_result` tool is the structured answer: its input's JSON
    as the text, stop reason `stop` (`length` when cut short); other calls in it are dropped and
    text before it is not part of the answer."""
    if answer is None:
        return final
    stop = final.stop_reason if final.stop_reason in ("length", "error") else "stop"
    return FinalMessage(answer, stop, (), final.usage, final.error, final.reasoning)


def _message_final(message: Any) -> FinalMessage:
    """The final message of a complete (batch) Message."""
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[Reasoning] = []
    answer: str | None = None
    for block in get_field(message, "content") or []:
        if (thought := anthropic_reasoning(block)) is not None:
            reasoning.append(thought)
        elif get_field(block, "type") == "text":
            text.append(get_field(block, "text") or "")
        elif get_field(block, "type") == "tool_use":
            arguments = json.dumps(get_field(block, "input") or {})
            if get_field(block, "name") == OUTPUT_TOOL:
                answer = arguments
            else:
                calls.append(ToolCall(get_field(block, "id"), get_field(block, "name"), arguments))
    final = _final("".join(text), get_field(message, "stop_reason"), tuple(calls), _usage(get_field(message, "usage")),
                   tuple(reasoning))
    return _answered(final, answer)


# --------------------------------------------------------------------------- the model


class AnthropicModel(SDKModel):
    """An Anthropic model through the Messages API. `deferred=True` answers through Message
    Batches of one request each: `submit`, `fetch`, `cancel`.

    The key comes from `api_key=` or `ANTHROPIC_API_KEY`, the endpoint from `base_url=` or
    `ANTHROPIC_BASE_URL`. Without a key the constructor raises `MissingCredentials`.

    `stream_silence`: seconds without any event from the provider before the attempt fails with
    `ModelError(kind="timeout")`. `request_timeout`: seconds for a whole attempt (a stream, a
    submit, a fetch or a cancel). `max_tokens` (required by the API) and `temperature` are
    defaults that the request's `ModelSettings` override, as they do `model`; so is `thinking`
    (extended thinking, the API's object: `{"type": "enabled", "budget_tokens": 4096}`), which
    `ModelSettings.thinking_budget` overrides. Every settings field is sent or refused
    (`check_settings`); with `request.cache_key` set, cache breakpoints are placed
    (`durable.models.caching`) unless `prompt_cache=False`.
    """

    provider = PROVIDER

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        context_window: int = 200_000,
        max_tokens: int = 8192,
        temperature: float | None = None,
        thinking: dict[str, Any] | None = None,
        deferred: bool = False,
        stream_silence: float | None = None,
        request_timeout: float | None = None,
        poll_interval: float = 10.0,
    ) -> None:
        sdk = import_sdk("anthropic", "anthropic", "AnthropicModel")  # lazy: importing durable must not import the SDK
        key = api_key_from(api_key, "ANTHROPIC_API_KEY",
                           "Anthropic needs an API key: set ANTHROPIC_API_KEY or pass api_key=")

        self._setup(model, key, context_window=context_window, deferred=deferred, stream_silence=stream_silence,
                    request_timeout=request_timeout, poll_interval=poll_interval, max_tokens=max_tokens,
                    temperature=temperature)
        self.thinking = thinking
        self._connect(sdk.AsyncAnthropic, base_url, "ANTHROPIC_BASE_URL")

    def __repr__(self) -> str:
        return f"AnthropicModel({self.model!r}, deferred={self.deferred!r})"

    def check_settings(self, settings: ModelSettings, tools: tuple[ToolSpec, ...], structured: bool = False) -> None:
        """Raise `UnsupportedModelSetting` for a setting this model cannot honour (see
        `durable.models.settings_wire.anthropic_fields`)."""
        settings = self._defaults.merged(settings)
        anthropic_fields(self.name, settings, tools, max_tokens=settings.max_tokens or self.max_tokens or 0,
                         structured=structured)

    @property
    def _defaults(self) -> ModelSettings:
        return ModelSettings(temperature=self.temperature)

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        s = self._defaults.merged(settings_of(request))
        max_tokens = s.max_tokens or self.max_tokens or 0
        fields, extra = anthropic_fields(self.name, s, request.tools, max_tokens=max_tokens,
                                         structured=request.output is not None)
        params: dict[str, Any] = {
            "model": s.model or self.model,
            "max_tokens": max_tokens,
            "messages": anthropic_messages(request.messages, request.attachments),
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
        if request.output is not None:  # structured output: a tool whose input is the answer
            params["tools"] = [*params.get("tools", ()), {
                "name": OUTPUT_TOOL, "description": "Give the final answer, matching this schema.",
                "input_schema": request.output}]
            params["tool_choice"] = {"type": "any"} if request.tools else {"type": "tool", "name": OUTPUT_TOOL}
        if s.temperature is not None:
            params["temperature"] = s.temperature
        params.update(fields)
        if "thinking" not in params and self.thinking is not None:
            params["thinking"] = self.thinking
        if request.cache_key and s.prompt_cache is not False:
            mark_anthropic(params)
        params.update(extra)
        return params

    def _create_kwargs(self, params: dict[str, Any]) -> dict[str, Any]:
        """`messages.create` arguments: the body fields this SDK version has no argument for
        (`temperature`, `top_p`, `extra` fields) travel in `extra_body` (the wire is the same)."""
        kwargs = {k: v for k, v in params.items() if k in _SDK_ARGUMENTS}
        rest = {k: v for k, v in params.items() if k not in _SDK_ARGUMENTS}
        if rest:
            kwargs["extra_body"] = rest
        return kwargs

    # ------------------------------------------------------------------ streaming

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response (`stream` scrubs what leaves it). Ends with one `FinalMessage` or
        raises `ModelError`. If the consumer closes it early or is cancelled, the HTTP response
        is closed. `ping` events do not count against `stream_silence` (the SDK drops them): a
        model that only pings for that long times out."""
        guard = self._guard()
        kwargs = self._create_kwargs({**self._params(request), "stream": True})
        stream = await guard.call(lambda: self._client.messages.create(**kwargs))
        text: list[str] = []
        calls: list[ToolCall] = []
        tools: dict[int, dict[str, Any]] = {}  # content block index -> tool_use being streamed
        usage = Usage()
        counts: dict[str, int] = {}  # the cumulative usage fields reported so far
        stop_reason: str | None = None
        answer: str | None = None  # the input of the `final_result` tool: a structured answer
        thinking = ThinkingBlocks()
        try:
            while (event := await guard.next(stream)) is not END:
                kind = get_field(event, "type")
                if kind == "message_start":
                    usage = _usage(get_field(get_field(event, "message"), "usage"), counts)
                    yield UsageEvent(usage)  # the input is charged even if the answer is cut off
                elif kind == "content_block_start":
                    block = get_field(event, "content_block")
                    if thinking.start(get_field(event, "index"), block):
                        continue
                    if get_field(block, "type") == "tool_use":
                        tools[get_field(event, "index")] = {
                            "id": get_field(block, "id"), "name": get_field(block, "name"),
                            "input": get_field(block, "input"), "json": []}
                elif kind == "content_block_delta":
                    delta = get_field(event, "delta")
                    if (thought := thinking.delta(get_field(event, "index"), delta)) is not None:
                        yield ReasoningDelta(thought)
                    elif get_field(delta, "type") == "text_delta" and get_field(delta, "text"):
                        text.append(get_field(delta, "text"))
                        yield TextDelta(get_field(delta, "text"))
                    elif get_field(delta, "type") == "input_json_delta" and get_field(event, "index") in tools:
                        tool = tools[get_field(event, "index")]
                        piece = get_field(delta, "partial_json") or ""
                        tool["json"].append(piece)
                        if piece and request.output is not None and tool["name"] == OUTPUT_TOOL:
                            yield TextDelta(piece)  # the structured answer, streamed as text
                elif kind == "content_block_stop" and thinking.stop(get_field(event, "index")):
                    continue
                elif kind == "content_block_stop" and get_field(event, "index") in tools:
                    tool = tools.pop(get_field(event, "index"))
                    arguments = "".join(tool["json"]) or json.dumps(tool["input"] or {})
                    if tool["name"] == OUTPUT_TOOL and request.output is not None:
                        answer = arguments
                        continue
                    calls.append(ToolCall(tool["id"], tool["name"], arguments))
                    yield ToolCallEvent(calls[-1])
                elif kind == "message_delta":
                    stop_reason = get_field(get_field(event, "delta"), "stop_reason") or stop_reason
                    usage = _usage(get_field(event, "usage"), counts)
        finally:
            await close_quietly(stream)
        if stop_reason is None:
            raise ModelError("The Anthropic stream ended before the response was complete",
                             kind="connection", provider=PROVIDER)
        yield UsageEvent(usage)
        yield _answered(_final("".join(text), stop_reason, tuple(calls), usage, tuple(thinking.blocks)), answer)

    # ------------------------------------------------------------------ deferred (message batches)

    @scrubbed
    async def submit(self, request: ModelRequest) -> DeferredHandle:
        """Start a Message Batch holding this one request, with `custom_id` derived from
        `request.key` (see `batch_custom_id`). Returns the batch id as the handle."""
        requests = [{"custom_id": batch_custom_id(request.key), "params": self._params(request)}]
        batch = await self._guard(silence=False).call(lambda: self._client.messages.batches.create(requests=requests))
        return DeferredHandle(get_field(batch, "id"), poll_after=self.poll_interval)

    @scrubbed
    async def fetch(self, handle: str) -> FetchResult:
        """Processing (or canceling): `StillRunning`. Ended: the request's result, read from
        the batch results — succeeded gives its `FinalMessage`; errored raises the classified
        `ModelError`; canceled raises `ModelError(kind="unknown")` (cancelled on purpose, not
        retried); expired raises `ModelError(kind="timeout")` (not processed in time; a new
        attempt may succeed)."""
        guard = self._guard(silence=False)
        batch = await guard.call(lambda: self._client.messages.batches.retrieve(handle))
        if get_field(batch, "processing_status") != "ended":
            return StillRunning(poll_after=self.poll_interval)
        results = await guard.call(lambda: self._client.messages.batches.results(handle))
        entry: Any = END
        try:  # a batch of one request has one result line; reading to the end frees the stream
            while (line := await guard.next(results)) is not END:
                entry = line if entry is END else entry
        finally:
            await close_quietly(results)
        if entry is END:
            raise ModelError(f"The Anthropic batch {handle} ended without a result", kind="server",
                             provider=PROVIDER, raw={"id": handle})
        result = get_field(entry, "result")
        kind = get_field(result, "type")
        if kind == "succeeded":
            return _message_final(get_field(result, "message"))
        if kind == "errored":
            raise classify_status(None, _plain(get_field(result, "error")), provider=PROVIDER,
                                  api_key=self._secrets, default="server")
        if kind == "expired":
            raise ModelError(f"The Anthropic batch {handle} expired before it was processed",
                             kind="timeout", provider=PROVIDER, raw={"id": handle, "result": kind})
        raise ModelError(f"The Anthropic batch {handle} was {kind}", kind="unknown", provider=PROVIDER,
                         raw={"id": handle, "result": kind})

    @scrubbed
    async def cancel(self, handle: str) -> None:
        """Cancel a batch. A batch that already ended or is unknown (HTTP 400, 404 or 409) is
        not an error; other failures raise `ModelError`."""
        await self._cancel(lambda: self._client.messages.batches.cancel(handle))

    async def find(self, key: str) -> str | None:
        """The handle of the batch submitted for `key`, if it can be found.

        Batches carry no metadata and their `custom_id`s are only readable from the results of
        an ended batch, so a running batch cannot be matched to a key: this always returns None.
        A batch whose handle was never committed is left to expire at the provider (24 h)."""
        return None
