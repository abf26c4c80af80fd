"""A reasoning model through the real harness, against the local server in each wire format: the
reasoning streams into live (`live.generation.message.reasoning`), is stored on the assistant
entry with what the provider needs, and goes back exactly as the provider requires within a tool
loop and across turns; a reasoning stream cut off is kept as a partial block, never sent back."""

from __future__ import annotations

import threading
from typing import Any

import attrs
import pytest

import durable
from durable import records as r

from .reasoning_wire import anthropic_thinking, chat_reasoning, responses_reasoning
from .test_harness_integration import NAME, PATH, WEATHER_SCHEMA, Host, make_settings, model, until_live, used

pytestmark = pytest.mark.anyio

APIS = ["anthropic", "responses", "chat"]
CALL = r.ToolCall("call_1", "get_weather", '{"city": "Paris"}')
USAGE = {"anthropic": r.Usage(40, 30), "responses": r.Usage(12, 30, reasoning_tokens=20),
         "chat": r.Usage(20, 30, reasoning_tokens=18)}
# The blocks each format's first and second answer end with.
FIRST = {
    "anthropic": (r.Reasoning("Paris? Check the weather.", "anthropic", signature="sig-1"),
                  r.Reasoning("", "anthropic", redacted="Opaque==")),
    "responses": (r.Reasoning("", "openai", id="rs_1", encrypted="enc-1", summary=("Paris? Check the weather.",)),),
    "chat": (r.Reasoning("Paris? Check the weather."),),
}
SECOND = {
    "anthropic": (r.Reasoning("It is sunny.", "anthropic", signature="sig-2"),),
    "responses": (r.Reasoning("", "openai", id="rs_2", encrypted="enc-2", summary=("It is sunny.",)),),
    "chat": (r.Reasoning("It is sunny."),),
}


def thinking_answer(api: str, first: bool, deltas: list[str], calls: tuple[r.ToolCall, ...] = ()) -> Any:
    """The first (`Paris? Check the weather.`) or second (`It is sunny.`) reasoning, then the answer."""
    if api == "anthropic":
        thoughts = ([("think", ["Paris? ", "Check the weather."], "sig-1"), ("redacted", "Opaque==")] if first
                    else [("think", ["It is sunny."], "sig-2")])
        return anthropic_thinking(thoughts, deltas, calls, stop="tool_use" if calls else "end_turn")
    if api == "responses":
        return responses_reasoning([("rs_1", [["Paris? ", "Check the weather."]], "enc-1")] if first
                                   else [("rs_2", [["It is sunny."]], "enc-2")], deltas, calls)
    pieces = [("reasoning_content", "Paris? "), ("reasoning_content", "Check the weather.")] if first else [
        ("reasoning", "It is sunny.")]
    return chat_reasoning(pieces, deltas, calls)


def wire_assistant(api: str, blocks: tuple[r.Reasoning, ...], text: str, calls: tuple[r.ToolCall, ...]) -> list:
    """An assistant entry as `api` must get it back, its reasoning blocks unchanged and first."""
    if api == "anthropic":
        content: list[dict[str, Any]] = [
            {"type": "redacted_thinking", "data": b.redacted} if b.redacted is not None
            else {"type": "thinking", "thinking": b.text, "signature": b.signature} for b in blocks]
        content += [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": {"city": "Paris"}} for c in calls]
        return [{"role": "assistant", "content": content}]
    if api == "responses":
        items: list[dict[str, Any]] = [
            {"type": "reasoning", "id": b.id, "encrypted_content": b.encrypted,
             "summary": [{"type": "summary_text", "text": s} for s in b.summary]} for b in blocks]
        items += [{"role": "assistant", "content": text}] if text else []
        items += [{"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
        return items
    message: dict[str, Any] = {"role": "assistant", "content": text or None}  # reasoning never goes back
    if calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}} for c in calls]
    return [message]


def wire_result(api: str) -> list:
    if api == "anthropic":
        return [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "is_error": False, "content": "18 C"}]}]
    if api == "responses":
        return [{"type": "function_call_output", "call_id": "call_1", "output": "18 C"}]
    return [{"role": "tool", "tool_call_id": "call_1", "content": "18 C"}]


def conversation(api: str, body: dict) -> list:
    if api == "responses":
        return body["input"]
    return body["messages"][1:] if api == "chat" else body["messages"]  # chat: after the system message


# Prompt caching off: these tests are about the reasoning sent back (breakpoints have tests of their own).
NO_CACHE = attrs.evolve(make_settings(), model_settings=durable.ModelSettings(prompt_cache=False))


def reasoning_model(server: Any, api: str) -> Any:
    if api == "anthropic":
        return model(server, api, thinking={"type": "enabled", "budget_tokens": 2048})
    if api == "responses":
        return model(server, api, store=False, reasoning={"effort": "medium", "summary": "auto"})
    return model(server, api)


@pytest.fixture
def host(tmp_path: Any) -> Host:
    return Host(tmp_path / "session.sqlite")


@pytest.mark.parametrize("api", APIS)
async def test_a_tool_loop_on_a_reasoning_model_sends_its_reasoning_back_unchanged_within_and_across_turns(
        server, host, api):
    async def get_weather(args: Any, api_: Any, ctx: Any) -> str:
        return "18 C"

    weather = durable.define_tool("get_weather", "The weather in a city", WEATHER_SCHEMA, execute=get_weather)
    server.script("POST", PATH[api], thinking_answer(api, True, [], (CALL,)),
                  thinking_answer(api, False, ["Sunny, 18 C."]), thinking_answer(api, False, ["Still sunny."]))
    async with host.open(reasoning_model(server, api), tools=[weather], settings=NO_CACHE) as h:
        assert await (await h.root.submit("Weather in Paris?")).wait() == r.Answered("Sunny, 18 C.", 4)
        assert await (await h.root.submit("And now?")).wait() == r.Answered("Still sunny.", 6)
        assert h.root.live().usage == attrs.evolve(used(api, 3, USAGE[api], USAGE[api], USAGE[api]), tool_calls=1)
    entries = await host.entries()
    assert entries[1:4] == [
        r.AssistantEntry("", "tool_use", (CALL,), USAGE[api], None, 1, reasoning=FIRST[api], model=NAME[api]),
        r.ToolResultEntry("call_1", "get_weather", "18 C"),
        r.AssistantEntry("Sunny, 18 C.", "stop", (), USAGE[api], None, 1, reasoning=SECOND[api],
                         model=NAME[api]),
    ]
    first, second, third = (req.body for req in server.requests_to("POST", PATH[api]))
    question = {"role": "user", "content": "Weather in Paris?"}
    assert conversation(api, first) == [question]
    in_loop = [question, *wire_assistant(api, FIRST[api], "", (CALL,)), *wire_result(api)]
    assert conversation(api, second) == in_loop
    assert conversation(api, third) == [*in_loop, *wire_assistant(api, SECOND[api], "Sunny, 18 C.", ()),
                                        {"role": "user", "content": "And now?"}]
    if api == "anthropic":
        assert second["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    if api == "responses":
        assert (second["store"], second["include"]) == (False, ["reasoning.encrypted_content"])


def paused(reply: Any, after: bytes) -> Any:
    """`reply`, held right after its chunk holding `after` until `reply.resume` is set."""
    reply.pause_after = next(i for i, chunk in enumerate(reply.chunks) if after in chunk) + 1
    reply.resume = threading.Event()
    return reply


LIVE_USAGE = {"anthropic": r.Usage(40, 1), "responses": r.Usage(), "chat": r.Usage()}  # before the end


@pytest.mark.parametrize("api", APIS)
async def test_live_shows_the_reasoning_as_it_streams_then_the_text_after_it(server, host, api):
    reply = paused(thinking_answer(api, True, ["Sunny."]), b'"Paris? "')
    server.script("POST", PATH[api], reply)
    async with host.open(reasoning_model(server, api), settings=NO_CACHE) as h:
        sub = await h.root.submit("Weather in Paris?")
        live = await until_live(h, lambda live: live.generation is not None and live.generation.message.reasoning)
        assert live.generation == r.GenerationLive(1, r.PartialMessage("", (), LIVE_USAGE[api], "Paris? "))
        assert live.run == r.Run(1, (sub.id,))
        reply.resume.set()
        live = await until_live(h, lambda live: live.generation is not None and live.generation.message.text)
        assert live.generation == r.GenerationLive(
            1, r.PartialMessage("Sunny.", (), LIVE_USAGE[api], "Paris? Check the weather."))
        assert await sub.wait() == r.Answered("Sunny.", 2)
        assert h.root.live() == r.Live(usage=used(api, 1, USAGE[api]))  # the partial is gone with the answer
    assert (await host.entries())[1].reasoning == FIRST[api]


def cut_off(api: str) -> Any:
    """A stream that drops the connection in the middle of its reasoning."""
    if api == "anthropic":
        return anthropic_thinking([("think", ["Paris? ", "Check"], None)], [], stop=None, end="drop")
    if api == "responses":
        return responses_reasoning([("rs_1", [["Paris? ", "Check"]], "enc-1")], [], complete=False, end="drop")
    return chat_reasoning([("reasoning_content", "Paris? "), ("reasoning_content", "Check")], [], end="drop")


@pytest.mark.parametrize("api", APIS)
async def test_a_reasoning_stream_cut_off_is_kept_as_a_partial_block_and_never_sent_back(server, host, api):
    server.script("POST", PATH[api], cut_off(api), thinking_answer(api, False, ["Sunny."]))
    async with host.open(reasoning_model(server, api), settings=NO_CACHE) as h:
        sub = await h.root.submit("Weather in Paris?")
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Sunny.", 3)
    kept = (await host.entries())[1]
    assert isinstance(kept, r.AssistantEntry)
    assert (kept.text, kept.stop_reason, kept.reasoning) == ("", "error", (r.Reasoning("Paris? Check", partial=True),))
    retried = server.requests_to("POST", PATH[api])[1].body
    assert conversation(api, retried) == [{"role": "user", "content": "Weather in Paris?"}]
    assert b"Paris? Check" not in repr(retried).encode()
