"""GeminiModel against a real local HTTP server speaking Gemini's REST wire format
(`models/{model}:streamGenerateContent?alt=sse`): exact event sequences, exact request bodies (a
text turn, a tool loop, thought signatures sent back), every error class, silence, trio."""

from __future__ import annotations

import base64
import json

import attrs
import pytest

from durable.models._gemini_wire import UNSIGNED, Reply as GeminiReply
from durable.models.errors import MissingCredentials
from durable.models.gemini import GeminiModel
from durable.models.protocol import (
    FinalMessage,
    ModelError,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
)
from durable.records import AssistantEntry, CompactionEntry, Reasoning, ToolCall, ToolResultEntry, Usage, UserEntry

from .conftest import GEMINI_KEY, HELLO, WEATHER, Reply, collect, collect_until_error, json_reply, sse_reply
from .held_time import HeldTime

PATH = "/v1beta/models/gemini-test:streamGenerateContent"
CALL = ToolCall("fc_1", "get_weather", '{"city": "Paris"}')
SIGNATURE = base64.b64encode(b"\x00opaque thought signature \xff\x10").decode()
TEXT_SIGNATURE = base64.b64encode(b"text signature").decode()
FIRST = UsageEvent(Usage(25, 0, cache_read_tokens=5))  # the first chunk's usage: the prompt
TOTAL = Usage(25, 11, reasoning_tokens=4, cache_read_tokens=5)


def model(server, **options) -> GeminiModel:
    server.models.append(GeminiModel("gemini-test", api_key=GEMINI_KEY, base_url=server.url, **options))
    return server.models[-1]


def usage(candidates: int | None = None) -> dict:
    counts = {"promptTokenCount": 25, "cachedContentTokenCount": 5}
    if candidates is not None:
        counts |= {"candidatesTokenCount": candidates, "thoughtsTokenCount": 4, "totalTokenCount": 25 + candidates + 4}
    return counts


def chunk(*parts: dict, finish: str | None = None, usage_metadata: dict | None = None) -> dict:
    candidate: dict = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    out: dict = {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": "resp_1"}
    if usage_metadata is not None:
        out["usageMetadata"] = usage_metadata
    return out


def function_call(call: ToolCall, signature: str | None = None, *, with_id: bool = True) -> dict:
    part: dict = {"functionCall": {"name": call.name, "args": json.loads(call.arguments)}}
    if with_id:
        part["functionCall"]["id"] = call.id
    if signature:
        part["thoughtSignature"] = signature
    return part


def gemini_stream(deltas, calls=(), *, finish="STOP", end="clean", thought=None, signature=None) -> Reply:
    """The chunks Gemini streams for an answer of text `deltas` and function `calls` (the first
    signed with `signature`), after a thought summary `thought`; `finish=None` leaves it unfinished."""
    chunks = []
    if thought is not None:
        chunks.append(chunk({"text": thought, "thought": True}, usage_metadata=usage()))
    for delta in deltas:
        chunks.append(chunk({"text": delta}, usage_metadata=usage() if not chunks else None))
    if calls:
        parts = [function_call(c, signature if i == 0 else None) for i, c in enumerate(calls)]
        chunks.append(chunk(*parts, usage_metadata=usage() if not chunks else None))
    if finish is not None:
        chunks.append(chunk({"text": ""}, finish=finish, usage_metadata=usage(7)))
    return sse_reply(chunks, named=False, end=end)


def user_text(text: str) -> dict:
    return {"role": "user", "parts": [{"text": text}]}


SYSTEM = {"parts": [{"text": "Be brief."}], "role": "user"}
NO_AFC = {"automaticFunctionCalling": {"disable": True}}  # how the SDK sends it: not on the wire
DECLARATION = {"functionDeclarations": [{"description": "The weather in a city", "name": "get_weather",
                                         "parameters_json_schema": WEATHER.parameters}]}


# --------------------------------------------------------------------------- streaming


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_a_gemini_stream_yields_deltas_whole_calls_usage_and_one_final_message(server, anyio_backend):
    server.script("POST", PATH, gemini_stream(["Let me ", "check."], [CALL]))
    events = await collect(model(server).stream(HELLO))
    assert events == [
        FIRST,  # the prompt is charged even if the answer is cut off
        TextDelta("Let me "),
        TextDelta("check."),
        ToolCallEvent(CALL),
        UsageEvent(TOTAL),
        FinalMessage("Let me check.", "tool_use", (CALL,), TOTAL),
    ]
    [sent] = server.requests
    assert (sent.method, sent.path, sent.query) == ("POST", PATH, "alt=sse")
    assert sent.headers["x-goog-api-key"] == GEMINI_KEY
    assert "authorization" not in sent.headers
    assert sent.body == {"contents": [user_text("Hello")], "systemInstruction": SYSTEM, "generationConfig": {}}


@pytest.mark.anyio
async def test_a_tool_loop_is_sent_as_gemini_contents_with_call_ids(server):
    server.script("POST", PATH.replace("gemini-test", "gemini-other"), gemini_stream(["Sunny."]))
    bad = ToolCall("fc_3", "get_weather", '{"city": "Par')  # cut off mid-JSON
    request = ModelRequest(
        system="Be brief.",
        messages=(
            CompactionEntry("We talked about Paris.", first_kept_seq=5),
            UserEntry("Weather?"),
            AssistantEntry("Checking.", "tool_use", (CALL, ToolCall("fc_2", "noop", ""), bad)),
            ToolResultEntry("fc_1", "get_weather", "18 C"),
            ToolResultEntry("fc_2", "noop", "Tool noop was interrupted", is_error=True),
            ToolResultEntry("fc_3", "get_weather", "", is_error=True),
            UserEntry("And tomorrow?"),
            AssistantEntry("", "error"),  # no parts: not sendable, left out
            UserEntry("Go on"),
        ),
        tools=(WEATHER,),
        options={"model": "gemini-other", "max_tokens": 300, "temperature": 0.5},
    )
    events = await collect(model(server).stream(request))
    assert events[-1] == FinalMessage("Sunny.", "stop", (), TOTAL)
    [sent] = server.requests
    assert sent.path == "/v1beta/models/gemini-other:streamGenerateContent"
    assert sent.body == {
        "contents": [
            {"role": "user", "parts": [{"text": "Summary of the conversation so far:\nWe talked about Paris."},
                                       {"text": "Weather?"}]},
            {"role": "model", "parts": [
                {"text": "Checking."},
                {"functionCall": {"id": "fc_1", "args": {"city": "Paris"}, "name": "get_weather"}},
                {"functionCall": {"id": "fc_2", "args": {}, "name": "noop"}},
                {"functionCall": {"id": "fc_3", "args": {}, "name": "get_weather"}},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "fc_1", "name": "get_weather", "response": {"output": "18 C"}}},
                {"functionResponse": {"id": "fc_2", "name": "noop",
                                      "response": {"error": "Tool noop was interrupted"}}},
                {"functionResponse": {"id": "fc_3", "name": "get_weather", "response": {"error": ""}}},
                {"text": "And tomorrow?"},
                {"text": "Go on"},
            ]},
        ],
        "systemInstruction": SYSTEM,
        "tools": [DECLARATION],
        "generationConfig": {"maxOutputTokens": 300, "temperature": 0.5},
    }


@attrs.frozen
class Block:
    """A reasoning block as the generic reasoning record gives it (format, signature, id)."""

    text: str = ""
    format: str = "google"
    signature: str | None = None
    id: str | None = None
    partial: bool = False


@attrs.frozen
class ReasonedEntry(AssistantEntry):
    """An assistant entry with reasoning blocks, as stored once the reasoning record lands."""

    reasoning: tuple[Block, ...] = ()


def as_sent(signature: str) -> str:
    """A signature as the SDK writes its bytes: base64url."""
    sent = base64.urlsafe_b64encode(base64.b64decode(signature)).decode()
    assert base64.urlsafe_b64decode(sent) == base64.b64decode(signature)
    return sent


@pytest.mark.anyio
async def test_thought_signatures_read_from_a_stream_are_sent_back_unchanged_on_their_parts(server):
    from google.genai import types

    server.script("POST", PATH, gemini_stream([], [CALL, ToolCall("fc_2", "noop", "{}")], thought="Paris, so...",
                                              signature=SIGNATURE, finish="STOP"),
                  gemini_stream(["Sunny."]))
    m = model(server, include_thoughts=True)
    events = await collect(m.stream(HELLO))
    calls = (CALL, ToolCall("fc_2", "noop", "{}"))
    thought = (Reasoning("Paris, so...", "google"), Reasoning("", "google", signature=SIGNATURE, id="fc_1"))
    assert events == [FIRST, ReasoningDelta("Paris, so..."), ToolCallEvent(calls[0]), ToolCallEvent(calls[1]),
                      UsageEvent(TOTAL), FinalMessage("", "tool_use", calls, TOTAL, reasoning=thought)]
    # the thought is reasoning, not answer text; the call's signature kept for the reasoning record
    assert server.requests[0].body["generationConfig"] == {"thinkingConfig": {"include_thoughts": True}}
    # What the reading keeps for the reasoning record: the thought and the call's signature, as sent.
    reply = GeminiReply()
    for raw in gemini_stream([], calls, thought="Paris, so...", signature=SIGNATURE).chunks:
        reply.read(types.GenerateContentResponse.model_validate(json.loads(raw.decode()[len("data: "):])))
    assert reply.thoughts == [("Paris, so...", None, None), ("", SIGNATURE, "fc_1")]
    # Sent back in the tool loop: each signature on the part it came with, byte for byte (the SDK
    # writes bytes in base64url, which the API reads as it reads base64).
    entry = ReasonedEntry("Done", "tool_use", calls, reasoning=(
        Block("Paris, so..."), Block(signature=SIGNATURE, id="fc_1"), Block(signature=TEXT_SIGNATURE),
        Block(signature="b3RoZXI=", id="fc_2", format="anthropic"),  # another provider's: not sent
        Block(signature="cGFydGlhbA==", id="fc_2", partial=True)))  # cut off: never sent
    loop = ModelRequest("Be brief.", (UserEntry("Hello"), entry, ToolResultEntry("fc_1", "get_weather", "18 C"),
                                      ToolResultEntry("fc_2", "noop", "ok")))
    await collect(m.stream(loop))
    assert server.requests[1].body["contents"] == [
        user_text("Hello"),
        {"role": "model", "parts": [
            {"text": "Done", "thoughtSignature": as_sent(TEXT_SIGNATURE)},
            {"functionCall": {"id": "fc_1", "args": {"city": "Paris"}, "name": "get_weather"},
             "thoughtSignature": as_sent(SIGNATURE)},
            {"functionCall": {"id": "fc_2", "args": {}, "name": "noop"}},
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "fc_1", "name": "get_weather", "response": {"output": "18 C"}}},
            {"functionResponse": {"id": "fc_2", "name": "noop", "response": {"output": "ok"}}},
        ]},
    ]


@pytest.mark.anyio
async def test_to_gemini_3_a_turn_without_signatures_gets_the_skip_value_on_its_first_call(server):
    calls = (CALL, ToolCall("fc_2", "noop", "{}"))
    loop = (UserEntry("Hello"), AssistantEntry("", "tool_use", calls), ToolResultEntry("fc_1", "get_weather", "18 C"),
            ToolResultEntry("fc_2", "noop", "ok"))
    m = model(server)
    for name in ("gemini-3-flash", "gemini-2.5-flash"):
        server.script("POST", PATH.replace("gemini-test", name), gemini_stream(["Sunny."]))
        await collect(m.stream(ModelRequest("", loop, options={"model": name})))
    three, two = (sent.body["contents"][1]["parts"] for sent in server.requests)
    second = {"functionCall": {"id": "fc_2", "args": {}, "name": "noop"}}
    assert three == [{"functionCall": {"id": "fc_1", "args": {"city": "Paris"}, "name": "get_weather"},
                      "thoughtSignature": as_sent(UNSIGNED)}, second]
    assert base64.urlsafe_b64decode(three[0]["thoughtSignature"]) == b"skip_thought_signature_validator"
    assert two == [{"functionCall": {"id": "fc_1", "args": {"city": "Paris"}, "name": "get_weather"}}, second]


@pytest.mark.anyio
async def test_a_call_without_an_id_gets_one_from_the_attempt_key(server):
    part = function_call(CALL, with_id=False)
    server.script("POST", PATH, sse_reply([chunk(part, usage_metadata=usage()), chunk(part), chunk(finish="STOP",
                                          usage_metadata=usage(7))], named=False))
    events = await collect(model(server).stream(HELLO))
    calls = (ToolCall("gen-1-a1-1", "get_weather", '{"city": "Paris"}'),
             ToolCall("gen-1-a1-2", "get_weather", '{"city": "Paris"}'))
    assert events == [FIRST, ToolCallEvent(calls[0]), ToolCallEvent(calls[1]), UsageEvent(TOTAL),
                      FinalMessage("", "tool_use", calls, TOTAL)]


@pytest.mark.anyio
async def test_finish_reasons_map_to_the_protocol(server):
    blocked = sse_reply([{"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage()}], named=False)
    server.script("POST", PATH, gemini_stream(["Trunc"], finish="MAX_TOKENS"), gemini_stream(["Bad"], finish="SAFETY"),
                  blocked, gemini_stream(["{}"]))
    m = model(server)
    assert (await collect(m.stream(HELLO)))[-1] == FinalMessage("Trunc", "length", (), TOTAL)
    assert (await collect(m.stream(HELLO)))[-1] == FinalMessage("Bad", "error", (), TOTAL,
                                                                error="Gemini stopped the response: SAFETY")
    assert (await collect(m.stream(HELLO)))[-1] == FinalMessage("", "error", (), Usage(25, 0, cache_read_tokens=5),
                                                                error="Gemini blocked the prompt: SAFETY")
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert (await collect(m.stream(attrs.evolve(HELLO, output=schema))))[-1].text == "{}"
    assert server.requests[-1].body["generationConfig"] == {"responseMimeType": "application/json",
                                                            "responseJsonSchema": schema}


# --------------------------------------------------------------------------- errors


def error_body(code: int, status: str, message: str, *details: dict) -> dict:
    return {"error": {"code": code, "message": message, "status": status, "details": list(details)}}


RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "13s"}
KEY_INVALID = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
               "domain": "googleapis.com"}

ERRORS = [
    (429, error_body(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan.",
                     RETRY_INFO), {}, "rate_limit", 13.0),
    (429, error_body(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted."), {"retry-after": "7"},
     "rate_limit", 7.0),
    (500, error_body(500, "INTERNAL", "An internal error has occurred."), {}, "server", None),
    (503, error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later."), {}, "server", None),
    (504, error_body(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."), {}, "timeout",
     None),
    (400, error_body(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", KEY_INVALID), {},
     "auth", None),
    (401, error_body(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."), {}, "auth", None),
    (403, error_body(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers."), {}, "auth", None),
    (404, error_body(404, "NOT_FOUND", "models/gemini-test is not found for API version v1beta."), {},
     "invalid_model", None),
    (400, error_body(400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the maximum number of tokens "
                                              "allowed (1048576)."), {}, "context_overflow", None),
    (400, error_body(400, "INVALID_ARGUMENT", "Invalid JSON payload received. Unknown name \"foo\"."), {},
     "invalid_request", None),
]


@pytest.mark.anyio
@pytest.mark.parametrize("status, body, headers, kind, retry_after", ERRORS)
async def test_an_error_response_is_one_classified_error_and_is_not_retried_by_the_sdk(
    server, status, body, headers, kind, retry_after
):
    server.script("POST", PATH, json_reply(body, status, headers))
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert events == []
    assert isinstance(error, ModelError)
    assert (error.kind, error.status_code, error.retry_after, error.provider) == (kind, status, retry_after, "google")
    assert error.message.startswith("Gemini ") or error.message.startswith("The prompt is too long for the Gemini")
    assert f"(HTTP {status}): {body['error']['message']}" in error.message
    assert error.retryable == (kind in ("rate_limit", "server", "timeout"))
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_an_error_inside_the_stream_is_classified(server):
    server.script("POST", PATH, sse_reply([chunk({"text": "Hel"}, usage_metadata=usage()),
                                           error_body(503, "UNAVAILABLE", "The model is overloaded.")], named=False))
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert events == [FIRST, TextDelta("Hel")]
    assert (error.kind, error.status_code, error.message) == (
        "server", 503, "Gemini server error (HTTP 503): The model is overloaded.")


@pytest.mark.anyio
async def test_a_plain_text_error_body_is_classified_by_its_status(server):
    server.script("POST", PATH, Reply(502, {"content-type": "text/html"}, b"<html>Bad Gateway</html>"))
    _, error = await collect_until_error(model(server).stream(HELLO))
    assert (error.kind, error.status_code, error.message) == (
        "server", 502, "Gemini server error (HTTP 502): <html>Bad Gateway</html>")


@pytest.mark.anyio
async def test_the_api_key_never_appears_in_an_error(server):
    body = error_body(400, "INVALID_ARGUMENT", f"API key not valid: {GEMINI_KEY}", KEY_INVALID)
    server.script("POST", PATH, json_reply(body, 400))
    _, error = await collect_until_error(model(server).stream(HELLO))
    assert error.message == "Gemini rejected the credentials (HTTP 400): API key not valid: ***"
    for text in (str(error), repr(error), repr(error.raw)):
        assert GEMINI_KEY not in text


HELD = HeldTime()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", HELD.backends())
async def test_a_silent_stream_is_aborted_as_a_timeout_and_its_connection_closed(server, anyio_backend):
    server.script("POST", PATH, gemini_stream(["Hel"], finish=None, end="hold"))
    HELD.hold()  # until "Hel": the waits before it (the SDK's first use included) cannot run out
    events, error = await collect_until_error(HELD.release_after_text(model(server, stream_silence=0.25).stream(HELLO)))
    assert events == [FIRST, TextDelta("Hel")]
    assert (error.kind, error.message, error.provider) == ("timeout", "The model stream was silent for 0.25 s",
                                                           "google")
    await server.wait_for(server.disconnected)


@pytest.mark.anyio
async def test_a_request_over_its_whole_attempt_timeout_is_a_timeout(server):
    server.script("POST", PATH, Reply(hold_before=True))
    _, error = await collect_until_error(model(server, request_timeout=0.25).stream(HELLO))
    assert (error.kind, error.message) == ("timeout", "The model request took longer than 0.25 s")


@pytest.mark.anyio
async def test_a_dropped_or_unfinished_stream_is_a_connection_error(server, refused_url):
    server.script("POST", PATH, gemini_stream(["Hel"], finish=None, end="drop"),
                  gemini_stream(["Hel"], finish=None, end="clean"))
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert (events, error.kind, error.provider) == ([FIRST, TextDelta("Hel")], "connection", "google")
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert (events, error.kind) == ([FIRST, TextDelta("Hel")], "connection")
    assert error.message == "The Gemini stream ended before the response was complete"
    refused = GeminiModel("gemini-test", api_key=GEMINI_KEY, base_url=refused_url)
    server.models.append(refused)
    _, error = await collect_until_error(refused.stream(HELLO))
    assert (error.kind, error.status_code) == ("connection", None)


# --------------------------------------------------------------------------- construction, trio


def test_a_missing_key_is_refused_at_construction_naming_the_variables():
    with pytest.raises(MissingCredentials, match=r"GEMINI_API_KEY \(or GOOGLE_API_KEY\)"):
        GeminiModel("gemini-test")


@pytest.mark.anyio
async def test_the_key_and_base_url_come_from_the_environment(monkeypatch, server):
    monkeypatch.setenv("GOOGLE_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    server.script("POST", PATH, gemini_stream(["Hi"]))
    m = GeminiModel("gemini-test")
    server.models.append(m)
    assert (m.name, m.context_window, m.deferred) == ("google:gemini-test", 1_048_576, False)
    assert (await collect(m.stream(HELLO)))[-1].text == "Hi"
    assert server.requests[0].headers["x-goog-api-key"] == GEMINI_KEY


@pytest.mark.anyio
async def test_the_sdk_goes_through_httpx_under_trio_even_where_aiohttp_is_installed(server, monkeypatch):
    """The SDK prefers aiohttp (asyncio only) when it is importable; the model hands it an httpx
    client, which the SDK then uses, so a trio program streams."""
    from google.genai import _api_client

    monkeypatch.setattr(_api_client, "has_aiohttp", True)
    server.script("POST", PATH, gemini_stream(["Hi ", "trio"]))
    assert (await collect(model(server).stream(HELLO)))[-1] == FinalMessage("Hi trio", "stop", (), TOTAL)


@pytest.mark.anyio
async def test_every_model_setting_reaches_gemini_in_its_config_or_is_refused(server):
    from durable.errors import UnsupportedModelSetting
    from durable.models.protocol import ToolSpec
    from durable.records import ModelSettings

    server.script("POST", PATH, gemini_stream(["Hi"]))
    m = model(server)
    tools = (ToolSpec("lookup", "Looks things up"),)
    asked = ModelSettings(temperature=0.5, top_p=0.9, max_tokens=100, stop=("END",), seed=7, thinking_budget=512,
                          reasoning_effort="low", tool_choice="lookup", extra={"candidate_count": 1})
    await collect(m.stream(ModelRequest("", (UserEntry("Hi"),), tools, settings=asked)))
    body = server.requests[0].body
    assert body["generationConfig"] == {
        "temperature": 0.5, "topP": 0.9, "candidateCount": 1, "maxOutputTokens": 100, "stopSequences": ["END"],
        "seed": 7, "thinkingConfig": {"thinking_budget": 512, "thinking_level": "LOW"}}
    assert body["toolConfig"] == {"functionCallingConfig": {"allowedFunctionNames": ["lookup"], "mode": "ANY"}}
    for setting, why in [(ModelSettings(parallel_tool_calls=False), "Gemini has no switch for parallel tool calls"),
                         (ModelSettings(service_tier="flex"), "Gemini's API has no service tier"),
                         (ModelSettings(reasoning_effort="medium"),
                          "Gemini's thinking_level accepts 'low', 'high', not 'medium'")]:
        with pytest.raises(UnsupportedModelSetting) as refused:
            m.check_settings(setting, tools)
        assert why in str(refused.value) and "gemini-test" in str(refused.value)
    assert len(server.requests) == 1  # a refused setting sends nothing
