"""What the OpenAI, Anthropic and Gemini adapters share: their settings and API key, how they build an SDK
client (no SDK retries: the harness owns retries), closing it, the guard on every attempt, the
cancel of a background job, and reading a field of an SDK object or of a plain dict.

Every way out of an adapter is scrubbed of the secrets it knows (`_secrets`: its API key and its
base URL's password): the guard classifies and scrubs whatever a provider call raised, `stream`
and the methods marked `@scrubbed` scrub any exception that leaves them and the error text of
the final message they return (a stop reason is the provider's text too)."""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from types import ModuleType
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import attrs

from ..errors import MissingExtra
from .errors import AttemptGuard, MissingCredentials, close_quietly
from .protocol import FinalMessage, ModelError, ModelRequest, StreamEvent
from .scrub import scrub, scrub_exception, secrets_of

P = ParamSpec("P")
T = TypeVar("T")
Model = TypeVar("Model", bound="SDKModel")

SUMMARY_PREFIX = "Summary of the conversation so far:\n"
"""How a compaction summary is sent: as user text with this prefix."""


def import_sdk(package: str, extra: str, what: str) -> ModuleType:
    """Import a provider SDK (an optional extra) when a model is constructed. Raises
    `MissingExtra`, whose message says `pip install "durable-harness[<extra>]"`, when it (or a
    package it needs) cannot be imported."""
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        detail = None if exc.name == package else str(exc)  # the SDK is there, a package it needs is not
        raise MissingExtra(what, package, extra, detail) from exc


def get_field(obj: Any, name: str, default: Any = None) -> Any:
    """A field of an SDK model or of a plain dict (SDK objects are built without validation)."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def api_key_from(given: str | None, variable: str, missing: str) -> str:
    """The API key: `given`, else the environment `variable`. Raises `MissingCredentials` with
    the message `missing` when neither is set (an empty key is none)."""
    key = given if given is not None else os.environ.get(variable)
    if not key:
        raise MissingCredentials(missing)
    return key


class SDKModel:
    provider: str = ""
    _client: Any = None
    _secrets: tuple[str, ...] = ()

    def _setup(self, model: str, key: str, *, context_window: int, deferred: bool, stream_silence: float | None,
               request_timeout: float | None, poll_interval: float, max_tokens: int | None,
               temperature: float | None) -> None:
        self.model = model
        self.name = f"{self.provider}:{model}"
        self.context_window = context_window
        self.deferred = deferred
        self.stream_silence = stream_silence
        self.request_timeout = request_timeout
        self.poll_interval = poll_interval
        self.max_tokens = max_tokens
        self.temperature = temperature
        self._api_key = key

    def _connect(self, client: Callable[..., Any], base_url: str | None, base_url_variable: str) -> None:
        """Make the SDK client, and learn the secrets to scrub from everything the provider says."""
        where = base_url or os.environ.get(base_url_variable) or None
        self._secrets = secrets_of(self._api_key, where)
        self._client = client(
            api_key=self._api_key, base_url=where, max_retries=0,
            **({"timeout": self.request_timeout} if self.request_timeout is not None else {}),
        )

    async def aclose(self) -> None:
        """Close the HTTP connections of this model."""
        await close_quietly(self._client)

    def _guard(self, *, silence: bool = True) -> AttemptGuard:
        return AttemptGuard(self.provider, api_key=self._secrets, request_timeout=self.request_timeout,
                            stream_silence=self.stream_silence if silence else None)

    def _scrubbed_final(self, result: T) -> T:
        """`result`, a final message's error text scrubbed (its stop reason is the provider's text)."""
        if isinstance(result, FinalMessage) and result.error:
            return cast(T, attrs.evolve(result, error=scrub(result.error, self._secrets)))
        return result

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response (an async generator). Ends with one `FinalMessage` or raises
        `ModelError`. If the consumer closes it early or is cancelled, the HTTP response is
        closed. Nothing is scrubbed per event: only an exception and the final message's error."""
        return self._scrubbed_stream(self._stream(request))

    def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError

    async def _scrubbed_stream(self, events: AsyncIterator[StreamEvent]) -> AsyncIterator[StreamEvent]:
        async with aclosing(events):  # type: ignore[type-var]  # an async generator: it has aclose
            try:
                async for event in events:
                    yield self._scrubbed_final(event)
            except Exception as exc:
                scrub_exception(exc, self._secrets)
                raise

    async def _cancel(self, call: Callable[[], Awaitable[Any]]) -> None:
        """Cancel a background job through `call`. A job that already ended or is unknown
        (HTTP 400, 404 or 409) is not an error; other failures raise `ModelError`."""
        try:
            await self._guard(silence=False).call(call)
        except ModelError as error:
            if error.status_code in (400, 404, 409):
                return
            raise


def scrubbed(
    method: Callable[Concatenate[Model, P], Awaitable[T]],
) -> Callable[Concatenate[Model, P], Awaitable[T]]:
    """Marks an adapter's provider call (submit, fetch, cancel): an exception that leaves it, and
    the error text of a final message it returns, are scrubbed of the adapter's secrets."""

    @functools.wraps(method)
    async def call(self: Model, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return self._scrubbed_final(await method(self, *args, **kwargs))
        except Exception as exc:
            scrub_exception(exc, self._secrets)
            raise

    return call
