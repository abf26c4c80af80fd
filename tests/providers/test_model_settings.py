"""`durable.ModelSettings` on the wire: every field in the exact request body of OpenAI's Responses
API, Chat Completions and Anthropic's Messages API (against the local fake server), the tool
choices, what each provider cannot honour (exact messages), and prompt caching: Anthropic's
cache breakpoints, OpenAI's `prompt_cache_key`, cache reads and writes in usage."""

from __future__ import annotations

import pytest

from durable import InvalidModelSettings, ModelSettings, UnsupportedModelSetting
from durable.models.protocol import FinalMessage, ModelRequest, check_settings
from durable.models.settings_wire import openai_fields
from durable.records import AssistantEntry, ToolCall, ToolResultEntry, Usage, UserEntry

from .cache_server import AnthropicCache, OpenAICache
from .conftest import WEATHER, collect
from .test_anthropic import message_events, model as anthropic_model
from .test_openai import chat_chunk, chat_model, chat_stream, model as openai_model, responses_stream

pytestmark = pytest.mark.anyio

EPHEMERAL = {"type": "ephemeral"}
USER = {"role": "user", "content": "Hello"}
RESPONSES_WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city",
                     "parameters": WEATHER.parameters, "strict": False}
CHAT_WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                                 "parameters": WEATHER.parameters}}
ANTHROPIC_WEATHER = {"name": "get_weather", "description": "The weather in a city", "input_schema": WEATHER.parameters}


def asking(settings: ModelSettings, *, tools=(WEATHER,), cache_key: str = "", **kw) -> ModelRequest:
    return ModelRequest("Be brief.", (UserEntry("Hello"),), tools, settings=settings, cache_key=cache_key, **kw)


def chat_answer():
    return chat_stream(chat_chunk({"role": "assistant", "content": "Hi"}), chat_chunk({}, finish="stop"))


# --------------------------------------------------------------------------- every field, per provider


async def test_every_setting_the_responses_api_takes_is_in_the_request_body(server):
    server.script("POST", "/v1/responses", responses_stream(["Hi"]))
    settings = ModelSettings(temperature=0.2, top_p=0.9, max_tokens=300, reasoning_effort="high",
                             tool_choice="get_weather", parallel_tool_calls=False, service_tier="flex",
                             prompt_cache=True, extra={"user": "u-1", "truncation": "auto"}, model="gpt-other")
    await collect(openai_model(server).stream(asking(settings, cache_key="ck")))
    assert server.requests[0].body == {
        "model": "gpt-other", "input": [USER], "instructions": "Be brief.", "tools": [RESPONSES_WEATHER],
        "max_output_tokens": 300, "temperature": 0.2, "top_p": 0.9, "reasoning": {"effort": "high"},
        "service_tier": "flex", "tool_choice": {"type": "function", "name": "get_weather"},
        "parallel_tool_calls": False, "prompt_cache_key": "ck", "stream": True, "user": "u-1", "truncation": "auto"}


async def test_every_setting_chat_completions_takes_is_in_the_request_body(server):
    server.script("POST", "/v1/chat/completions", chat_answer())
    settings = ModelSettings(temperature=0.2, top_p=0.9, max_tokens=300, stop=["END", "STOP"], seed=7,
                             reasoning_effort="low", tool_choice="get_weather", parallel_tool_calls=True,
                             service_tier="priority", prompt_cache=True, extra={"user": "u-1"}, model="llama-other")
    await collect(chat_model(server).stream(asking(settings, cache_key="ck")))
    assert server.requests[0].body == {
        "model": "llama-other", "messages": [{"role": "system", "content": "Be brief."}, USER], "stream": True,
        "stream_options": {"include_usage": True}, "tools": [CHAT_WEATHER], "max_tokens": 300, "temperature": 0.2,
        "top_p": 0.9, "stop": ["END", "STOP"], "seed": 7, "reasoning_effort": "low", "service_tier": "priority",
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}}, "parallel_tool_calls": True,
        "prompt_cache_key": "ck", "user": "u-1"}


async def test_every_setting_the_messages_api_takes_is_in_the_request_body(server):
    server.script("POST", "/v1/messages", message_events(["Hi"]))
    settings = ModelSettings(temperature=0.2, top_p=0.9, max_tokens=300, stop=["END"], reasoning_effort="high",
                             tool_choice="get_weather", parallel_tool_calls=False, service_tier="standard_only",
                             extra={"metadata": {"user_id": "u-1"}}, model="claude-other")
    await collect(anthropic_model(server).stream(asking(settings)))
    assert server.requests[0].body == {
        "model": "claude-other", "max_tokens": 300, "messages": [USER], "system": "Be brief.",
        "tools": [ANTHROPIC_WEATHER], "stop_sequences": ["END"], "output_config": {"effort": "high"},
        "service_tier": "standard_only",
        "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
        "stream": True, "temperature": 0.2, "top_p": 0.9, "metadata": {"user_id": "u-1"}}


async def test_a_thinking_budget_is_anthropics_extended_thinking(server):
    server.script("POST", "/v1/messages", message_events(["Hi"]))
    settings = ModelSettings(max_tokens=4096, thinking_budget=2048, tool_choice="auto", parallel_tool_calls=True)
    await collect(anthropic_model(server).stream(asking(settings)))
    assert server.requests[0].body == {
        "model": "claude-test", "max_tokens": 4096, "messages": [USER], "system": "Be brief.",
        "tools": [ANTHROPIC_WEATHER], "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": False}, "stream": True}


TOOL_CHOICES = [
    # tool_choice, Responses, Chat Completions, Anthropic
    ("auto", "auto", "auto", {"type": "auto"}),
    ("required", "required", "required", {"type": "any"}),
    ("none", "none", "none", {"type": "none"}),
    ("get_weather", {"type": "function", "name": "get_weather"},
     {"type": "function", "function": {"name": "get_weather"}}, {"type": "tool", "name": "get_weather"}),
]


@pytest.mark.parametrize("choice, responses, chat, anthropic", TOOL_CHOICES)
async def test_each_tool_choice_in_each_wire_format(server, choice, responses, chat, anthropic):
    server.script("POST", "/v1/responses", responses_stream(["Hi"]))
    server.script("POST", "/v1/chat/completions", chat_answer())
    server.script("POST", "/v1/messages", message_events(["Hi"]))
    request = asking(ModelSettings(tool_choice=choice))
    for m in (openai_model(server), chat_model(server), anthropic_model(server)):
        await collect(m.stream(request))
    assert [q.body["tool_choice"] for q in server.requests] == [responses, chat, anthropic]


async def test_tool_settings_are_not_sent_without_tools_and_the_older_options_still_work(server):
    server.script("POST", "/v1/chat/completions", chat_answer())
    request = ModelRequest("Be brief.", (UserEntry("Hello"),), (), {"temperature": 0.5, "max_tokens": 9},
                           settings=ModelSettings(tool_choice="auto", parallel_tool_calls=False, max_tokens=20))
    await collect(chat_model(server).stream(request))
    assert server.requests[0].body == {
        "model": "llama", "messages": [{"role": "system", "content": "Be brief."}, USER], "stream": True,
        "stream_options": {"include_usage": True}, "max_tokens": 20, "temperature": 0.5}


# --------------------------------------------------------------------------- what a provider cannot honour


REFUSED = [
    ("responses", ModelSettings(stop=["END"]), "Model openai:gpt-test cannot honour ModelSettings.stop: the "
     'Responses API has no stop (OpenAIModel(api="chat") has)'),
    ("responses", ModelSettings(seed=1), "Model openai:gpt-test cannot honour ModelSettings.seed: the Responses "
     'API has no seed (OpenAIModel(api="chat") has)'),
    ("responses", ModelSettings(thinking_budget=2048), "Model openai:gpt-test cannot honour "
     "ModelSettings.thinking_budget: OpenAI has no thinking budget in tokens (use reasoning_effort)"),
    ("chat", ModelSettings(thinking_budget=2048), "Model openai:llama cannot honour ModelSettings.thinking_budget: "
     "OpenAI has no thinking budget in tokens (use reasoning_effort)"),
    ("responses", ModelSettings(reasoning_effort="max"), "Model openai:gpt-test cannot honour "
     "ModelSettings.reasoning_effort: OpenAI accepts 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', not 'max'"),
    ("chat", ModelSettings(service_tier="standard_only"), "Model openai:llama cannot honour "
     "ModelSettings.service_tier: OpenAI accepts 'auto', 'default', 'flex', 'scale', 'priority', not 'standard_only'"),
    ("anthropic", ModelSettings(seed=1), "Model anthropic:claude-test cannot honour ModelSettings.seed: "
     "Anthropic's Messages API has no seed"),
    ("anthropic", ModelSettings(reasoning_effort="minimal"), "Model anthropic:claude-test cannot honour "
     "ModelSettings.reasoning_effort: Anthropic accepts 'low', 'medium', 'high', 'xhigh', 'max', not 'minimal'"),
    ("anthropic", ModelSettings(thinking_budget=512), "Model anthropic:claude-test cannot honour "
     "ModelSettings.thinking_budget: Anthropic needs at least 1024 and below max_tokens (8192), not 512"),
    ("anthropic", ModelSettings(thinking_budget=8192), "Model anthropic:claude-test cannot honour "
     "ModelSettings.thinking_budget: Anthropic needs at least 1024 and below max_tokens (8192), not 8192"),
    ("anthropic", ModelSettings(thinking_budget=2048, temperature=0.5), "Model anthropic:claude-test cannot honour "
     "ModelSettings.temperature: Anthropic refuses a temperature while thinking (thinking_budget is set)"),
    ("anthropic", ModelSettings(thinking_budget=2048, tool_choice="required"), "Model anthropic:claude-test cannot "
     "honour ModelSettings.thinking_budget: Anthropic refuses a forced tool call while thinking (tool_choice "
     "'required' or a tool's name, or structured output)"),
    ("anthropic", ModelSettings(service_tier="flex"), "Model anthropic:claude-test cannot honour "
     "ModelSettings.service_tier: Anthropic accepts 'auto', 'standard_only', not 'flex'"),
    ("chat", ModelSettings(tool_choice="get_wether"), "Model openai:llama cannot honour ModelSettings.tool_choice: "
     "it names the tool 'get_wether', which is not offered (tools offered: get_weather)"),
]


@pytest.mark.parametrize("api, settings, message", REFUSED)
async def test_a_setting_the_provider_cannot_honour_is_refused_naming_the_model_and_the_setting(
        server, api, settings, message):
    m = anthropic_model(server) if api == "anthropic" else chat_model(server) if api == "chat" else openai_model(server)
    with pytest.raises(UnsupportedModelSetting) as refused:
        check_settings(m, settings, (WEATHER,))
    assert str(refused.value) == message
    assert (refused.value.model, refused.value.option) == (m.name, message.split("ModelSettings.")[1].split(":")[0])
    if "tool_choice" not in message:  # the adapter refuses it at request time too, before sending anything
        with pytest.raises(UnsupportedModelSetting, match="cannot honour"):
            await collect(m.stream(asking(settings)))
        assert server.requests == []


async def test_structured_output_on_anthropic_leaves_no_tool_choice(server):
    with pytest.raises(UnsupportedModelSetting) as refused:
        check_settings(anthropic_model(server), ModelSettings(tool_choice="auto"), (WEATHER,), structured=True)
    assert str(refused.value) == ("Model anthropic:claude-test cannot honour ModelSettings.tool_choice: a structured "
                                  "answer is asked for through a forced tool on Anthropic, which leaves no other "
                                  "tool choice")


async def test_required_without_tools_and_invalid_values_are_refused_with_exact_messages(server):
    with pytest.raises(UnsupportedModelSetting) as refused:
        check_settings(chat_model(server), ModelSettings(tool_choice="required"), ())
    assert str(refused.value) == ("Model openai:llama cannot honour ModelSettings.tool_choice: 'required' asks for a "
                                  "tool call, but no tool is offered")
    for kwargs, message in [
        ({"temperature": -1}, "ModelSettings.temperature must be a number of at least 0, not -1"),
        ({"top_p": 1.5}, "ModelSettings.top_p must be at most 1, not 1.5"),
        ({"max_tokens": 0}, "ModelSettings.max_tokens must be a whole number of at least 1, not 0"),
        ({"seed": 1.5}, "ModelSettings.seed must be a whole number, not 1.5"),
        ({"stop": [""]}, "ModelSettings.stop must be non-empty strings, not ('',)"),
        ({"tool_choice": ""}, "ModelSettings.tool_choice must be a non-empty string, not ''"),
        ({"parallel_tool_calls": "yes"}, "ModelSettings.parallel_tool_calls must be True, False or None, not 'yes'"),
        ({"extra": {1: 2}}, "ModelSettings.extra must be a dict with string keys, not {1: 2}"),
        ({"extra": {"a": float("nan")}}, "ModelSettings.extra must hold JSON values (it is sent and stored as JSON), "
                                         "not {'a': nan}"),
    ]:
        with pytest.raises(InvalidModelSettings) as invalid:
            ModelSettings(**kwargs)
        assert str(invalid.value) == message


# --------------------------------------------------------------------------- prompt caching


def loop_request(**kw) -> ModelRequest:
    """A tool loop's second request: a question, the call, its result."""
    call = ToolCall("toolu_1", "get_weather", '{"city": "Paris"}')
    return ModelRequest("Be brief.", (UserEntry("Q1"), AssistantEntry("A1", "stop"), UserEntry("Weather?"),
                                      AssistantEntry("", "tool_use", (call,)),
                                      ToolResultEntry("toolu_1", "get_weather", "18 C")), (WEATHER,), **kw)


async def test_anthropic_cache_breakpoints_go_on_the_tools_the_system_and_the_newest_two_user_turns(server):
    server.script("POST", "/v1/messages", message_events(["Sunny."]), message_events(["Sunny."]))
    m = anthropic_model(server)
    await collect(m.stream(loop_request(cache_key="k")))
    await collect(m.stream(loop_request(cache_key="k", settings=ModelSettings(prompt_cache=False))))
    on, off = (q.body for q in server.requests)
    assert on == {
        "model": "claude-test", "max_tokens": 8192, "stream": True,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}],
        "tools": [{**ANTHROPIC_WEATHER, "cache_control": EPHEMERAL}],
        "messages": [
            {"role": "user", "content": "Q1"},
            {"role": "assistant", "content": [{"type": "text", "text": "A1"}]},
            {"role": "user", "content": [{"type": "text", "text": "Weather?", "cache_control": EPHEMERAL}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False,
                                          "content": "18 C", "cache_control": EPHEMERAL}]},
        ]}
    assert off == {
        "model": "claude-test", "max_tokens": 8192, "stream": True, "system": "Be brief.",
        "tools": [ANTHROPIC_WEATHER],
        "messages": [
            {"role": "user", "content": "Q1"},
            {"role": "assistant", "content": [{"type": "text", "text": "A1"}]},
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False,
                                          "content": "18 C"}]},
        ]}


async def test_openai_sends_the_conversations_cache_key_to_its_own_endpoint_unless_prompt_caching_is_off(server):
    server.script("POST", "/v1/responses", *[responses_stream(["Hi"]) for _ in range(3)])
    m = openai_model(server)
    for cache in (None, True, False):  # a server not OpenAI's gets the key only when asked
        await collect(m.stream(asking(ModelSettings(prompt_cache=cache), tools=(), cache_key="durable-k")))
    assert [q.body.get("prompt_cache_key") for q in server.requests] == [None, "durable-k", None]
    official = [openai_fields("openai:gpt", "responses", ModelSettings(prompt_cache=cache), (), "durable-k")[0]
                for cache in (None, True, False)]  # api.openai.com: on unless turned off
    assert official == [{"prompt_cache_key": "durable-k"}, {"prompt_cache_key": "durable-k"}, {}]


async def test_anthropic_cache_reads_and_writes_are_in_the_usage(server):
    cache = AnthropicCache(min_tokens=10)
    server.responders[("POST", "/v1/messages")] = cache
    m = anthropic_model(server)
    first = (await collect(m.stream(loop_request(cache_key="k"))))[-1]
    second = (await collect(m.stream(loop_request(cache_key="k"))))[-1]
    w = cache.usages[0]["cache_creation_input_tokens"]
    total = sum(cache.usages[0].values())
    assert cache.usages == [{"input_tokens": total - w, "cache_read_input_tokens": 0, "cache_creation_input_tokens": w},
                            {"input_tokens": total - w, "cache_read_input_tokens": w, "cache_creation_input_tokens": 0}]
    assert w > 0 and isinstance(first, FinalMessage)
    assert (first.usage, second.usage) == (Usage(total, 2, cache_write_tokens=w), Usage(total, 2, cache_read_tokens=w))


async def test_openai_cached_tokens_are_the_cache_reads_in_the_usage(server):
    cache = OpenAICache(min_tokens=10, step=1)
    server.responders[("POST", "/v1/responses")] = cache
    m = openai_model(server)
    request = asking(ModelSettings(prompt_cache=True), tools=(), cache_key="k")
    first = (await collect(m.stream(request)))[-1]
    second = (await collect(m.stream(request)))[-1]
    total = cache.usages[0]["input_tokens"]
    assert (first.usage, second.usage) == (Usage(total, 2), Usage(total, 2, cache_read_tokens=total))


def test_a_conversations_cache_key_is_its_id_hashed_with_the_sessions_location():
    import hashlib

    from durable.models.caching import cache_key

    digest = hashlib.sha256(b"/data/agent.sqlite\0root").hexdigest()
    assert cache_key("/data/agent.sqlite", "root") == f"durable-{digest[:32]}"
    assert len({cache_key("/data/agent.sqlite", "root"), cache_key("/data/agent.sqlite", "c2"),
                cache_key("/data/other.sqlite", "root")}) == 3
