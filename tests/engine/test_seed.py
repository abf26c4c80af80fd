"""Importing a history (`Conversation.seed`) from the OpenAI chat, OpenAI Responses and Anthropic
messages formats: exact entries, one commit, the conversation idle; invalid messages named."""

from __future__ import annotations

import pytest

import durable
from durable import records as r
from durable.engine.history import detect
from durable.models import FauxModel, faux

from .conftest import settings

pytestmark = pytest.mark.anyio

ARGS = '{"city": "Paris"}'
EXPECTED = [
    r.UserEntry("Weather in Paris?"),
    r.AssistantEntry("Let me look.", "tool_use", (r.ToolCall("c1", "weather", ARGS),)),
    r.ToolResultEntry("c1", "weather", "18 C, sunny"),
    r.AssistantEntry("It is 18 C and sunny.", "stop"),
    r.UserEntry("Thanks"),
]

CHAT = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "Let me look.",
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": ARGS}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "18 C, sunny"},
    {"role": "assistant", "content": [{"type": "text", "text": "It is 18 C and sunny."}]},
    {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
]
RESPONSES = [
    {"role": "user", "content": "Weather in Paris?"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look."}]},
    {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": ARGS},
    {"type": "function_call_output", "call_id": "c1", "output": "18 C, sunny"},
    {"type": "reasoning", "summary": []},
    {"role": "assistant", "content": "It is 18 C and sunny."},
    {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
]
ANTHROPIC = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "a tool", "signature": "x"},
                                      {"type": "text", "text": "Let me look."},
                                      {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Paris"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                  "content": [{"type": "text", "text": "18 C, sunny"}]}]},
    {"role": "assistant", "content": "It is 18 C and sunny."},
    {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
]


@pytest.mark.parametrize(("fmt", "history"), [("openai_chat", CHAT), ("openai_responses", RESPONSES),
                                              ("anthropic", ANTHROPIC)])
async def test_a_history_in_each_format_is_imported_as_exact_entries_in_one_commit_and_the_model_reads_it(
        host, fmt, history):
    assert detect(history) == fmt
    model = FauxModel([faux.reply("You are welcome")])
    async with host.open(model, settings=settings()) as h:
        commits = h.session.commit_count
        assert await h.conversation("imported").seed(history) == 5
        assert h.session.commit_count == commits + 1
        conv = h.conversation("imported")
        assert [(e.seq, e.entry) for e in await conv.entries()] == list(enumerate(EXPECTED, 1))
        assert conv.live() == r.Live() and await h.tasks() == []  # idle: no run started
        with pytest.raises(durable.InvalidInput):  # only into an empty conversation
            await conv.seed(history, format=fmt)
        assert await (await conv.submit("Bye")).answer() == "You are welcome"
        assert list(model.requests[0].messages) == [*EXPECTED, r.UserEntry("Bye", model.requests[0].messages[-1]
                                                                            .submission_id)]
    async with host.open(FauxModel([]), settings=settings()) as h:  # kept whole across a reopen
        assert [e.entry for e in await h.conversation("imported").entries()][:5] == EXPECTED


async def test_an_invalid_message_is_named_by_index_and_field_and_nothing_is_written(host):
    bad_args = [*CHAT[:1], {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{oops"}}]}]
    no_result = CHAT[:2] + [{"role": "user", "content": "hello?"}]
    image = [{"role": "user", "content": [{"type": "text", "text": "look"},
                                          {"type": "image", "source": {"type": "base64", "data": "AA=="}}]}]
    unknown = [{"type": "function_call_output", "call_id": "zz", "output": "?"}]
    async with host.open(FauxModel([]), settings=settings()) as h:
        conv = h.conversation("imported")
        head = f"of the history for conversation 'imported'"
        tail = f"; nothing was written to {host.path}"
        cases = [
            (bad_args, None, f"Message 1 {head} (openai_chat) cannot be imported: tool_calls[0].function.arguments: "
                             f"not JSON text (Expecting property name enclosed in double quotes: line 1 column 2 "
                             f"(char 1)){tail}"),
            (no_result, None, f"Message 1 {head} (openai_chat) cannot be imported: tool_calls[0].id: tool call 'c1' "
                              f"has no result before message 2{tail}"),
            (image, None, f"Message 0 {head} (anthropic) cannot be imported: content[1]: image parts cannot be "
                          f"imported: durable has no image entries{tail}"),
            (unknown, None, f"Message 0 {head} (openai_responses) cannot be imported: call_id: no tool call 'zz' "
                            f"before it is waiting for a result{tail}"),
            ([{"role": "system", "content": "Be brief"}], "openai_chat",
             f"Message 0 {head} (openai_chat) cannot be imported: role: system messages are not history: give "
             f"them as the harness's instructions{tail}"),
            ("hello", None, f"Message 0 {head} cannot be imported: (history): a history is a list of messages, not "
                            f"str{tail}"),
        ]
        for history, fmt, message in cases:
            with pytest.raises(durable.InvalidHistory) as refused:
                await conv.seed(history, format=fmt)
            assert str(refused.value) == message
        assert await conv.entries() == [] and await h.storage.get_live("imported") is None
