"""OpenAIModel against a real local HTTP server speaking the Responses and Chat Completions wire
formats: exact event sequences, what is sent, every error class, silence, background jobs."""

from __future__ import annotations

import anyio
import pytest

from durable.models.errors import MissingCredentials
from durable.models.openai import OpenAIModel
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

from .conftest import HELLO, OPENAI_KEY, WEATHER, Reply, collect, collect_until_error, json_reply, sse_reply
from .held_time import HeldTime

CALL = ToolCall("call_1", "get_weather", '{"city":"Paris"}')


def model(server, **options) -> OpenAIModel:
    server.models.append(OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=server.url + "/v1", **options))
    return server.models[-1]


# --------------------------------------------------------------------------- Responses wire format


def response_object(status="completed", text="", calls=(), usage=(12, 7), rid="resp_1", **extra):
    output = []
    if text:
        output.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    output += [{"type": "function_call", "id": f"fc_{c.id}", "call_id": c.id, "name": c.name,
                "arguments": c.arguments, "status": "completed"} for c in calls]
    return {"id": rid, "object": "response", "created_at": 1, "model": "gpt-test", "status": status,
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage),
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}} if usage else None,
            **extra}


def responses_stream(deltas, calls=(), *, terminal="response.completed", end="clean", **final):
    """The events OpenAI sends for a response with text `deltas` and function `calls`."""
    n = iter(range(1000))
    events = [{"type": "response.created", "sequence_number": next(n),
               "response": response_object("in_progress", usage=None)}]
    if deltas:
        events.append({"type": "response.output_item.added", "sequence_number": next(n), "output_index": 0,
                       "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress",
                                "content": []}})
        events += [{"type": "response.output_text.delta", "sequence_number": next(n), "item_id": "msg_1",
                    "output_index": 0, "content_index": 0, "delta": d, "logprobs": []} for d in deltas]
    for i, call in enumerate(calls, start=1):
        item = {"type": "function_call", "id": f"fc_{call.id}", "call_id": call.id, "name": call.name,
                "arguments": "", "status": "in_progress"}
        events.append({"type": "response.output_item.added", "sequence_number": next(n), "output_index": i,
                       "item": item})
        half = len(call.arguments) // 2
        for piece in (call.arguments[:half], call.arguments[half:]):
            events.append({"type": "response.function_call_arguments.delta", "sequence_number": next(n),
                           "item_id": item["id"], "output_index": i, "delta": piece})
        events.append({"type": "response.output_item.done", "sequence_number": next(n), "output_index": i,
                       "item": {**item, "arguments": call.arguments, "status": "completed"}})
    if terminal:
        final.setdefault("status", "completed" if terminal == "response.completed" else "incomplete")
        events.append({"type": terminal, "sequence_number": next(n),
                       "response": response_object(text="".join(deltas), calls=calls, **final)})
    return sse_reply(events, end=end)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_a_responses_stream_yields_deltas_tool_calls_usage_and_one_final_message(server, anyio_backend):
    server.script("POST", "/v1/responses", responses_stream(["Let me ", "check."], [CALL]))
    events = await collect(model(server).stream(HELLO))
    assert events == [
        TextDelta("Let me "),
        TextDelta("check."),
        ToolCallEvent(CALL),
        UsageEvent(Usage(12, 7)),
        FinalMessage("Let me check.", "tool_use", (CALL,), Usage(12, 7)),
    ]
    [sent] = server.requests
    assert sent.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert sent.body == {"model": "gpt-test", "stream": True, "instructions": "Be brief.",
                         "input": [{"role": "user", "content": "Hello"}]}


@pytest.mark.anyio
async def test_every_kind_of_entry_is_sent_as_responses_input(server):
    server.script("POST", "/v1/responses", responses_stream(["Sunny."]))
    request = ModelRequest(
        system="Be brief.",
        messages=(
            CompactionEntry("We talked about Paris.", first_kept_seq=5),
            UserEntry("Weather?"),
            AssistantEntry("Checking.", "tool_use", (CALL, ToolCall("call_2", "noop", ""))),
            ToolResultEntry("call_1", "get_weather", "18 C", is_error=False),
            ToolResultEntry("call_2", "noop", "Tool noop was interrupted", is_error=True),
            AssistantEntry("Half an ans", "aborted"),  # the harness filters these, not the provider
            UserEntry("And tomorrow?"),
        ),
        tools=(WEATHER,),
        options={"model": "gpt-other", "max_tokens": 300, "temperature": 0.2},
    )
    events = await collect(model(server).stream(request))
    assert events[-1] == FinalMessage("Sunny.", "stop", (), Usage(12, 7))
    assert server.requests[0].body == {
        "model": "gpt-other",
        "stream": True,
        "instructions": "Be brief.",
        "max_output_tokens": 300,
        "temperature": 0.2,
        "tools": [{"type": "function", "name": "get_weather", "description": "The weather in a city",
                   "parameters": WEATHER.parameters, "strict": False}],
        "input": [
            {"role": "user", "content": "Summary of the conversation so far:\nWe talked about Paris."},
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "Checking."},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
            {"type": "function_call", "call_id": "call_2", "name": "noop", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "18 C"},
            {"type": "function_call_output", "call_id": "call_2", "output": "Tool noop was interrupted"},
            {"role": "assistant", "content": "Half an ans"},
            {"role": "user", "content": "And tomorrow?"},
        ],
    }


@pytest.mark.anyio
async def test_tool_calls_only_in_the_completed_response_are_still_reported(server):
    server.script("POST", "/v1/responses", sse_reply([
        {"type": "response.output_text.delta", "sequence_number": 0, "item_id": "msg_1", "output_index": 0,
         "content_index": 0, "delta": "On it.", "logprobs": []},
        {"type": "response.completed", "sequence_number": 1,
         "response": response_object(text="On it.", calls=[CALL], usage=(3, 4))},
    ]))
    assert await collect(model(server).stream(HELLO)) == [
        TextDelta("On it."), ToolCallEvent(CALL), UsageEvent(Usage(3, 4)),
        FinalMessage("On it.", "tool_use", (CALL,), Usage(3, 4)),
    ]


@pytest.mark.anyio
async def test_an_incomplete_response_stops_for_length_or_the_content_filter(server):
    server.script(
        "POST", "/v1/responses",
        responses_stream(["Long"], terminal="response.incomplete",
                         incomplete_details={"reason": "max_output_tokens"}),
        responses_stream([], terminal="response.incomplete", incomplete_details={"reason": "content_filter"}),
    )
    assert (await collect(model(server).stream(HELLO)))[-1] == FinalMessage("Long", "length", (), Usage(12, 7))
    assert (await collect(model(server).stream(HELLO)))[-1] == FinalMessage(
        "", "error", (), Usage(12, 7), error="OpenAI stopped the response: content filter")


@pytest.mark.anyio
async def test_a_failed_response_or_an_error_event_raises_a_classified_error(server):
    server.script(
        "POST", "/v1/responses",
        responses_stream(["Hi"], terminal="response.failed", status="failed",
                         error={"code": "server_error", "message": "The model crashed"}),
        sse_reply([{"type": "error", "sequence_number": 0, "code": "rate_limit_exceeded",
                    "message": "Slow down", "param": None}]),
    )
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert events == [TextDelta("Hi")]
    assert (error.kind, error.status_code, error.message) == ("server", None, "OpenAI server error: The model crashed")
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert (events, error.kind, error.message) == ([], "rate_limit", "OpenAI rate limit reached: Slow down")


ERRORS = [
    (429, {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}},
     {"retry-after-ms": "1500"}, "rate_limit", 1.5),
    (429, {"error": {"message": "Rate limit reached", "type": "requests", "code": None}},
     {"retry-after": "3"}, "rate_limit", 3.0),
    (429, {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                     "code": "insufficient_quota"}}, {}, "quota", None),
    (529, {"error": {"message": "Overloaded", "type": "overloaded_error"}}, {}, "overloaded", None),
    (503, {"error": {"message": "Service unavailable", "type": "server_error"}}, {"retry-after": "2"}, "server", 2.0),
    (500, {"error": {"message": "Internal error", "type": "server_error"}}, {}, "server", None),
    (408, {"error": {"message": "Request timeout", "type": "timeout"}}, {}, "timeout", None),
    (401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}, {}, "auth", None),
    (403, {"error": {"message": "Country not supported", "code": "unsupported_country"}}, {}, "auth", None),
    (404, {"error": {"message": "The model `gpt-test` does not exist", "code": "model_not_found"}}, {},
     "invalid_model", None),
    (400, {"error": {"message": "maximum context length exceeded", "code": "context_length_exceeded"}}, {},
     "context_overflow", None),
    (400, {"error": {"message": "Unknown parameter", "code": "unknown_parameter"}}, {}, "invalid_request", None),
]


@pytest.mark.anyio
@pytest.mark.parametrize("status, body, headers, kind, retry_after", ERRORS)
async def test_an_error_response_is_one_classified_error_and_is_not_retried_by_the_sdk(
    server, status, body, headers, kind, retry_after
):
    server.script("POST", "/v1/responses", json_reply(body, status, headers))
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert events == []
    assert isinstance(error, ModelError)
    assert (error.kind, error.status_code, error.retry_after, error.provider) == (kind, status, retry_after, "openai")
    assert error.message.startswith("OpenAI") or error.message.startswith("The prompt")
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_the_api_key_never_appears_in_an_error(server):
    body = {"error": {"message": f"Incorrect API key provided: {OPENAI_KEY}.", "code": "invalid_api_key"}}
    server.script("POST", "/v1/responses", json_reply(body, 401))
    _, error = await collect_until_error(model(server).stream(HELLO))
    assert error.message == "OpenAI rejected the credentials (HTTP 401): Incorrect API key provided: ***."
    for text in (str(error), repr(error), repr(error.raw)):
        assert OPENAI_KEY not in text


HELD = HeldTime()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", HELD.backends())
async def test_a_silent_stream_is_aborted_as_a_timeout(server, anyio_backend):
    server.script("POST", "/v1/responses", responses_stream(["Hel"], terminal=None, end="hold"))
    HELD.hold()  # until "Hel": the waits before it (the SDK's first use included) cannot run out
    events, error = await collect_until_error(HELD.release_after_text(model(server, stream_silence=0.3).stream(HELLO)))
    assert events == [TextDelta("Hel")]
    assert (error.kind, error.message, error.provider) == ("timeout", "The model stream was silent for 0.3 s", "openai")
    await server.wait_for(server.disconnected)  # the held connection was closed by the client


@pytest.mark.anyio
async def test_a_request_over_its_whole_attempt_timeout_is_a_timeout(server):
    server.script("POST", "/v1/responses", Reply(hold_before=True))
    events, error = await collect_until_error(model(server, request_timeout=0.3).stream(HELLO))
    assert (events, error.kind, error.message) == ([], "timeout", "The model request took longer than 0.3 s")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", HELD.backends()[:1])
async def test_cancelling_the_consumer_closes_the_connection(server, anyio_backend):
    server.script("POST", "/v1/responses", responses_stream(["Hel"], terminal=None, end="hold"))
    events = []
    HELD.hold()  # the consumer is cancelled 0.3 s after "Hel", however long the request took
    with anyio.move_on_after(0.3) as scope:
        async for event in HELD.release_after_text(model(server).stream(HELLO)):
            events.append(event)
    assert scope.cancelled_caught and events == [TextDelta("Hel")]
    await server.wait_for(server.disconnected)


@pytest.mark.anyio
async def test_a_dropped_or_unfinished_stream_is_a_connection_error(server):
    server.script("POST", "/v1/responses", responses_stream(["Hel"], terminal=None, end="drop"),
                  responses_stream(["Hel"], terminal=None, end="clean"))
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert (events, error.kind, error.provider) == ([TextDelta("Hel")], "connection", "openai")
    events, error = await collect_until_error(model(server).stream(HELLO))
    assert (events, error.kind) == ([TextDelta("Hel")], "connection")
    assert error.message == "The OpenAI stream ended before the response was complete"


@pytest.mark.anyio
async def test_a_refused_connection_is_a_connection_error(refused_url):
    m = OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=refused_url + "/v1")
    _, error = await collect_until_error(m.stream(HELLO))
    assert (error.kind, error.status_code, error.provider) == ("connection", None, "openai")
    assert error.message.startswith("The connection to OpenAI failed")


# --------------------------------------------------------------------------- Chat Completions


def chat_chunk(delta=None, finish=None, usage=None):
    choices = [] if delta is None and finish is None else [
        {"index": 0, "delta": delta or {}, "finish_reason": finish, "logprobs": None}]
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "llama",
            "choices": choices, "usage": usage}


def chat_stream(*chunks, end="clean", done=True):
    return sse_reply(list(chunks), named=False, done=done, end=end)


def chat_model(server, **options) -> OpenAIModel:
    server.models.append(OpenAIModel("llama", api="chat", api_key="not-needed", base_url=server.url + "/v1",
                                     **options))
    return server.models[-1]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_a_chat_stream_accumulates_tool_call_fragments_and_reads_the_usage_chunk(server, anyio_backend):
    server.script("POST", "/v1/chat/completions", chat_stream(
        chat_chunk({"role": "assistant", "content": ""}),
        chat_chunk({"content": "Let me "}),
        chat_chunk({"content": "check."}),
        chat_chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                    "function": {"name": "get_weather", "arguments": ""}}]}),
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}),
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
        chat_chunk({}, finish="tool_calls"),
        chat_chunk(usage={"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}),
    ))
    request = ModelRequest(
        system="Be brief.",
        messages=(UserEntry("Weather?"), AssistantEntry("", "tool_use", (CALL,)),
                  ToolResultEntry("call_1", "get_weather", "18 C"), UserEntry("Thanks")),
        tools=(WEATHER,), options={"max_tokens": 100, "temperature": 0},
    )
    events = await collect(chat_model(server).stream(request))
    assert events == [
        TextDelta("Let me "),
        TextDelta("check."),
        ToolCallEvent(CALL),
        UsageEvent(Usage(20, 9)),
        FinalMessage("Let me check.", "tool_use", (CALL,), Usage(20, 9)),
    ]
    assert server.requests[0].body == {
        "model": "llama",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 100,
        "temperature": 0,
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                                    "parameters": WEATHER.parameters}}],
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "call_1", "type": "function",
                             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18 C"},
            {"role": "user", "content": "Thanks"},
        ],
    }
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


@pytest.mark.anyio
async def test_chat_stop_reasons_follow_finish_reason_and_tool_calls(server):
    ollama_call = {"index": 0, "id": "call_9", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}
    server.script(
        "POST", "/v1/chat/completions",
        chat_stream(chat_chunk({"content": "Done"}, finish="stop")),
        chat_stream(chat_chunk({"content": "Trunc"}, finish="length")),
        chat_stream(chat_chunk({"tool_calls": [ollama_call]}, finish="stop")),  # Ollama says "stop"
        chat_stream(chat_chunk({}, finish="content_filter")),
    )
    m = chat_model(server)
    assert (await collect(m.stream(HELLO)))[-1] == FinalMessage("Done", "stop")
    assert (await collect(m.stream(HELLO)))[-1] == FinalMessage("Trunc", "length")
    oslo = ToolCall("call_9", "get_weather", '{"city":"Oslo"}')
    assert await collect(m.stream(HELLO)) == [ToolCallEvent(oslo), UsageEvent(Usage()),
                                              FinalMessage("", "tool_use", (oslo,))]
    assert (await collect(m.stream(HELLO)))[-1] == FinalMessage(
        "", "error", error="OpenAI stopped the response: content_filter")


@pytest.mark.anyio
async def test_chat_errors_in_and_around_the_stream_are_classified(server):
    server.script(
        "POST", "/v1/chat/completions",
        json_reply({"error": {"message": "model 'nope' not found", "type": "not_found_error"}}, 404),
        chat_stream(chat_chunk({"content": "Hi"}), {"error": {"message": "backend crashed", "type": "server_error"}}),
        chat_stream(chat_chunk({"content": "Hi"}), done=False),
    )
    m = chat_model(server)
    _, error = await collect_until_error(m.stream(HELLO))
    assert (error.kind, error.status_code) == ("invalid_model", 404)
    events, error = await collect_until_error(m.stream(HELLO))
    assert (events, error.kind, error.message) == ([TextDelta("Hi")], "server", "OpenAI server error: backend crashed")
    events, error = await collect_until_error(m.stream(HELLO))
    assert (events, error.kind) == ([TextDelta("Hi")], "connection")


# --------------------------------------------------------------------------- credentials and construction


def test_a_missing_key_is_refused_at_construction_naming_the_variable():
    with pytest.raises(MissingCredentials, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-test")


def test_the_key_and_base_url_come_from_the_environment(monkeypatch, refused_url):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", refused_url + "/v1")
    m = OpenAIModel("gpt-test", context_window=64_000)
    assert (m.name, m.context_window, m.deferred) == ("openai:gpt-test", 64_000, False)
    assert str(m._client.base_url).rstrip("/") == refused_url + "/v1"
    assert m._client.max_retries == 0


def test_deferred_mode_needs_the_responses_api():
    with pytest.raises(ValueError, match="api=\"responses\""):
        OpenAIModel("llama", api="chat", api_key="not-needed", deferred=True)


# --------------------------------------------------------------------------- background responses


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_a_background_response_is_submitted_with_its_key_and_polled_to_completion(server, anyio_backend):
    server.script("POST", "/v1/responses", json_reply(response_object("queued", usage=None, rid="resp_bg")))
    server.script(
        "GET", "/v1/responses/resp_bg",
        json_reply(response_object("queued", usage=None, rid="resp_bg")),
        json_reply(response_object("in_progress", usage=None, rid="resp_bg")),
        json_reply(response_object("completed", text="Sunny.", calls=[CALL], rid="resp_bg")),
    )
    m = model(server, deferred=True, poll_interval=0.25)
    assert m.deferred
    handle = await m.submit(ModelRequest(system="Be brief.", messages=(UserEntry("Weather?"),), key="gen-7-a2"))
    assert handle == DeferredHandle("resp_bg", poll_after=0.25)
    sent = server.requests[0].body
    assert (sent["background"], sent["metadata"], "stream" in sent) == (True, {"durable_key": "gen-7-a2"}, False)
    results = [await m.fetch(handle.id) for _ in range(3)]
    assert results == [
        StillRunning(poll_after=0.25),
        StillRunning(poll_after=0.25),
        FinalMessage("Sunny.", "tool_use", (CALL,), Usage(12, 7)),
    ]
    assert len(server.requests_to("GET", "/v1/responses/resp_bg")) == 3


@pytest.mark.anyio
async def test_a_failed_or_cancelled_background_response_raises(server):
    server.script(
        "GET", "/v1/responses/resp_bg",
        json_reply(response_object("failed", rid="resp_bg",
                                   error={"code": "rate_limit_exceeded", "message": "Too many"})),
        json_reply(response_object("cancelled", rid="resp_bg")),
        json_reply({"error": {"message": "No response found with id 'resp_bg'.", "type": "invalid_request_error"}},
                   404),
    )
    m = model(server, deferred=True)
    with pytest.raises(ModelError) as failed:
        await m.fetch("resp_bg")
    assert (failed.value.kind, failed.value.message) == ("rate_limit", "OpenAI rate limit reached: Too many")
    with pytest.raises(ModelError) as cancelled:
        await m.fetch("resp_bg")
    assert (cancelled.value.kind, cancelled.value.message) == ("unknown", "The OpenAI background response resp_bg was cancelled")
    with pytest.raises(ModelError) as missing:
        await m.fetch("resp_bg")
    assert (missing.value.kind, missing.value.status_code) == ("invalid_request", 404)


@pytest.mark.anyio
async def test_cancel_reaches_the_provider_and_ignores_ended_or_unknown_jobs(server):
    ended = {"error": {"message": "Cannot cancel a completed response.", "type": "invalid_request_error"}}
    server.script(
        "POST", "/v1/responses/resp_bg/cancel",
        json_reply(response_object("cancelled", rid="resp_bg")),
        json_reply(ended, 400),
        json_reply({"error": {"message": "No response found"}}, 404),
        json_reply({"error": {"message": "Internal error", "type": "server_error"}}, 500),
    )
    m = model(server, deferred=True)
    await m.cancel("resp_bg")
    await m.cancel("resp_bg")
    await m.cancel("resp_bg")
    with pytest.raises(ModelError) as error:
        await m.cancel("resp_bg")
    assert (error.value.kind, error.value.status_code) == ("server", 500)
    assert len(server.requests_to("POST", "/v1/responses/resp_bg/cancel")) == 4
    assert await m.find("gen-7-a2") is None
