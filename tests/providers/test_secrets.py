"""An API key echoed back by a provider never reaches the session file (-wal included), the live
document, the reports or `Unanswered.detail` in any form (issue 13, item 8): upper-cased, URL-
encoded (wholly, partly, twice), JSON-escaped, or only by its shape (`sk-...`, `sk-proj-...`,
`sk-ant-...`, a bearer token). Real harness, real adapters, the local fake provider server."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import durable
from durable import records as r
from durable.models._sdk import SDKModel, scrubbed
from durable.models.anthropic import AnthropicModel
from durable.models.errors import scrub
from durable.models.gemini import GeminiModel
from durable.models.openai import OpenAIModel
from durable.models.protocol import FinalMessage, ModelError, TextDelta

from .conftest import Reply, json_reply
from .secret_forms import ENCODED, ESCAPED, GATEWAY_KEY, PARTS, WHITESPACE, FormOf, b64, survivors
from .test_anthropic import error_body
from .test_gemini import PATH as GEMINI_PATH
from .test_harness_integration import KEY, PATH, Host, make_settings, model

pytestmark = pytest.mark.anyio


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path / "session.sqlite")

APIS = ["responses", "chat", "anthropic"]
OTHER_KEYS = ["sk-proj-Zq81mXbC4tLw0pQe9RnV", "sk-ant-api03-Hk3jW9sLq0Zx7VbNm2Pt-AA", "gsk_Qw8Er7Ty6Ui5Op4As3Df2Gh"]
BEARER = "eyJhbGciOiJIUzI1NiJ9.cGF5bG9hZA.c2lnbmF0dXJl"


def percent_all(text: str) -> str:
    return "".join(f"%{b:02X}" for b in text.encode())


def forms(key: str) -> list[str]:
    """The ways a provider or a proxy in between might echo the key."""
    return [
        key.upper(),
        key.swapcase(),
        percent_all(key),
        percent_all(key).lower(),
        key.replace("-", "%2D"),
        key.replace("-", "%252D"),
        "".join(f"\\u{ord(c):04x}" for c in key[:6]) + key[6:].upper(),
        urllib.parse.quote_plus(f"Bearer {key}"),
    ]


def echo(key: str) -> str:
    """An error message that echoes the key in every form, and other secrets by their shape."""
    parts = [f"form {i}: {form}" for i, form in enumerate(forms(key))]
    parts += [f"other {i}: {other.upper() if i % 2 else other}" for i, other in enumerate(OTHER_KEYS)]
    parts += [f"GET /v1/models?api_key={percent_all(key)}&x=1", f"Authorization: bearer {BEARER}"]
    return "Incorrect API key provided. " + "; ".join(parts)


def error_reply(api: str, status: int, message: str) -> Reply:
    if api == "anthropic":
        typ = {401: "authentication_error", 500: "api_error"}[status]
        return json_reply(error_body(typ, message), status)
    code = {401: "invalid_api_key", 500: "server_error"}[status]
    return json_reply({"error": {"message": message, "code": code}}, status)


def leaks(blob: bytes | str, key: str) -> list[str]:
    """Every secret (in any of its forms) found in `blob`, also after URL-decoding and case-folding it."""
    text = blob.decode("utf-8", "replace") if isinstance(blob, bytes) else blob
    secrets = [key, *OTHER_KEYS, BEARER]
    found = [form for form in forms(key) if form in text]
    decoded = text
    for _ in range(3):
        decoded = urllib.parse.unquote(decoded)
    unescaped = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), decoded)
    folded = {text.casefold(), decoded.casefold(), unescaped.casefold()}
    found += [s for s in secrets if any(s.casefold() in t for t in folded)]
    found += [s[-12:] for s in secrets if any(s[-12:].casefold() in t for t in folded)]  # no tail of one either
    return found


@pytest.mark.parametrize("api", APIS)
async def test_an_echoed_key_in_any_form_reaches_neither_file_live_document_reports_nor_detail(server, host, api):
    key = KEY[api]
    server.script("POST", PATH[api], error_reply(api, 500, echo(key)), error_reply(api, 401, echo(key)))
    seen: list[Any] = []
    async with host.open(model(server, api)) as h:
        sub = await h.root.submit("Hello")
        at = await host.clock.wait_for_timer("retry:1")
        live = h.root.live()
        assert live.generation is not None and live.generation.retry is not None
        seen += [live, host.file_bytes()]
        host.clock.advance(at - host.clock.now())
        outcome = await sub.wait()
        assert isinstance(outcome, r.Unanswered) and outcome.reason == "model_error"
        assert outcome.detail.startswith(("OpenAI rejected the credentials (HTTP 401): Incorrect API key provided.",
                                          "Anthropic rejected the credentials (HTTP 401): Incorrect API key provided."))
        assert "***" in outcome.detail
        seen += [outcome, h.root.live(), await h.task(1), host.file_bytes()]
    assert len(host.reports) == 2
    seen += [host.reports, [report.raw for report in host.reports], host.file_bytes()]
    for item in seen:
        blob = item if isinstance(item, bytes) else repr(item)
        assert leaks(blob, key) == [], f"{type(item).__name__} holds a secret"
    assert b"***" in host.file_bytes()


@pytest.mark.parametrize("api", ["responses", "anthropic"])
async def test_a_plain_text_error_body_is_scrubbed_too(server, host, api):
    key = KEY[api]
    server.script("POST", PATH[api], Reply(401, {"content-type": "text/plain"}, echo(key).encode()))
    async with host.open(model(server, api)) as h:
        outcome = await (await h.root.submit("Hello")).wait()
        assert isinstance(outcome, r.Unanswered) and outcome.reason == "model_error"
    for item in (outcome, host.reports, host.file_bytes()):
        assert leaks(item if isinstance(item, bytes) else repr(item), key) == []


async def test_a_key_echoed_in_an_anthropic_stream_error_event_is_scrubbed(server, host):
    from .test_anthropic import message_events

    key = KEY["anthropic"]
    server.script("POST", "/v1/messages",
                  message_events(["Hel"], error={"type": "invalid_request_error", "message": echo(key)}))
    async with host.open(model(server, "anthropic")) as h:
        outcome = await (await h.root.submit("Hello")).wait()
        assert isinstance(outcome, r.Unanswered)
    for item in (outcome, host.reports, host.file_bytes()):
        assert leaks(item if isinstance(item, bytes) else repr(item), key) == []


def test_scrub_replaces_every_form_of_the_key_and_every_key_shape():
    key = "sk-test-0123456789abcdef"
    for form in forms(key):
        assert leaks(scrub(f"x {form} y", key), key) == [], form
    assert scrub(f"provided: {key.upper()}.", key) == "provided: ***."
    assert scrub(f"k={percent_all(key)}&q=1", key) == "k=***&q=1"
    assert scrub("SK-PROJ-ABCDEFGHIJKLMNOP and sk-ant-api03-abcdefgh") == "sk-*** and sk-***"
    assert scrub("BEARER abcdefghij") == "Bearer ***"
    assert scrub("?api_key=hunter2hunter2&x=1") == "?api_key=***&x=1"
    assert scrub({"Authorization": "Basic dXNlcjpwYXNz", "X-API-Key": "short"}) == {
        "Authorization": "***", "X-API-Key": "***"}
    assert scrub(b"sk-abcdefghij") == "sk-***"
    # no false alarms on ordinary text, and scrubbing twice changes nothing more
    plain = "task-abcdefghijk, disk-12345678, max_tokens: 4096, /v1%2Fresponses, Bearer ***, api_key=***"
    assert scrub(plain, key) == plain
    once = scrub(echo(key), key)
    assert scrub(once, key) == once
    # a short configured key is replaced only exactly (case-folded it would hit ordinary words)
    assert scrub("none None NONE", "none") == "*** None NONE"


async def test_an_error_the_guard_passes_on_unchanged_is_scrubbed_too():
    from durable.models.errors import AttemptGuard
    from durable.models.protocol import ModelError

    key = "sk-test-0123456789abcdef"
    guard = AttemptGuard("openai", api_key=key)

    async def bug() -> None:
        raise TypeError(f"bad header value 'Bearer {key.upper()}'")

    async def model_error() -> None:
        raise ModelError(f"echo {percent_all(key)}", raw={"x-api-key": key}, provider="openai")

    with pytest.raises(TypeError) as caught:
        await guard.call(bug)
    assert str(caught.value) == "bad header value 'Bearer ***'"
    with pytest.raises(ModelError) as failed:
        await guard.call(model_error)
    assert (failed.value.message, str(failed.value), failed.value.raw) == ("echo ***", "echo ***", {"x-api-key": "***"})


# --------------------------------------------------------------------------- issue 25, item 8: every form, every path

E2E_FORMS: dict[str, FormOf] = {name: form for name, form in {**ESCAPED, **PARTS, **ENCODED, **WHITESPACE}.items()
                                if name in ("json \\/ escape", "prefix of 24", "suffix of 16", "base64",
                                            "base64 of user:key (user 'bob')", "base64url", "hex",
                                            "a space every 4 characters", "one character a line")}
SPLIT = "split across two JSON fields"
HEAD = 9  # the key's first characters, in the message; the rest is in the next field


def gateway_model(server: Any, api: str, key: str = GATEWAY_KEY, **options: Any) -> Any:
    """A model whose key has no provider's shape: only the forms of the key itself can find it."""
    if api == "anthropic":
        m: Any = AnthropicModel("claude-test", api_key=key, base_url=server.url, **options)
    elif api == "google":
        m = GeminiModel("gemini-test", api_key=key, base_url=server.url, **options)
    else:
        m = OpenAIModel("gpt-test", api="chat" if api == "chat" else "responses", api_key=key,
                        base_url=server.url + "/v1", **options)
    server.models.append(m)
    return m


def leaky_reply(api: str, status: int, form: str, key: str) -> Reply:
    """An error response whose body holds the key in `form` (or split over two neighbouring fields)."""
    if form == SPLIT:
        message, extra = f"Invalid credentials {key[:HEAD]}", {"param": key[HEAD:]}
    else:
        message, extra = f"Invalid credentials {E2E_FORMS[form](key)} (check the gateway)", {}
    if api == "anthropic":
        body = error_body({401: "authentication_error", 500: "api_error"}[status], message)
        body["error"].update(extra)
    elif api == "google":  # the rest of a split key in the field right after the message
        body = {"error": {"code": status, "message": message, **extra,
                          "status": {401: "UNAUTHENTICATED", 500: "INTERNAL"}[status]}}
    else:
        body = {"error": {"message": message, **extra, "code": {401: "invalid_api_key", 500: "server_error"}[status]}}
    return json_reply(body, status)


def cli_views(path: Path) -> list[str]:
    """What `durable inspect` (text and JSON) and `durable export` (JSON and Markdown) print."""
    from click.testing import CliRunner

    from durable.cli.command import cli

    outputs = []
    for args in (["inspect", str(path)], ["inspect", str(path), "--json"], ["export", str(path)],
                 ["export", str(path), "--format", "markdown"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    return outputs


@pytest.mark.parametrize("form", [*E2E_FORMS, SPLIT])
@pytest.mark.parametrize("api", [*APIS, "google"])
async def test_a_key_in_any_form_reaches_no_report_detail_live_document_file_inspect_or_export(server, host, api, form):
    key = GATEWAY_KEY
    path = GEMINI_PATH if api == "google" else PATH[api]
    server.script("POST", path, leaky_reply(api, 500, form, key), leaky_reply(api, 401, form, key))
    seen: list[Any] = []
    async with host.open(gateway_model(server, api)) as h:
        sub = await h.root.submit("Hello")
        at = await host.clock.wait_for_timer("retry:1")
        retrying = h.root.live()
        assert retrying.generation is not None and retrying.generation.retry is not None
        seen += [retrying, host.file_bytes()]
        host.clock.advance(at - host.clock.now())
        outcome = await sub.wait()
        assert isinstance(outcome, r.Unanswered) and outcome.reason == "model_error"
        assert outcome.detail.startswith(("OpenAI rejected the credentials (HTTP 401): Invalid credentials ",
                                          "Anthropic rejected the credentials (HTTP 401): Invalid credentials ",
                                          "Gemini rejected the credentials (HTTP 401): Invalid credentials "))
        assert "***" in outcome.detail
        seen += [outcome.detail, h.root.live(), await h.task(1), host.file_bytes()]
    assert len(host.reports) == 2
    seen += [[(report.message, report.raw) for report in host.reports], host.file_bytes(), *cli_views(host.path)]
    for item in seen:
        assert survivors(item, key) == [], f"{type(item).__name__} holds the key"
        if form == SPLIT:  # the head alone is under 16 characters: found only with the field after it
            text = item.decode("utf-8", "replace") if isinstance(item, bytes) else repr(item)
            assert key[:HEAD] not in text, f"{type(item).__name__} holds the head of the key"


@pytest.mark.parametrize("api", ["chat", "anthropic"])
async def test_a_stop_reason_that_echoes_the_key_is_scrubbed_in_the_entry_and_the_detail(server, host, api):
    from .test_anthropic import message_events
    from .test_openai import chat_chunk, chat_stream

    key = GATEWAY_KEY
    stop = f"refused:{b64('bob:' + key)}"
    if api == "anthropic":
        reply = message_events(["Hel"], stop=stop)
    else:
        reply = chat_stream(chat_chunk({"content": "Hel"}), chat_chunk(finish=stop))
    server.script("POST", PATH[api], reply)
    async with host.open(gateway_model(server, api)) as h:
        outcome = await (await h.root.submit("Hello")).wait()
        assert isinstance(outcome, r.Unanswered) and "stopped the response: refused:" in outcome.detail
    entries = await host.entries()
    assert entries[-1].stop_reason == "error" and "***" in entries[-1].error
    for item in (outcome, entries, host.reports, host.file_bytes(), *cli_views(host.path)):
        assert survivors(item, key) == []


async def test_the_password_of_the_base_url_is_a_secret_too(server, host):
    """A gateway behind Basic auth in the base URL: its password, echoed in base64 or in the
    URL a message names, is scrubbed like the key."""
    password = "gw-basic-Pw7Qx2Lm9Zk4Vt8Rb3Nc"
    base_url = server.url.replace("http://", f"http://svc:{password}@") + "/v1"
    m = OpenAIModel("gpt-test", api_key="sk-test-0123456789abcdef", base_url=base_url, deferred=True)
    server.models.append(m)
    server.script("POST", "/v1/responses",
                  json_reply({"error": {"message": f"no background jobs for {b64('svc:' + password)}"}}, 404))
    async with host.open(m, settings=make_settings(stream=durable.StreamSettings(deferred=True))) as h:
        outcome = await (await h.root.submit("Hello")).wait()
        assert isinstance(outcome, r.Unanswered)
        assert f"The server at http://svc:***@{server.url[len('http://'):]}/v1 has no background" in outcome.detail
    for item in (outcome, host.reports, host.file_bytes(), *cli_views(host.path)):
        assert survivors(item, password) == []


class LeakyAdapter(SDKModel):
    """An adapter whose own code (not a guarded SDK call) fails or stops with the key in its text."""

    provider = "openai"

    def __init__(self, key: str) -> None:
        self._secrets = (key,)
        self.key = key

    async def _stream(self, request: Any) -> AsyncIterator[Any]:
        yield TextDelta(f"the model may say {self.key}: that is content")
        if request.attempt == 1:
            yield FinalMessage("", "error", error=f"stopped: {self.key.upper()}")
            return
        raise ValueError(f"cannot read the event {{'id': '{b64(self.key)}'}}")

    @scrubbed
    async def fetch(self, handle: str) -> Any:
        if handle == "bad":
            raise ModelError(f"job {handle} failed", raw={"echo": self.key.encode().hex()})
        return FinalMessage("", "error", error=f"job stopped: {' '.join(self.key)}")


async def test_whatever_leaves_an_adapter_is_scrubbed_but_not_the_streamed_content():
    from durable.models import ModelRequest

    key = GATEWAY_KEY
    adapter = LeakyAdapter(key)
    events = [event async for event in adapter.stream(ModelRequest("", (), attempt=1))]
    assert events == [TextDelta(f"the model may say {key}: that is content"),
                      FinalMessage("", "error", error="stopped: ***")]
    with pytest.raises(ValueError) as failed:
        async for _ in adapter.stream(ModelRequest("", (), attempt=2)):
            pass
    assert str(failed.value) == "cannot read the event {'id': '***'}"
    assert await adapter.fetch("job") == FinalMessage("", "error", error="job stopped: ***")
    with pytest.raises(ModelError) as error:
        await adapter.fetch("bad")
    assert error.value.raw == {"echo": "***"}
