"""Gemini behind the model protocol: `streamGenerateContent` through the official `google-genai` SDK
(the Gemini Developer API, or any server speaking its REST format at `base_url`).

Owns the model: its SDK client, the request of an attempt and the reading of its stream (the wire
format itself is `durable.models._gemini_wire`). Invariants:
- `stream` yields text deltas, each function call as it arrives (Gemini sends calls whole), a
  `UsageEvent` with the first usage Gemini reports (the input is charged even if the answer is
  cut off) and one with the total, then exactly one `FinalMessage`; a stream that ends without a
  finish reason raises `ModelError(kind="connection")`.
- Every provider failure leaves as a classified `ModelError` without the API key in it.
- The SDK never retries, never calls a function and never continues a stream by itself: the
  harness owns retries and tools.
- The SDK's async calls go through an httpx client this model owns (never aiohttp), so it runs
  under trio as under asyncio; the HTTP response of an attempt is closed when the attempt ends.
- `google-genai` is imported when a model is constructed, never when `durable` is imported.
- Thought summaries are never sent as answer text; thought signatures go back unchanged on the
  parts they came with (`_gemini_wire.thought_signatures`); to Gemini 3 and later, a turn whose
  calls have none gets the documented value that skips validation on its first call.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from types import SimpleNamespace
from typing import Any, TypeVar

from ..records.model_settings import ModelSettings
from ._gemini_wire import PROVIDER, UNSIGNED, Reply, gemini_contents, gemini_error, gemini_settings, signs_calls
from ._sdk import SDKModel, api_key_from, import_sdk
from .errors import END, close_quietly
from .protocol import (
    ModelError,
    ModelRequest,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    UsageEvent,
    settings_of,
)
from .scrub import secrets_of

__all__ = ["GeminiModel"]

T = TypeVar("T")

# The HTTP responses opened by the SDK call running in this context (one attempt's), so the
# attempt can close them itself: the SDK's nested stream generators close theirs only when
# garbage collected, which would leave a cancelled attempt's connection open a while.
_OPENED: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("durable_gemini_opened", default=None)


async def _note_response(response: Any) -> None:
    opened = _OPENED.get()
    if opened is not None:
        opened.append(response)


class GeminiModel(SDKModel):
    """A Gemini model through the Gemini API's `streamGenerateContent` (`google:<model>`).

    The key comes from `api_key=`, `GEMINI_API_KEY` or `GOOGLE_API_KEY`, the endpoint from
    `base_url=` or `GOOGLE_GEMINI_BASE_URL` (`api_version`, `v1beta` by default, is added to it). Without
    a key the constructor raises `MissingCredentials`. Gemini runs no background jobs: `deferred`
    is always False.

    `stream_silence`: seconds without any chunk from Gemini before the attempt fails with
    `ModelError(kind="timeout")`. `request_timeout`: seconds for a whole attempt. `max_tokens`
    and `temperature` are defaults that the request's `ModelSettings` override, as they do `model`;
    every other setting is mapped or refused (`check_settings`).
    `include_thoughts` asks for thought summaries (read, never sent as the answer's text).
    """

    provider = PROVIDER

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        context_window: int = 1_048_576,
        max_tokens: int | None = None,
        temperature: float | None = None,
        include_thoughts: bool = False,
        api_version: str = "v1beta",
        stream_silence: float | None = None,
        request_timeout: float | None = None,
    ) -> None:
        genai = import_sdk("google.genai", "google", "GeminiModel")  # lazy: importing durable must not import it
        httpx = import_sdk("httpx", "google", "GeminiModel")
        key = api_key_from(api_key if api_key is not None else os.environ.get("GEMINI_API_KEY"), "GOOGLE_API_KEY",
                           "Gemini needs an API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass api_key=")
        self._setup(model, key, context_window=context_window, deferred=False, stream_silence=stream_silence,
                    request_timeout=request_timeout, poll_interval=0.0, max_tokens=max_tokens, temperature=temperature)
        self.include_thoughts = include_thoughts
        self.base_url = base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or None
        self._secrets = secrets_of(key, self.base_url)
        # httpx, not aiohttp: the SDK picks aiohttp when it is installed, and aiohttp needs asyncio.
        self._http = httpx.AsyncClient(timeout=None, event_hooks={"response": [_note_response]})
        options: dict[str, Any] = {"httpx_async_client": self._http, "api_version": api_version}
        if self.base_url:
            options["base_url"] = self.base_url
        # Milliseconds, for each connect and read (as the OpenAI SDK's 600 s default); the guard
        # bounds the whole attempt. Without it the SDK would ask httpx for no timeout at all.
        options["timeout"] = int((request_timeout if request_timeout is not None else 600.0) * 1000)
        self._client = genai.Client(api_key=key, vertexai=False, http_options=options)
        self._sdk = genai
        self._fields = frozenset(genai.types.GenerateContentConfig.model_fields)

    def __repr__(self) -> str:
        return f"GeminiModel({self.model!r})"

    async def aclose(self) -> None:
        """Close the HTTP connections of this model."""
        self._client.close()  # the SDK's own (synchronous) client: nothing of ours goes through it
        await close_quietly(self._http)

    def check_settings(self, settings: ModelSettings, tools: tuple[ToolSpec, ...], structured: bool = False) -> None:
        """Raise `UnsupportedModelSetting` for a setting Gemini cannot honour (`gemini_settings`)."""
        gemini_settings(self.name, settings, tools)

    def _config(self, request: ModelRequest) -> dict[str, Any]:
        s = settings_of(request)
        config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
        if "automatic_continuation" in self._fields:  # google-genai 3: one request per attempt
            config["automatic_continuation"] = False
        if request.system:
            config["system_instruction"] = request.system
        if request.tools:
            config["tools"] = [{"function_declarations": [
                {"name": t.name, "description": t.description, "parameters_json_schema": t.parameters}
                for t in request.tools]}]
        max_tokens = s.max_tokens if s.max_tokens is not None else self.max_tokens
        if max_tokens is not None:
            config["max_output_tokens"] = max_tokens
        temperature = s.temperature if s.temperature is not None else self.temperature
        if temperature is not None:
            config["temperature"] = temperature
        fields = gemini_settings(self.name, s, request.tools)
        if self.include_thoughts:
            fields["thinking_config"] = {"include_thoughts": True, **fields.get("thinking_config", {})}
        config.update(fields)
        if request.output is not None:  # structured output: the answer's text is its JSON
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = request.output
        return config

    async def _translated(self, call: Callable[[], Awaitable[T]]) -> T:
        """`await call()`, an SDK `APIError` raised as the classified `ModelError` (the guard
        classifies everything else: httpx's connection errors and timeouts)."""
        try:
            return await call()
        except self._sdk.errors.APIError as exc:
            response = getattr(exc, "response", None)
            status = getattr(response, "status_code", None)
            raise gemini_error(status if isinstance(status, int) and status >= 400 else None,
                               exc.details, getattr(response, "headers", None), self._secrets) from None

    # ------------------------------------------------------------------ streaming

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response (`stream` scrubs what leaves it). Ends with one `FinalMessage` or
        raises `ModelError`. If the consumer closes it early or is cancelled, the HTTP response
        is closed. The SDK sends the request at the first chunk asked for."""
        guard = self._guard()
        model = settings_of(request).model or self.model
        contents = gemini_contents(request.messages, UNSIGNED if signs_calls(model) else None, request.attachments)
        config = self._config(request)
        stream = await guard.call(lambda: self._translated(lambda: self._client.aio.models.generate_content_stream(
            model=model, contents=contents, config=config)))
        reply = Reply(call_prefix=request.key or "call")
        chunks = SimpleNamespace(__anext__=lambda: self._translated(stream.__anext__))
        opened: list[Any] = []
        charged = False
        try:
            while True:
                token = _OPENED.set(opened)  # set and reset around each wait: never across a yield
                try:
                    chunk = await guard.next(chunks)
                finally:
                    _OPENED.reset(token)
                if chunk is END:
                    break
                texts, calls = reply.read(chunk)
                if reply.usage is not None and not charged:
                    charged = True
                    yield UsageEvent(reply.usage)
                for thought in reply.new_thoughts:
                    yield ReasoningDelta(thought)
                for text in texts:
                    yield TextDelta(text)
                for call in calls:
                    yield ToolCallEvent(call)
        finally:
            await close_quietly(SimpleNamespace(close=stream.aclose))
            for response in opened:
                await close_quietly(SimpleNamespace(close=response.aclose))
        final = reply.final()
        if final is None:
            raise ModelError("The Gemini stream ended before the response was complete", kind="connection",
                             provider=PROVIDER)
        yield UsageEvent(final.usage)
        yield final

    # ------------------------------------------------------------------ no deferred mode

    async def submit(self, request: ModelRequest) -> Any:
        raise ModelError("Gemini models have no background jobs here: use deferred=False", kind="invalid_request",
                         provider=PROVIDER)

    async def fetch(self, handle: str) -> Any:
        raise ModelError(f"Gemini models have no background jobs here (asked for {handle})", kind="invalid_request",
                         provider=PROVIDER)

    async def cancel(self, handle: str) -> None:
        return None

    async def find(self, key: str) -> str | None:
        return None
