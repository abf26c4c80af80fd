"""What the OpenAI and Anthropic adapters share: their settings and API key, how they build an SDK
client (no SDK retries: the harness owns retries), closing it, the guard on every attempt, the
cancel of a background job, and reading a field of an SDK object or of a plain dict."""

from __future__ import annotations

import importlib
import os
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any

from ..errors import MissingExtra
from .errors import AttemptGuard, MissingCredentials, close_quietly
from .protocol import ModelError

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

    def _client_options(self, base_url: str | None, base_url_variable: str) -> dict[str, Any]:
        return {
            "api_key": self._api_key,
            "base_url": base_url or os.environ.get(base_url_variable) or None,
            "max_retries": 0,
            **({"timeout": self.request_timeout} if self.request_timeout is not None else {}),
        }

    async def aclose(self) -> None:
        """Close the HTTP connections of this model."""
        await close_quietly(self._client)

    def _guard(self, *, silence: bool = True) -> AttemptGuard:
        return AttemptGuard(self.provider, api_key=self._api_key, request_timeout=self.request_timeout,
                            stream_silence=self.stream_silence if silence else None)

    async def _cancel(self, call: Callable[[], Awaitable[Any]]) -> None:
        """Cancel a background job through `call`. A job that already ended or is unknown
        (HTTP 400, 404 or 409) is not an error; other failures raise `ModelError`."""
        try:
            await self._guard(silence=False).call(call)
        except ModelError as error:
            if error.status_code in (400, 404, 409):
                return
            raise
