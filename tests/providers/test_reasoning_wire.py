"""Reasoning read from each wire format and written back, against the local fake server: Anthropic
thinking and redacted_thinking blocks with their signatures, OpenAI Responses reasoning items
(summaries, encrypted content asked for when nothing is stored), Chat Completions
`reasoning_content` / `reasoning` deltas (text only), and reasoning tokens in usage."""

from __future__ import annotations

import pytest

from durable.models import FinalMessage, ModelRequest, ReasoningDelta, TextDelta, ToolCallEvent, UsageEvent
from durable.models.anthropic import AnthropicModel
from durable.models.openai import OpenAIModel
from durable.models.protocol import check_final
from durable.records import AssistantEntry, ModelSettings, Reasoning, ToolCall, ToolResultEntry, Usage, UserEntry

from .conftest import ANTHROPIC_KEY, HELLO, OPENAI_KEY, collect, json_reply, jsonl_reply
from .reasoning_wire import anthropic_thinking, chat_reasoning, responses_reasoning
from .test_anthropic import batch, result_line

pytestmark = pytest.mark.anyio

CALL = ToolCall("toolu_1", "get_weather", '{"city": "Paris"}')
SIGNED = Reasoning("Paris? Check the weather.", "anthropic", signature="sig-A1")
REDACTED = Reasoning("", "anthropic", redacted="EncryptedOpaque==")
RS = Reasoning("", "openai", id="rs_1", encrypted="gAAAA-enc-1", summary=("Need weather.", "Call the tool."))


def anthropic(server, **options) -> AnthropicModel:
    server.models.append(AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, base_url=server.url, **options))
    return server.models[-1]


def openai(server, api="responses", **options) -> OpenAIModel:
    server.models.append(OpenAIModel("gpt-test", api=api, api_key=OPENAI_KEY, base_url=server.url + "/v1",
                                     **options))
    return server.models[-1]


async def test_anthropic_thinking_streams_as_reasoning_deltas_and_ends_as_signed_and_redacted_blocks(server):
    server.script("POST", "/v1/messages", anthropic_thinking(
        [("think", ["Paris? ", "Check the weather."], "sig-A1"), ("redacted", "EncryptedOpaque==")],
        ["Checking."], (CALL,), stop="tool_use"))
    m = anthropic(server, thinking={"type": "enabled", "budget_tokens": 2048})
    events = await collect(m.stream(HELLO))
    total = Usage(40, 30)
    assert events == [
        UsageEvent(Usage(40, 1)),
        ReasoningDelta("Paris? "),
        ReasoningDelta("Check the weather."),
        TextDelta("Checking."),
        ToolCallEvent(CALL),
        UsageEvent(total),
        FinalMessage("Checking.", "tool_use", (CALL,), total, reasoning=(SIGNED, REDACTED)),
    ]
    assert check_final(events[-1]) is events[-1]
    [sent] = server.requests
    assert sent.body == {"model": "claude-test", "max_tokens": 8192, "stream": True, "system": "Be brief.",
                         "thinking": {"type": "enabled", "budget_tokens": 2048},
                         "messages": [{"role": "user", "content": "Hello"}]}


async def test_anthropic_gets_its_own_complete_blocks_back_first_and_never_a_partial_or_foreign_one(server):
    server.script("POST", "/v1/messages", anthropic_thinking([], ["Sunny."]))
    request = ModelRequest("", (
        UserEntry("Weather?"),
        AssistantEntry("Checking.", "tool_use", (CALL,), reasoning=(
            SIGNED, REDACTED, Reasoning("cut off", "anthropic", partial=True), RS, Reasoning("chat text"))),
        ToolResultEntry("toolu_1", "get_weather", "18 C"),
    ), settings=ModelSettings(thinking_budget=1024))
    await collect(anthropic(server).stream(request))
    assert server.requests[0].body == {
        "model": "claude-test", "max_tokens": 8192, "stream": True,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Paris? Check the weather.", "signature": "sig-A1"},
                {"type": "redacted_thinking", "data": "EncryptedOpaque=="},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False, "content": "18 C"}]},
        ]}


async def test_an_anthropic_batch_result_keeps_its_thinking_blocks(server):
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
               "content": [{"type": "thinking", "thinking": "Paris? Check the weather.", "signature": "sig-A1"},
                           {"type": "redacted_thinking", "data": "EncryptedOpaque=="},
                           {"type": "text", "text": "Sunny."}],
               "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 30, "output_tokens": 8}}
    server.script("GET", "/v1/messages/batches/msgbatch_1",
                  json_reply(batch(server, "ended")), json_reply(batch(server, "ended")))  # the SDK looks twice
    server.script("GET", "/v1/messages/batches/msgbatch_1/results",
                  jsonl_reply([result_line("k", {"type": "succeeded", "message": message})]))
    final = await anthropic(server, deferred=True).fetch("msgbatch_1")
    assert final == FinalMessage("Sunny.", "stop", (), Usage(30, 8), reasoning=(SIGNED, REDACTED))


async def test_a_responses_reasoning_item_streams_its_summary_and_ends_with_its_encrypted_content(server):
    server.script("POST", "/v1/responses", responses_reasoning(
        [("rs_1", [["Need ", "weather."], ["Call the tool."]], "gAAAA-enc-1")], [], (CALL,)))
    m = openai(server, store=False, reasoning={"effort": "high", "summary": "auto"})
    events = await collect(m.stream(HELLO))
    total = Usage(12, 30, reasoning_tokens=20)
    assert events == [
        ReasoningDelta("Need "),
        ReasoningDelta("weather."),
        ReasoningDelta("\n\nCall the tool."),  # a new summary part, apart as the entry shows it
        ToolCallEvent(CALL),
        UsageEvent(total),
        FinalMessage("", "tool_use", (CALL,), total, reasoning=(RS,)),
    ]
    assert RS.shown == "Need weather.\n\nCall the tool."
    assert server.requests[0].body == {
        "model": "gpt-test", "stream": True, "instructions": "Be brief.",
        "input": [{"role": "user", "content": "Hello"}],
        "reasoning": {"effort": "high", "summary": "auto"},
        "store": False, "include": ["reasoning.encrypted_content"]}


async def test_responses_input_carries_reasoning_items_before_what_they_led_to(server):
    server.script("POST", "/v1/responses", responses_reasoning([], ["Sunny."]))
    stored = Reasoning("", "openai", id="rs_2", summary=())  # store=True: no encrypted content
    request = ModelRequest("", (
        UserEntry("Weather?"),
        AssistantEntry("Checking.", "tool_use", (CALL,), reasoning=(RS, stored, SIGNED, Reasoning("x", partial=True))),
        ToolResultEntry("toolu_1", "get_weather", "18 C"),
    ))
    await collect(openai(server, store=True).stream(request))
    body = server.requests[0].body
    assert (body["store"], body["include"]) == (True, [])
    assert body["input"] == [
        {"role": "user", "content": "Weather?"},
        {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-enc-1",
         "summary": [{"type": "summary_text", "text": "Need weather."},
                     {"type": "summary_text", "text": "Call the tool."}]},
        {"type": "reasoning", "id": "rs_2", "summary": []},
        {"role": "assistant", "content": "Checking."},
        {"type": "function_call", "call_id": "toolu_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "toolu_1", "output": "18 C"},
    ]


async def test_chat_reasoning_content_and_reasoning_deltas_are_text_never_sent_back(server):
    server.script("POST", "/v1/chat/completions",
                  chat_reasoning([("reasoning_content", "Hmm, "), ("reasoning", "Paris.")], ["Sunny."]),
                  chat_reasoning([], ["Again."]))
    m = openai(server, api="chat")
    events = await collect(m.stream(HELLO))
    total = Usage(20, 30, reasoning_tokens=18)
    assert events == [ReasoningDelta("Hmm, "), ReasoningDelta("Paris."), TextDelta("Sunny."), UsageEvent(total),
                      FinalMessage("Sunny.", "stop", (), total, reasoning=(Reasoning("Hmm, Paris."),))]
    entry = AssistantEntry("Sunny.", "stop", reasoning=events[-1].reasoning)
    await collect(m.stream(ModelRequest("", (UserEntry("Hello"), entry, UserEntry("And?")))))
    assert server.requests[1].body["messages"] == [
        {"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Sunny."},
        {"role": "user", "content": "And?"}]


async def test_a_final_message_whose_reasoning_is_not_reasoning_blocks_is_malformed():
    from durable.models.protocol import ModelError

    with pytest.raises(ModelError, match="its reasoning is not a tuple of Reasoning blocks"):
        check_final(FinalMessage("x", "stop", reasoning=("thinking",)))  # type: ignore[arg-type]


def test_background_responses_cannot_go_unstored():
    from durable.errors import BackgroundJobsUnsupported

    with pytest.raises(BackgroundJobsUnsupported, match="deferred=True needs store=True"):
        OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url="http://127.0.0.1:9/v1", deferred=True, store=False)
