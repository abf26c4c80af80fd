"""What the OpenAI and Anthropic adapters share: their settings, how they build an SDK client
(no SDK retries: the harness owns retries), closing it, and the guard on every attempt."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Any

from ..errors import MissingExtra
from .errors import AttemptGuard, close_quietly


def import_sdk(package: str, extra: str, what: str) -> ModuleType:
    """Import a provider SDK (an optional extra) when a model is constructed. Raises
    `MissingExtra`, whose message says `pip install "durable-harness[<extra>]"`, when it (or a
    package it needs) cannot be imported."""
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        detail = None if exc.name == package else str(exc)  # the SDK is there, a package it needs is not
        raise MissingExtra(what, package, extra, detail) from exc


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
