"""Provider errors, classified: the one place that turns what a provider or its HTTP stack raised
into a `ModelError` whose `kind` the harness can act on (docs/spec.md §3, §5).

Owns:
- `classify_status`: an HTTP status, the provider's error body and the response headers to a
  `ModelError` (kind, provider, status_code, retry_after from `retry-after-ms` / `retry-after`).
- `classify_exception`: anything an SDK call raised (SDK status errors, SDK / httpx timeouts and
  connection errors, a mid-stream error event) to a `ModelError`.
- `AttemptGuard`: the stream silence guard and the whole-attempt deadline around every wait of
  an attempt, on anyio so it works under trio and asyncio alike; it also classifies whatever
  the wait raised.
- `MissingCredentials`: raised when a provider is constructed without a key.

Invariants: a message is one readable sentence that names the provider; neither the message nor
`raw` holds a secret the adapter knows in any form `durable.models.scrub` covers, nor anything
shaped like a key (each function takes the secrets as `api_key`: one string or several). `raw` is
plain data (dicts, lists, strings), never the SDK exception, since that exception carries the
request and its Authorization header. This module imports no SDK: it recognises SDK and httpx
exceptions by their attributes and class names.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from ..errors import DurableError
from .protocol import ErrorKind, ModelError
from .scrub import Secrets, scrub, scrub_exception

__all__ = [
    "END",
    "AttemptGuard",
    "MissingCredentials",
    "classify_exception",
    "classify_status",
    "close_quietly",
    "scrub",
]

T = TypeVar("T")

_DISPLAY = {"openai": "OpenAI", "anthropic": "Anthropic", "google": "Gemini"}

# An Anthropic error that arrives inside a 200 stream carries only its type: the status it
# would have had, so reports show a meaningful code.
_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

_QUOTA_CODES = {"insufficient_quota", "billing_error", "billing_hard_limit_reached", "billing_not_active"}
_QUOTA_TEXT = ("insufficient_quota", "credit balance", "billing", "exceeded your current quota")
_CONTEXT_CODES = {"context_length_exceeded", "string_above_max_length"}
_CONTEXT_TEXT = (
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "input is too long",
)
_AUTH_TYPES = {"authentication_error", "permission_error", "invalid_api_key"}


class MissingCredentials(DurableError, ValueError):
    """A provider was constructed without an API key. The message names the environment
    variable to set. A `DurableError` and a `ValueError` (a configuration mistake found before
    any call), not a `ModelError`: nothing was sent, so there is nothing to retry."""


# --------------------------------------------------------------------------- status errors


def _error_fields(body: Any) -> tuple[str | None, str | None, str | None]:
    """(type, code, message) from an OpenAI body (`{"error": {...}}` or the bare inner
    object), an Anthropic body (`{"type": "error", "error": {...}}`) or plain text."""
    if isinstance(body, dict):
        error = body.get("error")
        inner = error if isinstance(error, dict) else body
        typ, code, message = inner.get("type"), inner.get("code"), inner.get("message")
        if typ == "error":
            typ = None
        return (
            typ if isinstance(typ, str) else None,
            str(code) if code is not None else None,
            message if isinstance(message, str) else None,
        )
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body.strip():
        return None, None, body.strip()
    return None, None, None


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait, from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _kind_of(status: int | None, typ: str | None, code: str | None, message: str | None) -> ErrorKind | None:
    text = " ".join(filter(None, (typ, code, message))).lower()
    ids = {typ, code}
    if ids & _QUOTA_CODES or status == 402 or any(t in text for t in _QUOTA_TEXT):
        return "quota"
    if ids & _CONTEXT_CODES or status == 413 or any(t in text for t in _CONTEXT_TEXT):
        return "context_overflow"
    if "model_not_found" in ids or (
        ("not_found_error" in ids or status == 404) and "model" in (message or "").lower()
    ):
        return "invalid_model"
    if status == 529 or "overloaded_error" in ids:
        return "overloaded"
    if status == 429 or ids & {"rate_limit_error", "rate_limit_exceeded"}:
        return "rate_limit"
    if status == 408 or "timeout_error" in ids:
        return "timeout"
    if status in (401, 403) or ids & _AUTH_TYPES:
        return "auth"
    if (status is not None and status >= 500) or ids & {"api_error", "server_error"}:
        return "server"
    if status is not None and 400 <= status < 500:
        return "invalid_request"
    if "invalid_request_error" in ids or (code or "").startswith("invalid_"):
        return "invalid_request"
    return None


_PHRASES: dict[str, str] = {
    "rate_limit": "{p} rate limit reached",
    "overloaded": "{p} is overloaded",
    "timeout": "{p} request timed out",
    "connection": "The connection to {p} failed",
    "server": "{p} server error",
    "auth": "{p} rejected the credentials",
    "quota": "{p} quota or billing limit reached",
    "invalid_model": "{p} does not know the model",
    "context_overflow": "The prompt is too long for the {p} model's context window",
    "invalid_request": "{p} rejected the request",
    "unknown": "{p} returned an error",
}


def _sentence(kind: str, provider: str, status: int | None, detail: str | None, api_key: Secrets) -> str:
    head = _PHRASES[kind].format(p=_DISPLAY.get(provider, provider))
    if status is not None:
        head += f" (HTTP {status})"
    if detail:
        detail = " ".join(str(scrub(detail, api_key)).split())
        if len(detail) > 400:
            detail = detail[:397] + "..."
        head += f": {detail}"
    return head


def classify_status(
    status_code: int | None,
    body: Any,
    *,
    provider: str,
    headers: Any = None,
    api_key: Secrets = None,
    default: ErrorKind = "unknown",
    kind: ErrorKind | None = None,
) -> ModelError:
    """The `ModelError` for an error response: `status_code` (None for an error event inside a
    stream), the provider's error `body` (parsed JSON or text) and the response `headers`.
    `default` is the kind when neither status nor body say anything known; `kind`, when given,
    is the kind an adapter read from its provider's own error details (it wins)."""
    typ, code, message = _error_fields(body)
    status = status_code
    if status is None or status < 400:
        status = _TYPE_STATUS.get(typ or "")
    kind = kind or _kind_of(status, typ, code, message) or default
    raw = scrub({"status_code": status, "body": body}, api_key)
    typ, code, message = _error_fields(raw["body"])  # the whole body scrubbed at once: a key split over fields
    return ModelError(
        _sentence(kind, provider, status, message or code or typ, api_key),
        kind=kind,
        provider=provider,
        status_code=status,
        retry_after=_retry_after(headers),
        raw=raw,
    )


# --------------------------------------------------------------------------- exceptions

_TIMEOUT_NAMES = {"APITimeoutError", "TimeoutException", "TimeoutError", "ReadTimeout", "ConnectTimeout",
                  "WriteTimeout", "PoolTimeout"}
_CONNECTION_NAMES = {"APIConnectionError", "TransportError", "NetworkError", "RemoteProtocolError",
                     "ConnectError", "ReadError", "WriteError", "CloseError", "ProtocolError",
                     "ConnectionError", "BrokenResourceError", "ClosedResourceError",
                     "EndOfStream", "IncompleteRead"}


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def classify_exception(
    exc: BaseException, *, provider: str, api_key: Secrets = None, default: ErrorKind = "unknown"
) -> ModelError:
    """The `ModelError` for an exception raised by an SDK call or while reading its stream.
    A `ModelError` is returned unchanged."""
    if isinstance(exc, ModelError):
        return exc
    response = getattr(exc, "response", None)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and response is not None:
        return classify_status(
            status, getattr(exc, "body", None), provider=provider,
            headers=getattr(response, "headers", None), api_key=api_key, default=default,
        )
    chain = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 5:
        chain.append(chain[-1].__cause__)
    names = set().union(*(_names(e) for e in chain))
    raw = scrub([{"type": type(e).__name__, "message": str(e)} for e in chain], api_key)
    if names & _TIMEOUT_NAMES:
        return ModelError(_sentence("timeout", provider, None, None, api_key), kind="timeout",
                          provider=provider, raw=raw)
    # An SDK error raised for an error event inside a stream: it has a body but no response.
    body = getattr(exc, "body", None)
    if body is not None and "APIError" in names:
        return classify_status(None, body, provider=provider, api_key=api_key, default="server")
    if names & _CONNECTION_NAMES:
        detail = next((str(e) for e in reversed(chain) if str(e) and str(e) != "Connection error."), None)
        return ModelError(_sentence("connection", provider, None, detail, api_key), kind="connection",
                          provider=provider, raw=raw)
    return ModelError(
        _sentence(default, provider, None, f"{type(exc).__name__}: {exc}", api_key),
        kind=default, provider=provider, raw=raw,
    )


# --------------------------------------------------------------------------- one attempt's waits


class AttemptGuard:
    """Bounds and translates every wait of one attempt on a provider.

    No single wait may exceed `stream_silence` seconds (no event from the provider for that
    long) and all waits together end `request_timeout` seconds after the guard was made: either
    raises `ModelError(kind="timeout")`. Anything else a wait raises becomes a classified
    `ModelError` (`default` is the kind when nothing known matches), except the errors that
    mean a bug in durable (`TypeError`, `NameError`, `AssertionError`): those propagate as they
    are, so they are not mistaken for a provider's answer.

    Each wait runs in its own cancel scope, so a provider's async generator may `yield` between
    waits (a cancel scope must never stay open across a `yield`). Cancellation from outside
    passes through untouched: trio's `Cancelled` and asyncio's `CancelledError` are not
    `Exception`s."""

    def __init__(
        self,
        provider: str,
        *,
        api_key: Secrets = None,
        stream_silence: float | None = None,
        request_timeout: float | None = None,
        default: ErrorKind = "unknown",
    ) -> None:
        self.provider = provider
        self.api_key = api_key
        self.stream_silence = stream_silence
        self.request_timeout = request_timeout
        self.default: ErrorKind = default
        self.deadline = anyio.current_time() + request_timeout if request_timeout is not None else math.inf

    async def call(self, call: Callable[[], Awaitable[T]]) -> T:
        """`await call()` within the limits; errors come out as `ModelError`."""
        silence = self.stream_silence if self.stream_silence is not None else math.inf
        remaining = self.deadline - anyio.current_time()
        limit = min(silence, remaining)
        try:
            if limit == math.inf:
                return await call()
            with anyio.move_on_after(max(limit, 0.0)):
                return await call()
        except (ModelError, *_BUGS) as exc:
            scrub_exception(exc, self.api_key)  # it goes on as it is: its text must hold no key either
            raise
        except Exception as exc:  # noqa: BLE001 - every provider failure becomes a ModelError
            # `from None`: the SDK exception holds the request and its Authorization header.
            raise classify_exception(exc, provider=self.provider, api_key=self.api_key,
                                     default=self.default) from None
        if remaining <= silence:
            message = f"The model request took longer than {self.request_timeout:g} s"
        else:
            message = f"The model stream was silent for {silence:g} s"
        raise ModelError(message, kind="timeout", provider=self.provider)

    async def next(self, stream: Any) -> Any:
        """The next event of an SDK stream, or `END` when it is exhausted."""

        async def step() -> Any:
            try:
                return await stream.__anext__()
            except StopAsyncIteration:
                return END

        return await self.call(step)


_BUGS = (TypeError, NameError, AssertionError)


END = object()
"""Returned by `AttemptGuard.next` when the stream has no more events."""


async def close_quietly(resource: Any) -> None:
    """Close an SDK stream or client (its `close`, else its `aclose`), even while being
    cancelled; errors are ignored (the connection is being thrown away)."""
    with anyio.move_on_after(2, shield=True):
        try:
            await (resource.close() if hasattr(resource, "close") else resource.aclose())
        except Exception:  # noqa: BLE001 - the connection is being thrown away
            pass
