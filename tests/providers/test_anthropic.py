"""AnthropicModel against a real local HTTP server speaking the Messages and Message Batches wire
formats: exact event sequences, what is sent, every error class, silence, batch jobs."""

from __future__ import annotations

import json

import pytest

from durable.models.anthropic import AnthropicModel, batch_custom_id
from durable.models.errors import MissingCredentials
from durable.models.protocol import (
    DeferredHandle,
    FinalMessage,
    ModelError,
    ModelRequest,
    StillRunning,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
)
from durable.records import AssistantEntry, CompactionEntry, ToolCall, ToolResultEntry, Usage, UserEntry

from .conftest import (
    ANTHROPIC_KEY,
    HELLO,
    WEATHER,
    Reply,
    collect,
    collect_until_error,
    json_reply,
    jsonl_reply,
    sse_reply,
)
from .held_time import HeldTime

CALL = ToolCall("toolu_1", "get_weather", '{"city": "Paris"}')
STARTED = UsageEvent(Usage(25, 1, cache_read_tokens=5))  # what message_start reports in `message_events`
TOTAL = Usage(25, 11, cache_read_tokens=5)  # the 5 cached tokens are part of the 25 input tokens


def model(server, **options) -> AnthropicModel:
    server.models.append(AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, base_url=server.url, **options))
    return server.models[-1]


def message_events(deltas, calls=(), *, stop="end_turn", usage=(25, 11), end="clean", error=None):
    """The events Anthropic sends for a message with text `deltas` and tool `calls`; `error`
    replaces the end of the message with an error event."""
    events = [
        {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": usage[0] - 5, "cache_read_input_tokens": 5, "output_tokens": 1}}},
        {"type": "ping"},
    ]
    index = 0
    if deltas:
        events.append({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}}
                   for d in deltas]
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    for i, call in enumerate(calls, start=index):
        events.append({"type": "content_block_start", "index": i,
                       "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}})
        half = len(call.arguments) // 2
        for piece in ("", call.arguments[:half], call.arguments[half:]):
            events.append({"type": "content_block_delta", "index": i,
                           "delta": {"type": "input_json_delta", "partial_json": piece}})
        events.append({"type": "content_block_stop", "index": i})
    if error is not None:
        events.append({"type": "error", "error": error})
    elif stop is not None:
        events.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                       "usage": {"input_tokens": usage[0] - 5, "output_tokens": usage[1]}})  # no cache fields
        events.append({"type": "message_stop"})
    return sse_reply(events, end=end)


# --------------------------------------------------------------------------- streaming


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_a_message_stream_yields_deltas_complete_tool_calls_usage_and_one_final_message(server, anyio_backend):
    server.script("POST", "/v1/messages", message_events(["Let me ", "check."], [CALL], stop="tool_use"))
    events = await collect(model(server).stream(HELLO))
    assert events == [
        STARTED,  # at message_start: the input, charged even if the answer is cut off
        TextDelta("Let me "),
        TextDelta("check."),
        ToolCallEvent(CALL),
        UsageEvent(TOTAL),
        FinalMessage("Let me check.", "tool_use", (CALL,), TOTAL),
    ]
    [sent] = server.requests
    assert sent.headers["authorization"] == f"Bearer {ANTHROPIC_KEY}"
    assert sent.body == {"model": "claude-test", "max_tokens": 8192, "stream": True, "system": "Be brief.",
                         "messages": [{"role": "user", "content": "Hello"}]}


@pytest.mark.anyio
async def test_every_kind_of_entry_is_sent_as_anthropic_messages(server):
    server.script("POST", "/v1/messages", message_events(["Sunny."]))
    bad = ToolCall("toolu_3", "get_weather", '{"city": "Par')  # cut off mid-JSON
    request = ModelRequest(
        system="Be brief.",
        messages=(
            CompactionEntry("We talked about Paris.", first_kept_seq=5),
            UserEntry("Weather?"),
            AssistantEntry("Checking.", "tool_use", (CALL, ToolCall("toolu_2", "noop", ""), bad)),
            ToolResultEntry("toolu_1", "get_weather", "18 C"),
            ToolResultEntry("toolu_2", "noop", "Tool noop was interrupted", is_error=True),
            ToolResultEntry("toolu_3", "get_weather", "", is_error=True),
            UserEntry("And tomorrow?"),
            AssistantEntry("Half an ans", "aborted"),  # the harness filters these, not the provider
            AssistantEntry("", "error"),  # no content: not sendable, left out
            UserEntry("Go on"),
        ),
        tools=(WEATHER,),
        options={"model": "claude-other", "max_tokens": 300, "temperature": 0.5},
    )
    events = await collect(model(server).stream(request))
    assert events[-1] == FinalMessage("Sunny.", "stop", (), TOTAL)
    assert server.requests[0].body == {
        "model": "claude-other",
        "max_tokens": 300,
        "temperature": 0.5,
        "stream": True,
        "system": "Be brief.",
        "tools": [{"name": "get_weather", "description": "The weather in a city", "input_schema": WEATHER.parameters}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "Summary of the conversation so far:\nWe talked about Paris."},
                {"type": "text", "text": "Weather?"},
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "noop", "input": {}},
                {"type": "tool_use", "id": "toolu_3", "name": "get_weather", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False, "content": "18 C"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
                 "content": "Tool noop was interrupted"},
                {"type": "tool_result", "tool_use_id": "toolu_3", "is_error": True},
                {"type": "text", "text": "And tomorrow?"},
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": "Half an ans"}]},
            {"role": "user", "content": "Go on"},
        ],
    }


@pytest.mark.anyio
async def test_stop_reasons_map_to_the_protocol(server):
    server.script("POST", "/v1/messages", message_events(["Trunc"], stop="max_tokens"),
                  message_events([], stop="refusal"), message_events(["Done."], stop="stop_sequence"))
    m = model(server)
    assert (await collect(m.stream(HELLO)))[-1] == FinalMessage("Trunc", "length", (), TOTAL)
    assert (await collect(m.stream(HELLO)))[-1] == FinalMessage("", "error", (), TOTAL,
                                                                error="Anthropic refused to answer")
    assert (await collect(m.stream(HELLO)))[-1] == FinalMessage("Done.", "stop", (), TOTAL)


@pytest.mark.anyio
async def test_a_tool_without_arguments_gets_its_start_input(server):
    no_args = ToolCall("toolu_9", "now", "")
    server.script("POST", "/v1/messages", message_events([], [no_args], stop="tool_use"))
    events = await collect(model(server).stream(HELLO))
    expected = ToolCall("toolu_9", "now", "{}")
    assert events == [STARTED, ToolCallEvent(expected), UsageEvent(TOTAL),
                      FinalMessage("", "tool_use", (expected,), TOTAL)]


@pytest.mark.anyio
async def test_an_error_event_inside_the_stream_is_classified(server):
    server.script("POST", "/v1/messages",
                  message_events(["Hel"], error={"type": "overloaded_error", "message": "Overloaded"}))
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert events == [STARTED, TextDelta("Hel")]
    assert (error.kind, error.status_code, error.provider) == ("overloaded", 529, "anthropic")
    assert error.message == "Anthropic is overloaded (HTTP 529): Overloaded"


def error_body(typ: str, message: str) -> dict:
    return {"type": "error", "error": {"type": typ, "message": message}, "request_id": "req_1"}


ERRORS = [
    (429, error_body("rate_limit_error", "Rate limited"), {"retry-after": "12"}, "rate_limit", 12.0),
    (529, error_body("overloaded_error", "Overloaded"), {}, "overloaded", None),
    (500, error_body("api_error", "Internal server error"), {}, "server", None),
    (504, error_body("timeout_error", "Gateway timeout"), {}, "timeout", None),
    (408, error_body("timeout_error", "Request timeout"), {}, "timeout", None),
    (401, error_body("authentication_error", "invalid x-api-key"), {}, "auth", None),
    (403, error_body("permission_error", "Not allowed"), {}, "auth", None),
    (400, error_body("invalid_request_error", "Your credit balance is too low to access the Anthropic API."),
     {}, "quota", None),
    (404, error_body("not_found_error", "model: claude-test"), {}, "invalid_model", None),
    (400, error_body("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"), {},
     "context_overflow", None),
    (413, error_body("request_too_large", "Request exceeds the maximum allowed number of bytes."), {},
     "context_overflow", None),
    (400, error_body("invalid_request_error", "messages.0.content: Field required"), {}, "invalid_request", None),
]


@pytest.mark.anyio
@pytest.mark.parametrize("status, body, headers, kind, retry_after", ERRORS)
async def test_an_error_response_is_one_classified_error_and_is_not_retried_by_the_sdk(
    server, status, body, headers, kind, retry_after
):
    server.script("POST", "/v1/messages", json_reply(body, status, headers))
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert events == []
    assert isinstance(error, ModelError)
    expected_status = 529 if kind == "overloaded" else status
    assert (error.kind, error.status_code, error.retry_after, error.provider) == (
        kind, expected_status, retry_after, "anthropic")
    assert body["error"]["message"] in error.message
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_the_api_key_never_appears_in_an_error(server):
    server.script("POST", "/v1/messages", json_reply(error_body("authentication_error", f"bad key {ANTHROPIC_KEY}"), 401))
    _, error = await collect_until_error(model(server).stream(HELLO))
    assert error.message == "Anthropic rejected the credentials (HTTP 401): bad key ***"
    for text in (str(error), repr(error), repr(error.raw)):
        assert ANTHROPIC_KEY not in text


HELD = HeldTime()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", HELD.backends())
async def test_a_silent_stream_is_aborted_as_a_timeout(server, anyio_backend):
    server.script("POST", "/v1/messages", message_events(["Hel"], stop=None, end="hold"))
    HELD.hold()  # until "Hel": the waits before it (the SDK's first use included) cannot run out
    events, error = await collect_until_error(HELD.release_after_text(model(server, stream_silence=0.25).stream(HELLO)))
    assert events == [STARTED, TextDelta("Hel")]
    assert (error.kind, error.message, error.provider) == ("timeout", "The model stream was silent for 0.25 s",
                                                           "anthropic")
    await server.wait_for(server.disconnected)


@pytest.mark.anyio
async def test_a_request_over_its_whole_attempt_timeout_is_a_timeout(server):
    server.script("POST", "/v1/messages", Reply(hold_before=True))
    _, error = await collect_until_error(model(server, request_timeout=0.25).stream(HELLO))
    assert (error.kind, error.message) == ("timeout", "The model request took longer than 0.25 s")


@pytest.mark.anyio
async def test_a_dropped_or_unfinished_stream_is_a_connection_error(server, refused_url):
    server.script("POST", "/v1/messages", message_events(["Hel"], stop=None, end="drop"),
                  message_events(["Hel"], stop=None, end="clean"))
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert (events, error.kind, error.provider) == ([STARTED, TextDelta("Hel")], "connection", "anthropic")
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert (events, error.kind) == ([STARTED, TextDelta("Hel")], "connection")
    assert error.message == "The Anthropic stream ended before the response was complete"
    refused = AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, base_url=refused_url)
    _, error = await collect_until_error(refused.stream(HELLO))
    assert (error.kind, error.status_code) == ("connection", None)


# --------------------------------------------------------------------------- construction


def test_a_missing_key_is_refused_at_construction_naming_the_variable():
    with pytest.raises(MissingCredentials, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude-test")


def test_the_key_and_base_url_come_from_the_environment(monkeypatch, refused_url):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", refused_url)
    m = AnthropicModel("claude-test", deferred=True)
    assert (m.name, m.context_window, m.deferred) == ("anthropic:claude-test", 200_000, True)
    assert str(m._client.base_url).rstrip("/") == refused_url
    assert m._client.max_retries == 0


# --------------------------------------------------------------------------- message batches


def batch(server, status="in_progress", bid="msgbatch_1"):
    return {"id": bid, "type": "message_batch", "processing_status": status,
            "request_counts": {"processing": int(status != "ended"), "succeeded": 0, "errored": 0,
                               "canceled": 0, "expired": 0},
            "created_at": "2025-01-01T00:00:00Z", "expires_at": "2025-01-02T00:00:00Z",
            "ended_at": None, "cancel_initiated_at": None, "archived_at": None,
            "results_url": f"{server.url}/v1/messages/batches/{bid}/results" if status == "ended" else None}


def result_line(custom_id: str, result: dict) -> dict:
    return {"custom_id": custom_id, "result": result}


SUCCEEDED = {"type": "succeeded", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
    "content": [{"type": "text", "text": "Sunny."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
    "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 30, "output_tokens": 8}}}


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_a_batch_is_submitted_under_the_request_key_and_polled_to_completion(server, anyio_backend):
    key = "conv:main/gen-7#a2"
    server.script("POST", "/v1/messages/batches", json_reply(batch(server)))
    server.script("GET", "/v1/messages/batches/msgbatch_1",
                  json_reply(batch(server)), json_reply(batch(server, "canceling")),
                  json_reply(batch(server, "ended")), json_reply(batch(server, "ended")))
    server.script("GET", "/v1/messages/batches/msgbatch_1/results",
                  jsonl_reply([result_line(batch_custom_id(key), SUCCEEDED)]))
    m = model(server, deferred=True, poll_interval=0.5)
    handle = await m.submit(ModelRequest(system="Be brief.", messages=(UserEntry("Weather?"),), tools=(WEATHER,),
                                         key=key))
    assert handle == DeferredHandle("msgbatch_1", poll_after=0.5)
    assert batch_custom_id(key) == "conv_main_gen-7_a2"
    [request] = server.requests[0].body["requests"]
    assert request == {"custom_id": "conv_main_gen-7_a2", "params": {
        "model": "claude-test", "max_tokens": 8192, "system": "Be brief.",
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": [{"name": "get_weather", "description": "The weather in a city",
                   "input_schema": WEATHER.parameters}]}}
    results = [await m.fetch(handle.id) for _ in range(3)]
    call = ToolCall("toolu_1", "get_weather", json.dumps({"city": "Paris"}))
    assert results == [StillRunning(poll_after=0.5), StillRunning(poll_after=0.5),
                       FinalMessage("Sunny.", "tool_use", (call,), Usage(30, 8))]
    assert len(server.requests_to("GET", "/v1/messages/batches/msgbatch_1/results")) == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    "result, kind, message",
    [
        ({"type": "errored", "error": error_body("overloaded_error", "Overloaded")}, "overloaded",
         "Anthropic is overloaded (HTTP 529): Overloaded"),
        ({"type": "errored", "error": error_body("invalid_request_error", "max_tokens: too large")},
         "invalid_request", "Anthropic rejected the request (HTTP 400): max_tokens: too large"),
        ({"type": "canceled"}, "unknown", "The Anthropic batch msgbatch_1 was canceled"),
        ({"type": "expired"}, "timeout", "The Anthropic batch msgbatch_1 expired before it was processed"),
    ],
)
async def test_an_ended_batch_without_success_raises_a_classified_error(server, result, kind, message):
    server.script("GET", "/v1/messages/batches/msgbatch_1",
                  json_reply(batch(server, "ended")), json_reply(batch(server, "ended")))
    server.script("GET", "/v1/messages/batches/msgbatch_1/results", jsonl_reply([result_line("k", result)]))
    with pytest.raises(ModelError) as error:
        await model(server, deferred=True).fetch("msgbatch_1")
    assert (error.value.kind, error.value.message, error.value.provider) == (kind, message, "anthropic")


@pytest.mark.anyio
async def test_cancel_reaches_the_provider_and_ignores_ended_or_unknown_batches(server):
    server.script(
        "POST", "/v1/messages/batches/msgbatch_1/cancel",
        json_reply(batch(server, "canceling")),
        json_reply(error_body("invalid_request_error", "Batch has already ended"), 400),
        json_reply(error_body("not_found_error", "Batch not found"), 404),
        json_reply(error_body("overloaded_error", "Overloaded"), 529),
    )
    m = model(server, deferred=True)
    for _ in range(3):
        await m.cancel("msgbatch_1")
    with pytest.raises(ModelError) as error:
        await m.cancel("msgbatch_1")
    assert (error.value.kind, error.value.status_code) == ("overloaded", 529)
    assert len(server.requests_to("POST", "/v1/messages/batches/msgbatch_1/cancel")) == 4
    assert await m.find("gen-7-a2") is None
