"""OpenAI behind the model protocol: the Responses API (streaming, and background jobs for
deferred mode) and Chat Completions (streaming, for OpenAI-compatible servers such as Ollama or
vLLM through `base_url`).

Owns the conversion of conversation records to both wire formats and of their stream events
back to protocol events. Invariants:
- `stream` yields text deltas, complete tool calls, one `UsageEvent` (the response's total:
  OpenAI reports usage only at the end) and ends with exactly one `FinalMessage`; a stream that
  ends without its terminal event raises `ModelError(kind="connection")`.
- Every provider failure leaves as a classified `ModelError` without the API key in it.
- The SDK never retries (`max_retries=0`): the harness owns retries.
- The `openai` package is imported when a model is constructed, never when `durable` or
  `durable.models` is imported.
- Entries are sent as given: the harness decides which entries are in `request.messages`.
- Structured output (`request.output`) is asked for as a `json_schema` format (Responses
  `text.format`, Chat `response_format`), not strict; the answer's text is its JSON.
- Chat Completions streams from local OpenAI-compatible servers (Ollama, llama.cpp, vLLM, LM
  Studio) give the same events as OpenAI's: `durable.models._compat` lists their differences.
- Reasoning (Responses items, Chat `reasoning_content`) is read and sent back as
  `durable.models._reasoning` says; only the Responses API carries it across turns.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal

import attrs

from ..errors import BackgroundJobsUnsupported
from ..records import (
    AssistantEntry,
    CompactionEntry,
    Entry,
    Reasoning,
    ToolCall,
    ToolResultEntry,
    Usage,
    UserEntry,
)
from ..records.model_settings import ModelSettings
from ._compat import DoneWatch, ToolCallAssembler, chat_stop, chat_usage, rejects_stream_options
from ._reasoning import OPENAI as WIRE, ResponsesReasoning, chat_reasoning, responses_item
from ._responses import PROVIDER, arguments as _arguments, failed as _failed, response_message as _response_message
from ._sdk import SUMMARY_PREFIX, SDKModel, api_key_from, get_field, import_sdk, scrubbed
from .content import chat_content, chat_tool_attachments, responses_content, tool_text
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
)
from .settings_wire import openai_fields, openai_params

__all__ = ["OpenAIModel", "chat_messages", "responses_input"]



# --------------------------------------------------------------------------- records -> wire


def responses_input(messages: Sequence[Entry], attachments: Mapping[str, bytes] = {}) -> list[dict[str, Any]]:
    """The Responses API `input` items for a conversation (`attachments`: the bytes of its images
    and files, by sha256: `durable.models.content`)."""
    items: list[dict[str, Any]] = []
    for entry in messages:
        if isinstance(entry, UserEntry):
            items.append({"role": "user", "content": responses_content(entry.parts, attachments) if entry.parts
                          else entry.text})
        elif isinstance(entry, CompactionEntry):
            items.append({"role": "user", "content": SUMMARY_PREFIX + entry.summary})
        elif isinstance(entry, AssistantEntry):
            items += [responses_item(b) for b in sendable_reasoning(entry, WIRE)]  # before what they led to
            if entry.text:
                items.append({"role": "assistant", "content": entry.text})
            for call in entry.tool_calls:
                items.append(
                    {"type": "function_call", "call_id": call.id, "name": call.name,
                     "arguments": _arguments(call.arguments)}
                )
        elif isinstance(entry, ToolResultEntry):
            items.append({"type": "function_call_output", "call_id": entry.call_id, "output": responses_content(
                entry.parts, attachments) if entry.parts else entry.content})
    return items


def chat_messages(system: str, messages: Sequence[Entry],
                  attachments: Mapping[str, bytes] = {}) -> list[dict[str, Any]]:
    """The Chat Completions `messages` for a system prompt and a conversation (`attachments`: the
    bytes of its images and files, by sha256: `durable.models.content`)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for entry in messages:
        if isinstance(entry, UserEntry):
            out.append({"role": "user", "content": chat_content(entry.parts, attachments) if entry.parts
                        else entry.text})
        elif isinstance(entry, CompactionEntry):
            out.append({"role": "user", "content": SUMMARY_PREFIX + entry.summary})
        elif isinstance(entry, AssistantEntry):
            if not entry.text and not entry.tool_calls:
                continue
            message: dict[str, Any] = {"role": "assistant", "content": entry.text or None}
            if entry.tool_calls:
                message["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name, "arguments": _arguments(c.arguments)}}
                    for c in entry.tool_calls
                ]
            out.append(message)
        elif isinstance(entry, ToolResultEntry):
            out.append({"role": "tool", "tool_call_id": entry.call_id, "content": tool_text(entry)})
    return chat_tool_attachments(out, messages, attachments)


def _responses_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters,
         "strict": False}
        for t in tools
    ]


def _chat_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [
        {"type": "function",
         "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


# --------------------------------------------------------------------------- wire -> records


# --------------------------------------------------------------------------- the model


class OpenAIModel(SDKModel):
    """An OpenAI (or OpenAI-compatible) model.

    `api="responses"` streams the Responses API; `api="chat"` streams Chat Completions (use it
    with `base_url` for Ollama, llama.cpp, vLLM, LM Studio and other compatible servers; their
    dialects are read as `durable.models._compat` describes). `deferred=True` (Responses only)
    answers through background responses: `submit`, `fetch`, `cancel`; a server without them
    makes `submit` fail with a non-retryable `ModelError` naming the base URL, and `api="chat"`
    with `deferred=True` raises `BackgroundJobsUnsupported` at construction, as does `store=False`.

    `reasoning` (the Responses API's object, `{"effort": "medium", "summary": "auto"}`) is a
    default the `reasoning` option overrides. `store`, when given, is sent; `store=False` (nothing
    kept at OpenAI) asks for the reasoning items' encrypted content, which is sent back with them.

    `stream_usage=False` never sends `stream_options` (usage is then whatever the server
    reports, often 0); with the default, a server that rejects it (HTTP 400 or 422 naming it)
    gets that request again without it, and this model stops sending it.

    The key comes from `api_key=` or `OPENAI_API_KEY`, the endpoint from `base_url=` or
    `OPENAI_BASE_URL`. Without a key the constructor raises `MissingCredentials`; a local
    server that needs none takes `api_key="not-needed"`.

    `stream_silence`: seconds without any event from the provider before the attempt fails with
    `ModelError(kind="timeout")`. `request_timeout`: seconds for a whole attempt (a stream, a
    submit, a fetch or a cancel). `max_tokens` and `temperature` are defaults that the request's
    `ModelSettings` override, as they do `model`; every other field is sent or refused
    (`check_settings`); `request.cache_key` is sent as `prompt_cache_key` to api.openai.com unless
    `prompt_cache=False`, and to another server only with `prompt_cache=True`.
    """

    provider = PROVIDER

    def __init__(
        self,
        model: str,
        *,
        api: Literal["responses", "chat"] = "responses",
        api_key: str | None = None,
        base_url: str | None = None,
        context_window: int = 128_000,
        deferred: bool = False,
        stream_silence: float | None = None,
        request_timeout: float | None = None,
        poll_interval: float = 2.0,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stream_usage: bool = True,
        reasoning: dict[str, Any] | None = None,
        store: bool | None = None,
    ) -> None:
        sdk = import_sdk("openai", "openai", "OpenAIModel")  # lazy: importing durable must not import the SDK
        if api not in ("responses", "chat"):
            raise ValueError(f'OpenAIModel api must be "responses" or "chat", not {api!r}')
        where = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        if deferred and api != "responses":
            raise BackgroundJobsUnsupported(
                f'Deferred OpenAI models need api="responses" (background responses); Chat Completions at {where} '
                "has no background jobs: use deferred=False"
            )
        if deferred and store is False:
            raise BackgroundJobsUnsupported(f"Background responses at {where} are stored by the provider: "
                                            "deferred=True needs store=True (or unset), not store=False")
        key = api_key_from(api_key, "OPENAI_API_KEY", "OpenAI needs an API key: set OPENAI_API_KEY or pass api_key= "
                           '(a local server that needs no key accepts api_key="not-needed")')

        self.api = api
        self.base_url = where
        self.stream_usage = stream_usage
        self.reasoning, self.store = reasoning, store
        self._setup(model, key, context_window=context_window, deferred=deferred, stream_silence=stream_silence,
                    request_timeout=request_timeout, poll_interval=poll_interval, max_tokens=max_tokens,
                    temperature=temperature)
        self._connect(sdk.AsyncOpenAI, base_url, "OPENAI_BASE_URL")

    def __repr__(self) -> str:
        return f"OpenAIModel({self.model!r}, api={self.api!r}, deferred={self.deferred!r})"

    def check_settings(self, settings: ModelSettings, tools: tuple[ToolSpec, ...], structured: bool = False) -> None:
        """Raise `UnsupportedModelSetting` for a setting this model cannot honour (see
        `durable.models.settings_wire.openai_fields`)."""
        openai_fields(self.name, self.api, settings, tools)

    def _responses_params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "input": responses_input(request.messages, request.attachments)}
        if request.system:
            params["instructions"] = request.system
        if request.tools:
            params["tools"] = _responses_tools(request.tools)
        if request.output is not None:  # structured output: the answer's text is its JSON
            params["text"] = {"format": {"type": "json_schema", "name": OUTPUT_TOOL, "schema": request.output,
                                         "strict": False}}
        params = openai_params(self, request, params, "max_output_tokens")
        if self.reasoning is not None:  # the model's own (summary, effort) under the settings' effort
            params["reasoning"] = {**self.reasoning, **params.get("reasoning", {})}
        if self.store is not None:  # nothing stored: reasoning comes back encrypted, to be sent again
            params["store"] = self.store
            params["include"] = [] if self.store else ["reasoning.encrypted_content"]
        return params

    # ------------------------------------------------------------------ streaming

    def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response (an async generator; `stream` scrubs what leaves it). Ends with one
        `FinalMessage` or raises `ModelError`. If the consumer closes it early or is cancelled,
        the HTTP response is closed. Only events count against `stream_silence`: a server that
        sends nothing else for that long (while a model reasons silently, say) times out."""
        return self._stream_chat(request) if self.api == "chat" else self._stream_responses(request)

    async def _stream_responses(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        guard = self._guard()
        params = {**self._responses_params(request), "stream": True}
        stream = await guard.call(lambda: self._client.responses.create(**params))
        text: list[str] = []
        calls: list[ToolCall] = []
        thinking = ResponsesReasoning()
        try:
            while (event := await guard.next(stream)) is not END:
                kind = get_field(event, "type")
                if (thought := thinking.event(kind, event)) is not None:
                    yield ReasoningDelta(thought)
                elif kind in ("response.output_text.delta", "response.refusal.delta"):
                    delta = get_field(event, "delta") or ""
                    if delta:
                        text.append(delta)
                        yield TextDelta(delta)
                elif kind == "response.output_item.done" and (
                        get_field(get_field(event, "item"), "type") == "function_call"):
                    item = get_field(event, "item")
                    call = ToolCall(get_field(item, "call_id") or get_field(item, "id") or f"call_{len(calls)}",
                                    get_field(item, "name") or "", _arguments(get_field(item, "arguments")))
                    if call.id not in {c.id for c in calls}:
                        calls.append(call)
                        yield ToolCallEvent(call)
                elif kind in ("response.completed", "response.incomplete"):
                    final = _response_message(get_field(event, "response"), "".join(text))
                    for call in final.tool_calls:
                        if call.id not in {c.id for c in calls}:  # a server that sent no output_item.done
                            calls.append(call)
                            yield ToolCallEvent(call)
                    if calls and final.stop_reason == "stop":
                        final = attrs.evolve(final, stop_reason="tool_use")
                    if not final.reasoning and thinking.blocks:  # a server that left them out of `output`
                        final = attrs.evolve(final, reasoning=tuple(thinking.blocks))
                    yield UsageEvent(final.usage)
                    yield attrs.evolve(final, tool_calls=tuple(calls))
                    return
                elif kind == "response.failed":
                    raise _failed(get_field(event, "response"), self._secrets)
                elif kind == "error":
                    body = {"code": get_field(event, "code"), "message": get_field(event, "message")}
                    raise classify_status(None, body, provider=PROVIDER, api_key=self._secrets, default="server")
            raise ModelError("The OpenAI stream ended before the response was complete",
                             kind="connection", provider=PROVIDER)
        finally:
            await close_quietly(stream)

    async def _stream_chat(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        guard = self._guard()
        params: dict[str, Any] = {
            "model": self.model,
            "messages": chat_messages(request.system, request.messages, request.attachments),
            "stream": True,
        }
        if self.stream_usage:
            params["stream_options"] = {"include_usage": True}
        if request.tools:
            params["tools"] = _chat_tools(request.tools)
        params = openai_params(self, request, params, "max_tokens")
        if request.output is not None:
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": OUTPUT_TOOL, "schema": request.output, "strict": False}}
        try:
            stream = await guard.call(lambda: self._client.chat.completions.create(**params))
        except ModelError as error:
            if "stream_options" not in params or not rejects_stream_options(error):
                raise
            # An older local server or a proxy that does not know stream_options: once without it,
            # and never again from this model.
            self.stream_usage = False
            del params["stream_options"]
            stream = await guard.call(lambda: self._client.chat.completions.create(**params))
        watch = DoneWatch.attach(stream)
        text: list[str] = []
        thought: list[str] = []
        assembler = ToolCallAssembler()
        usage = Usage()
        finish: str | None = None
        try:
            while (chunk := await guard.next(stream)) is not END:
                if get_field(chunk, "usage"):
                    usage = chat_usage(get_field(chunk, "usage"))
                for choice in get_field(chunk, "choices") or []:
                    delta = get_field(choice, "delta")
                    content = get_field(delta, "content")
                    if reasoning := chat_reasoning(delta):  # kept as text, never sent back
                        thought.append(reasoning)
                        yield ReasoningDelta(reasoning)
                    if content and isinstance(content, str):
                        text.append(content)
                        yield TextDelta(content)
                    assembler.add(get_field(delta, "tool_calls"))
                    finish = get_field(choice, "finish_reason") or finish
        finally:
            await close_quietly(stream)
        calls = assembler.calls()
        ending = chat_stop(finish, text="".join(text), calls=bool(calls), done=watch is not None and watch.done)
        if ending is None:
            raise ModelError("The OpenAI stream ended before the response was complete",
                             kind="connection", provider=PROVIDER)
        stop, failure = ending
        tool_calls = calls if stop == "tool_use" else ()
        for call in tool_calls:
            yield ToolCallEvent(call)
        yield UsageEvent(usage)
        blocks = (Reasoning("".join(thought)),) if thought else ()
        yield FinalMessage("".join(text), stop, tool_calls, usage, error=failure, reasoning=blocks)

    # ------------------------------------------------------------------ deferred (background responses)

    @scrubbed
    async def submit(self, request: ModelRequest) -> DeferredHandle:
        """Start a background response for `request`, tagged with
        `metadata={"durable_key": request.key}`. Returns its id as the handle."""
        params = {**self._responses_params(request), "background": True,
                  "metadata": {"durable_key": request.key}}
        try:
            response = await self._guard(silence=False).call(lambda: self._client.responses.create(**params))
        except ModelError as error:
            unsupported = error.status_code in (404, 405) or (
                error.status_code in (400, 422) and "background" in f"{error.message} {error.raw!r}")
            if error.status_code == 501 or (error.kind == "invalid_request" and unsupported):
                raise ModelError(
                    f"The server at {self.base_url} has no background responses (HTTP {error.status_code} for "
                    f"POST /responses): use deferred=False with it", kind="invalid_request", provider=PROVIDER,
                    status_code=error.status_code, raw=error.raw) from None
            raise
        status = get_field(response, "status")
        if status not in ("queued", "in_progress") or not get_field(response, "id"):
            # A server that ignores `background` answers at once; its answer cannot be fetched again.
            raise ModelError(
                f"The server at {self.base_url} does not run background responses (it answered a background "
                f"request with status {status!r} instead of queueing it): use deferred=False with it",
                kind="invalid_request", provider=PROVIDER, raw={"id": get_field(response, "id"), "status": status})
        return DeferredHandle(get_field(response, "id"), poll_after=self.poll_interval)

    @scrubbed
    async def fetch(self, handle: str) -> FetchResult:
        """Queued or in progress: `StillRunning`. Completed or incomplete: its `FinalMessage`.
        Failed: raises the classified `ModelError`. Cancelled: raises `ModelError(kind="unknown")`
        (someone cancelled it on purpose; it is not retried)."""
        response = await self._guard(silence=False).call(lambda: self._client.responses.retrieve(handle))
        status = get_field(response, "status")
        if status in ("queued", "in_progress"):
            return StillRunning(poll_after=self.poll_interval)
        if status in ("completed", "incomplete"):
            return _response_message(response)
        if status == "failed":
            raise _failed(response, self._secrets)
        raise ModelError(f"The OpenAI background response {handle} was {status or 'without a status'}", kind="unknown",
                         provider=PROVIDER, raw={"id": handle, "status": status})

    @scrubbed
    async def cancel(self, handle: str) -> None:
        """Cancel a background response. A response that already ended or is unknown
        (HTTP 400, 404 or 409) is not an error; other failures raise `ModelError`."""
        await self._cancel(lambda: self._client.responses.cancel(handle))

    async def find(self, key: str) -> str | None:
        """The handle of the background response submitted for `key`, if it can be found.

        OpenAI has no endpoint that lists responses or searches their metadata, so this always
        returns None: a job whose submit returned but whose handle was never committed cannot be
        found again (it still carries `metadata.durable_key` for a person looking at it)."""
        return None
