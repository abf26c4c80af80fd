"""Error classification: every provider failure becomes a ModelError whose kind decides retries."""

from __future__ import annotations

import email.utils
import subprocess
import sys
import time

import httpx
import httpx2
import pytest

from durable.models.errors import MissingCredentials, classify_exception, classify_status, scrub
from durable.models.protocol import ModelError

OPENAI_429 = {"error": {"message": "Rate limit reached for gpt-4o-mini", "type": "requests", "code": "rate_limit_exceeded"}}


def anthropic_body(typ: str, message: str) -> dict:
    return {"type": "error", "error": {"type": typ, "message": message}}


def openai_body(code: str | None, message: str, typ: str = "invalid_request_error") -> dict:
    return {"error": {"message": message, "type": typ, "code": code, "param": None}}


@pytest.mark.parametrize(
    "status, body, kind",
    [
        (429, OPENAI_429, "rate_limit"),
        (429, anthropic_body("rate_limit_error", "Number of request tokens has exceeded your rate limit"), "rate_limit"),
        (429, openai_body("insufficient_quota", "You exceeded your current quota", "insufficient_quota"), "quota"),
        (529, anthropic_body("overloaded_error", "Overloaded"), "overloaded"),
        (408, openai_body(None, "Request timed out"), "timeout"),
        (500, openai_body(None, "The server had an error", "server_error"), "server"),
        (502, "<html>Bad gateway</html>", "server"),
        (503, None, "server"),
        (504, None, "server"),
        (401, openai_body("invalid_api_key", "Incorrect API key provided"), "auth"),
        (403, anthropic_body("permission_error", "Your API key does not have permission"), "auth"),
        (402, anthropic_body("billing_error", "Payment required"), "quota"),
        (400, anthropic_body("invalid_request_error", "Your credit balance is too low to access the Anthropic API"), "quota"),
        (404, openai_body("model_not_found", "The model `gpt-9` does not exist"), "invalid_model"),
        (404, anthropic_body("not_found_error", "model: claude-nope"), "invalid_model"),
        (404, openai_body(None, "No response found with id 'resp_1'."), "invalid_request"),
        (400, openai_body("context_length_exceeded", "This model's maximum context length is 128000 tokens"), "context_overflow"),
        (400, anthropic_body("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"), "context_overflow"),
        (413, anthropic_body("request_too_large", "Request exceeds the maximum size"), "context_overflow"),
        (400, anthropic_body("invalid_request_error", "messages: roles must alternate"), "invalid_request"),
        (422, openai_body(None, "Unprocessable"), "invalid_request"),
    ],
)
def test_each_status_and_body_maps_to_its_kind(status, body, kind):
    error = classify_status(status, body, provider="openai")
    assert (error.kind, error.status_code, error.provider) == (kind, status, "openai")
    assert error.retryable == (kind in {"rate_limit", "overloaded", "timeout", "connection", "server"})


def test_the_message_is_one_readable_sentence_naming_the_provider():
    error = classify_status(429, OPENAI_429, provider="openai", headers={"retry-after": "2"})
    assert error.message == "OpenAI rate limit reached (HTTP 429): Rate limit reached for gpt-4o-mini"
    assert str(error) == error.message
    assert error.raw == {"status_code": 429, "body": OPENAI_429}


@pytest.mark.parametrize(
    "headers, retry_after",
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_comes_from_the_headers_with_milliseconds_first(headers, retry_after):
    assert classify_status(429, OPENAI_429, provider="openai", headers=headers).retry_after == retry_after


def test_retry_after_may_be_an_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    retry_after = classify_status(503, None, provider="anthropic", headers={"retry-after": when}).retry_after
    assert retry_after is not None and 28 <= retry_after <= 31


def test_an_error_event_inside_a_stream_gets_the_status_its_type_implies():
    error = classify_status(200, anthropic_body("overloaded_error", "Overloaded"), provider="anthropic")
    assert (error.kind, error.status_code) == ("overloaded", 529)
    assert error.message == "Anthropic is overloaded (HTTP 529): Overloaded"
    unknown = classify_status(None, {"code": "weird", "message": "hm"}, provider="openai", default="server")
    assert (unknown.kind, unknown.status_code) == ("server", None)


def test_no_api_key_survives_in_the_message_or_the_raw_error():
    key = "my-configured-secret-key"
    body = openai_body("invalid_api_key", f"Incorrect API key provided: sk-proj-abcdefghijklmnop. Key {key} rejected")
    error = classify_status(401, body, provider="openai", api_key=key, headers={"retry-after": "1"})
    for text in (error.message, repr(error), repr(error.raw)):
        assert "sk-proj-abcdefghijklmnop" not in text and key not in text
    assert error.message == "OpenAI rejected the credentials (HTTP 401): Incorrect API key provided: sk-***. Key *** rejected"
    assert scrub({"h": ["Authorization: Bearer abcdefghij"]}) == {"h": ["Authorization: Bearer ***"]}


@pytest.mark.parametrize(
    "exc, kind",
    [
        (TimeoutError("timed out"), "timeout"),
        (ConnectionRefusedError(111, "Connection refused"), "connection"),
        (ConnectionResetError(104, "Connection reset by peer"), "connection"),
        (httpx.ReadTimeout("read timed out"), "timeout"),
        (httpx.ConnectError("refused"), "connection"),
        (httpx.RemoteProtocolError("peer closed connection without sending complete message body"), "connection"),
        (httpx2.ReadTimeout("read timed out"), "timeout"),
        (httpx2.RemoteProtocolError("incomplete chunked read"), "connection"),
        (httpx2.ReadError("reset"), "connection"),
        (ValueError("something odd"), "unknown"),
    ],
)
def test_exceptions_map_to_their_kind(exc, kind):
    error = classify_exception(exc, provider="anthropic")
    assert (error.kind, error.status_code, error.provider) == (kind, None, "anthropic")


def test_a_model_error_is_passed_through_unchanged():
    original = ModelError("x", kind="overloaded")
    assert classify_exception(original, provider="openai") is original


def test_a_timeout_inside_a_connection_error_is_a_timeout():
    try:
        try:
            raise httpx2.ReadTimeout("slow")
        except httpx2.ReadTimeout as inner:
            raise ConnectionError("wrapped") from inner
    except ConnectionError as outer:
        assert classify_exception(outer, provider="openai").kind == "timeout"


def test_missing_credentials_is_a_value_error():
    assert issubclass(MissingCredentials, ValueError)


def test_provider_errors_are_durable_errors():
    import durable

    assert issubclass(MissingCredentials, durable.DurableError)
    assert isinstance(classify_status(429, OPENAI_429, provider="openai"), durable.DurableError)
    assert durable.ModelError is ModelError
    assert durable.MissingCredentials is MissingCredentials


def test_importing_durable_does_not_import_the_sdks():
    code = (
        "import durable, durable.models, sys\n"
        "import durable.models.errors, durable.models.openai, durable.models.anthropic\n"
        "assert 'openai' not in sys.modules, 'openai was imported'\n"
        "assert 'anthropic' not in sys.modules, 'anthropic was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
