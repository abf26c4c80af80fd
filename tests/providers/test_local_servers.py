"""OpenAIModel(api="chat", base_url=...) against a fake 127.0.0.1 server speaking the dialects of the
local OpenAI-compatible servers (Ollama, llama.cpp, vLLM, LM Studio): each quirk listed in
durable.models._compat, one test each, with the exact events, tool calls or error."""

from __future__ import annotations

import json

import pytest

from durable.errors import BackgroundJobsUnsupported, DurableError
from durable.models.openai import OpenAIModel
from durable.models.protocol import (
    FinalMessage,
    ModelError,
    ModelRequest,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
    check_final,
)
from durable.records import ToolCall, Usage, UserEntry

from .conftest import WEATHER, Reply, collect, collect_until_error, json_reply, sse_reply

ASK = ModelRequest(system="Be brief.", messages=(UserEntry("Weather in Paris and Oslo?"),), tools=(WEATHER,),
                   key="gen-1-a1")
PARIS = ToolCall("call_a", "get_weather", json.dumps({"city": "Paris"}))
OSLO = ToolCall("call_b", "get_weather", json.dumps({"city": "Oslo"}))
CHAT = "/v1/chat/completions"


def chunk(delta=None, finish=None, usage=None, **extra):
    choices = [] if delta is None and finish is None else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local",
            "choices": choices, **({"usage": usage} if usage is not None else {}), **extra}


def stream(*chunks, done=True):
    return sse_reply(list(chunks), named=False, done=done)


def local(server, **options) -> OpenAIModel:
    server.models.append(OpenAIModel("local", api="chat", api_key="not-needed", base_url=server.url + "/v1",
                                     **options))
    return server.models[-1]


def calls_chunk(*parts, finish=None):
    return chunk({"tool_calls": list(parts)}, finish=finish)


def call(index=None, id=None, name=None, arguments=None):
    part = {} if index is None else {"index": index}
    if id is not None:
        part.update(id=id, type="function")
    function = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    return {**part, "function": function}


# --------------------------------------------------------------------------- (a) stream_options


@pytest.mark.anyio
@pytest.mark.parametrize("rejection", [
    json_reply({"error": {"message": "Unrecognized request argument supplied: stream_options",
                          "type": "invalid_request_error"}}, 400),
    json_reply({"detail": [{"type": "extra_forbidden", "loc": ["body", "stream_options"],
                            "msg": "Extra inputs are not permitted"}]}, 422),
], ids=["400-openai-style", "422-fastapi-validation"])
async def test_a_server_rejecting_stream_options_gets_the_request_once_without_it_and_never_again(
    server, rejection
):
    server.script("POST", CHAT, rejection, stream(chunk({"content": "Hi"}, finish="stop")),
                  stream(chunk({"content": "Again"}, finish="stop")))
    m = local(server)
    assert await collect(m.stream(ASK)) == [TextDelta("Hi"), UsageEvent(Usage()), FinalMessage("Hi", "stop")]
    assert await collect(m.stream(ASK)) == [TextDelta("Again"), UsageEvent(Usage()), FinalMessage("Again", "stop")]
    sent = [r.body for r in server.requests_to("POST", CHAT)]
    assert [("stream_options" in body) for body in sent] == [True, False, False]
    assert sent[0] == {**sent[1], "stream_options": {"include_usage": True}}
    assert m.stream_usage is False


@pytest.mark.anyio
async def test_another_400_is_not_retried_and_stream_usage_false_never_sends_stream_options(server):
    server.script("POST", CHAT,
                  json_reply({"error": {"message": "tools are not supported by this model"}}, 400),
                  stream(chunk({"content": "Hi"}, finish="stop")))
    m = local(server)
    _, error = await collect_until_error(m.stream(ASK))
    assert (error.kind, error.status_code) == ("invalid_request", 400)
    assert len(server.requests) == 1 and m.stream_usage is True
    await collect(local(server, stream_usage=False).stream(ASK))
    assert "stream_options" not in server.requests[1].body


# --------------------------------------------------------------------------- (b) usage


@pytest.mark.anyio
@pytest.mark.parametrize("chunks, usage", [
    ([chunk({"content": "Hi"}), chunk({}, finish="stop")], Usage()),  # no usage at all
    ([chunk({"content": "Hi"}),  # llama.cpp / Ollama: in the chunk with the finish reason
      chunk({}, finish="stop", usage={"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13})],
     Usage(11, 2)),
    ([chunk({"content": "Hi"}, usage=None), chunk({}, finish="stop"),  # OpenAI / vLLM: a last chunk, no choices
      chunk(usage={"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13})], Usage(11, 2)),
    ([chunk({"content": "Hi"}), chunk({}, finish="stop"),  # fields missing or null
      chunk(usage={"prompt_tokens": None, "completion_tokens": 5})], Usage(0, 5)),
], ids=["missing", "in-the-finish-chunk", "last-chunk-empty-choices", "null-fields"])
async def test_usage_missing_or_anywhere_is_read_without_a_crash(server, chunks, usage):
    server.script("POST", CHAT, stream(*chunks))
    assert await collect(local(server).stream(ASK)) == [
        TextDelta("Hi"), UsageEvent(usage), FinalMessage("Hi", "stop", (), usage)]


# --------------------------------------------------------------------------- (c) tool-call fragments


DIALECTS = {
    "openai-split": [
        calls_chunk(call(0, "call_a", "get_weather", "")),
        calls_chunk(call(0, arguments='{"city": ')),
        calls_chunk(call(0, arguments='"Paris"}')),
        calls_chunk(call(1, "call_b", "get_weather", '{"city"')),
        calls_chunk(call(1, arguments=': "Oslo"}')),
    ],
    "whole-calls-in-one-chunk": [
        calls_chunk(call(0, "call_a", "get_weather", '{"city": "Paris"}'),
                    call(1, "call_b", "get_weather", '{"city": "Oslo"}')),
    ],
    "no-index-id-only-first": [
        calls_chunk(call(None, "call_a", "get_weather", '{"city": ')),
        calls_chunk(call(None, arguments='"Paris"}')),
        calls_chunk(call(None, "call_b", "get_weather", "")),
        calls_chunk(call(None, arguments='{"city": "Oslo"}')),
    ],
    "index-0-repeated": [
        calls_chunk(call(0, "call_a", "get_weather", '{"city": "Paris"}')),
        calls_chunk(call(0, "call_b", "get_weather", '{"city": ')),
        calls_chunk(call(0, arguments='"Oslo"}')),
    ],
    "arguments-as-objects": [
        calls_chunk(call(0, "call_a", "get_weather", {"city": "Paris"})),
        calls_chunk(call(1, "call_b", "get_weather", {"city": "Oslo"})),
    ],
}


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", list(DIALECTS))
async def test_every_tool_call_dialect_gives_the_same_tool_calls(server, dialect):
    server.script("POST", CHAT, stream(*DIALECTS[dialect], chunk({}, finish="tool_calls")))
    events = await collect(local(server).stream(ASK))
    assert events == [ToolCallEvent(PARIS), ToolCallEvent(OSLO), UsageEvent(Usage()),
                      FinalMessage("", "tool_use", (PARIS, OSLO))]
    check_final(events[-1])


@pytest.mark.anyio
async def test_calls_without_ids_get_distinct_ones_and_empty_arguments_become_an_object(server):
    server.script("POST", CHAT, stream(
        calls_chunk(call(0, None, "get_weather", '{"city": "Paris"}'), call(1, None, "get_weather")),
        chunk({}, finish="tool_calls")))
    final = (await collect(local(server).stream(ASK)))[-1]
    assert final == FinalMessage("", "tool_use", (ToolCall("call_0", "get_weather", '{"city": "Paris"}'),
                                                  ToolCall("call_1", "get_weather", "{}")))
    check_final(final)


# --------------------------------------------------------------------------- (d) finish reasons


WHOLE = calls_chunk(call(0, "call_a", "get_weather", '{"city": "Paris"}'))

FINISHES = [
    ("eos", [chunk({"content": "Hi"}, finish="eos")], FinalMessage("Hi", "stop"), False),
    ("eos_token", [chunk({"content": "Hi"}, finish="eos_token")], FinalMessage("Hi", "stop"), False),
    ("tool_calls-without-calls-with-text", [chunk({"content": "Hi"}, finish="tool_calls")],
     FinalMessage("Hi", "stop"), False),
    ("tool_calls-without-anything", [chunk({}, finish="tool_calls")],
     FinalMessage("", "error",
                  error="OpenAI stopped the response: finish_reason 'tool_calls' without any tool call or text"),
     False),
    ("none-then-done", [chunk({"content": "Hi"})], FinalMessage("Hi", "stop"), False),
    ("none-then-done-with-a-call", [WHOLE], FinalMessage("", "tool_use", (PARIS,)), True),
    ("stop-with-a-call", [WHOLE, chunk({}, finish="stop")], FinalMessage("", "tool_use", (PARIS,)), True),
    ("function_call", [WHOLE, chunk({}, finish="function_call")], FinalMessage("", "tool_use", (PARIS,)), True),
    ("length-with-a-cut-call", [calls_chunk(call(0, "call_a", "get_weather", '{"ci')), chunk({}, finish="length")],
     FinalMessage("", "length"), False),
    ("abort", [chunk({"content": "Hi"}, finish="abort")],
     FinalMessage("Hi", "error", error="OpenAI stopped the response: abort"), False),
]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
@pytest.mark.parametrize("chunks, final, has_call", [f[1:] for f in FINISHES], ids=[f[0] for f in FINISHES])
async def test_other_finish_reasons_map_onto_the_model_stop_reasons(server, chunks, final, has_call, anyio_backend):
    server.script("POST", CHAT, stream(*chunks))
    events = await collect(local(server).stream(ASK))
    assert events[-1] == final
    assert [e for e in events if isinstance(e, ToolCallEvent)] == ([ToolCallEvent(PARIS)] if has_call else [])
    assert check_final(events[-1]) == final


@pytest.mark.anyio
async def test_no_finish_reason_and_no_done_is_still_a_cut_stream(server):
    server.script("POST", CHAT, stream(chunk({"content": "Hi"}), done=False))
    events, error = await collect_until_error(local(server).stream(ASK))
    assert (events, error.kind, error.message) == (
        [TextDelta("Hi")], "connection", "The OpenAI stream ended before the response was complete")


# --------------------------------------------------------------------------- (e) no background jobs


def test_deferred_chat_is_refused_at_construction_naming_the_base_url():
    with pytest.raises(BackgroundJobsUnsupported) as refused:
        OpenAIModel("llama3", api="chat", api_key="not-needed", base_url="http://127.0.0.1:11434/v1", deferred=True)
    assert isinstance(refused.value, DurableError)
    assert str(refused.value) == (
        'Deferred OpenAI models need api="responses" (background responses); Chat Completions at '
        "http://127.0.0.1:11434/v1 has no background jobs: use deferred=False")


@pytest.mark.anyio
@pytest.mark.parametrize("reply, status", [
    (Reply(404, {"content-type": "text/plain"}, b"404 page not found"), 404),  # Ollama before /v1/responses
    (json_reply({"detail": "Method Not Allowed"}, 405), 405),
    (json_reply({"error": {"message": "Not implemented", "type": "not_implemented_error"}}, 501), 501),
    (json_reply({"error": {"message": "background mode is not supported", "type": "invalid_request_error",
                           "param": "background"}}, 400), 400),
], ids=["404", "405", "501", "400-naming-background"])
async def test_a_server_without_the_responses_api_fails_submit_clearly(server, reply, status):
    server.script("POST", "/v1/responses", reply)
    m = OpenAIModel("local", api_key="not-needed", base_url=server.url + "/v1", deferred=True)
    server.models.append(m)
    with pytest.raises(ModelError) as failed:
        await m.submit(ASK)
    assert (failed.value.kind, failed.value.status_code, failed.value.retryable) == ("invalid_request", status, False)
    assert failed.value.message == (f"The server at {server.url}/v1 has no background responses (HTTP {status} for "
                                    "POST /responses): use deferred=False with it")


@pytest.mark.anyio
async def test_a_server_that_ignores_background_and_answers_at_once_fails_submit_clearly(server):
    answered = {"id": "resp_1", "object": "response", "created_at": 1, "model": "local", "status": "completed",
                "background": False, "output": [], "tools": [], "parallel_tool_calls": True, "tool_choice": "auto"}
    server.script("POST", "/v1/responses", json_reply(answered))
    m = OpenAIModel("local", api_key="not-needed", base_url=server.url + "/v1", deferred=True)
    server.models.append(m)
    with pytest.raises(ModelError) as failed:
        await m.submit(ASK)
    assert (failed.value.kind, failed.value.retryable) == ("invalid_request", False)
    assert failed.value.message == (
        f"The server at {server.url}/v1 does not run background responses (it answered a background request with "
        "status 'completed' instead of queueing it): use deferred=False with it")
    assert server.requests[0].body["background"] is True
