"""Structured output and usage by kind at the wire, against the local fake servers: OpenAI asks for
the schema as a `json_schema` format (Responses `text.format`, Chat `response_format`), Anthropic
as a `final_result` tool the model must call, whose input comes back as the answer's text; the
reasoning and cache token counts are read from each provider's usage."""

from __future__ import annotations

import json

import attrs
import pytest

from durable.models.anthropic import AnthropicModel, batch_custom_id
from durable.models.openai import OpenAIModel
from durable.models.protocol import FinalMessage, ModelRequest, TextDelta, ToolCallEvent, UsageEvent
from durable.records import ToolCall, Usage, UserEntry

from .conftest import ANTHROPIC_KEY, OPENAI_KEY, WEATHER, collect, json_reply, jsonl_reply, sse_reply
from .test_anthropic import batch, result_line
from .test_openai import chat_chunk, chat_stream, response_object

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
          "required": ["city", "celsius"], "additionalProperties": False}
ASK = ModelRequest(system="Be brief.", messages=(UserEntry("Weather in Paris?"),), key="g1-s1-a1", output=SCHEMA)
ANSWER = '{"city": "Paris", "celsius": 18}'


async def test_openai_responses_ask_for_a_json_schema_format_and_report_reasoning_and_cached_tokens(server):
    usage = {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150,
             "input_tokens_details": {"cached_tokens": 100}, "output_tokens_details": {"reasoning_tokens": 12}}
    done = {**response_object(text=ANSWER), "usage": usage}
    events = [{"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_1", "output_index": 0,
               "content_index": 0, "delta": ANSWER, "logprobs": []},
              {"type": "response.completed", "sequence_number": 2, "response": done}]
    server.script("POST", "/v1/responses", sse_reply(events))
    m = OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=server.url + "/v1")
    server.models.append(m)
    got = await collect(m.stream(ASK))
    expected = Usage(120, 30, reasoning_tokens=12, cache_read_tokens=100)
    assert got == [TextDelta(ANSWER), UsageEvent(expected), FinalMessage(ANSWER, "stop", (), expected)]
    assert server.requests[0].body == {
        "model": "gpt-test", "stream": True, "instructions": "Be brief.",
        "input": [{"role": "user", "content": "Weather in Paris?"}],
        "text": {"format": {"type": "json_schema", "name": "final_result", "schema": SCHEMA, "strict": False}},
    }


async def test_openai_chat_asks_for_a_json_schema_response_format_and_reports_the_usage_details(server):
    server.script("POST", "/v1/chat/completions", chat_stream(
        chat_chunk({"role": "assistant", "content": ANSWER}),
        chat_chunk({}, finish="stop"),
        chat_chunk(usage={"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59,
                          "prompt_tokens_details": {"cached_tokens": 32},
                          "completion_tokens_details": {"reasoning_tokens": 4}}),
    ))
    m = OpenAIModel("llama", api="chat", api_key="not-needed", base_url=server.url + "/v1")
    server.models.append(m)
    got = await collect(m.stream(ASK))
    assert got[-1] == FinalMessage(ANSWER, "stop", (), Usage(50, 9, reasoning_tokens=4, cache_read_tokens=32))
    assert server.requests[0].body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "final_result", "schema": SCHEMA, "strict": False}}


def anthropic_events(blocks, stop="tool_use", usage=None):
    """A message whose content `blocks` are ("text", text) or ("tool", id, name, json pieces)."""
    start_usage = usage or {"input_tokens": 40, "output_tokens": 1}
    events = [{"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": start_usage}}]
    for i, block in enumerate(blocks):
        if block[0] == "text":
            events += [{"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                       {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block[1]}}]
        else:
            _, bid, name, pieces = block
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "tool_use", "id": bid, "name": name, "input": {}}})
            events += [{"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": p}} for p in pieces]
        events.append({"type": "content_block_stop", "index": i})
    events += [{"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 12}},
               {"type": "message_stop"}]
    return sse_reply(events)


def anthropic(server, **options) -> AnthropicModel:
    server.models.append(AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, base_url=server.url, **options))
    return server.models[-1]


async def test_anthropic_forces_a_final_result_tool_and_its_input_streams_back_as_the_answer(server):
    usage = {"input_tokens": 10, "cache_read_input_tokens": 25, "cache_creation_input_tokens": 5, "output_tokens": 1}
    server.script("POST", "/v1/messages", anthropic_events(
        [("text", "Here it is."), ("tool", "toolu_1", "final_result", ['{"city": "Paris", ', '"celsius": 18}'])],
        usage=usage))
    got = await collect(anthropic(server).stream(ASK))
    total = Usage(40, 12, cache_read_tokens=25, cache_write_tokens=5)
    assert got == [UsageEvent(Usage(40, 1, cache_read_tokens=25, cache_write_tokens=5)), TextDelta("Here it is."),
                   TextDelta('{"city": "Paris", '), TextDelta('"celsius": 18}'), UsageEvent(total),
                   FinalMessage(ANSWER, "stop", (), total)]  # the text before the tool is not the answer
    assert server.requests[0].body == {
        "model": "claude-test", "max_tokens": 8192, "stream": True, "system": "Be brief.",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"name": "final_result", "description": "Give the final answer, matching this schema.",
                   "input_schema": SCHEMA}],
        "tool_choice": {"type": "tool", "name": "final_result"},
    }


async def test_anthropic_with_tools_may_call_them_first_and_a_final_result_beside_other_calls_wins(server):
    call = ToolCall("toolu_1", "get_weather", '{"city": "Paris"}')
    server.script("POST", "/v1/messages",
                  anthropic_events([("tool", "toolu_1", "get_weather", ['{"city": "Paris"}'])]),
                  anthropic_events([("tool", "toolu_2", "get_weather", ['{"city": "Oslo"}']),
                                    ("tool", "toolu_3", "final_result", [ANSWER])]))
    m = anthropic(server)
    request = ModelRequest(system="", messages=ASK.messages, tools=(WEATHER,), output=SCHEMA)
    first = await collect(m.stream(request))
    assert first[-1] == FinalMessage("", "tool_use", (call,), Usage(40, 12)) and ToolCallEvent(call) in first
    second = await collect(m.stream(request))
    assert second[-1] == FinalMessage(ANSWER, "stop", (), Usage(40, 12))
    body = server.requests[0].body
    assert [t["name"] for t in body["tools"]] == ["get_weather", "final_result"]
    assert body["tool_choice"] == {"type": "any"}


async def test_an_anthropic_batch_answer_through_the_final_result_tool_is_the_answer(server):
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
               "content": [{"type": "tool_use", "id": "toolu_1", "name": "final_result",
                            "input": {"city": "Paris", "celsius": 18}}],
               "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 30, "output_tokens": 8}}
    server.script("POST", "/v1/messages/batches", json_reply(batch(server)))
    server.script("GET", "/v1/messages/batches/msgbatch_1", json_reply(batch(server, "ended")),
                  json_reply(batch(server, "ended")))  # the SDK reads the batch again for its results' URL
    server.script("GET", "/v1/messages/batches/msgbatch_1/results",
                  jsonl_reply([result_line(batch_custom_id(ASK.key), {"type": "succeeded", "message": message})]))
    m = anthropic(server, deferred=True)
    handle = await m.submit(ASK)
    [sent] = server.requests[0].body["requests"]
    assert sent["params"]["tool_choice"] == {"type": "tool", "name": "final_result"}
    assert await m.fetch(handle.id) == FinalMessage(json.dumps({"city": "Paris", "celsius": 18}), "stop", (),
                                                    Usage(30, 8))


@attrs.frozen
class Forecast:
    city: str
    celsius: int


PATHS = {"responses": "/v1/responses", "chat": "/v1/chat/completions", "anthropic": "/v1/messages"}


@pytest.mark.parametrize("api", ["responses", "chat", "anthropic"])
async def test_through_the_harness_an_answer_that_does_not_match_goes_back_and_the_next_is_a_t(server, tmp_path, api):
    from .test_harness_integration import Host, answer, model

    if api == "anthropic":
        first = anthropic_events([("tool", "toolu_1", "final_result", ['{"city": "Paris"}'])])
        second = anthropic_events([("tool", "toolu_2", "final_result", [ANSWER])])
    else:
        first, second = answer(api, ['{"city": "Paris"}']), answer(api, [ANSWER])
    server.script("POST", PATHS[api], first, second)
    host = Host(tmp_path / "s.sqlite")
    async with host.open(model(server, api)) as h:
        sub = await h.root.submit("Weather in Paris?", output=Forecast)
        assert await sub.answer(Forecast) == Forecast("Paris", 18)
    assert await host.transcript() == ["user", "assistant:stop", "user", "assistant:stop"]
    bodies = [q.body for q in server.requests]
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
              "required": ["city", "celsius"], "additionalProperties": False}
    if api == "responses":
        assert [b["text"]["format"]["schema"] for b in bodies] == [schema, schema]
        assert bodies[1]["input"][1:] == [
            {"role": "assistant", "content": '{"city": "Paris"}'},
            {"role": "user", "content": "Your answer does not match the required JSON schema: $: 'celsius' is a "
                                        "required property (keyword: required). Answer again with only the JSON."}]
    elif api == "chat":
        assert [b["response_format"]["json_schema"]["schema"] for b in bodies] == [schema, schema]
    else:
        assert [b["tools"][-1]["input_schema"] for b in bodies] == [schema, schema]
        assert bodies[1]["messages"][1] == {"role": "assistant", "content": [{"type": "text",
                                                                              "text": '{"city": "Paris"}'}]}
