"""Usage limits per run (`Settings.usage_limits`) and per conversation
(`Settings.conversation_usage_limits`): checked before each request (and before a round of tool
calls is handed out), a request that would pass one is never sent and the run ends
`unanswered{usage_limit}` naming the limit and the figures; every tool call still gets a result."""

from __future__ import annotations

import re

import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.tasks.generation.records import CALL_NOT_RUN_LIMIT
from durable.testing import check_invariants, crash
from durable.tokens import entry_tokens, estimate_tokens

from .conftest import settings, until_live, used

pytestmark = pytest.mark.anyio

SYSTEM = "You are a helpful assistant."


async def step(args, api, ctx):
    return "stepped"


STEP = durable.define_tool("step", "takes a step", replay="safe", execute=step)


def _lines(history: list[str]) -> list[str]:
    return [re.sub(r"sub_[0-9a-f]+", "sub", line) for line in history]


async def test_a_run_that_reaches_its_request_limit_mid_run_ends_before_the_request_that_would_pass_it(host):
    model = FauxModel([faux.reply("", tool_calls=[faux.call("step", {}, id="c1")], usage=r.Usage(10, 1)),
                       faux.reply("", tool_calls=[faux.call("step", {}, id="c2")], usage=r.Usage(20, 1)),
                       faux.reply("never sent")])
    st = settings(usage_limits=durable.UsageLimits(request_limit=2), progress=durable.Progress())
    async with host.open(model, tools=[STEP], settings=st) as h:
        sub = await h.root.submit("walk")
        detail = ("The run would pass its request limit (settings.usage_limits.request_limit = 2): "
                  "2 requests sent")
        assert await sub.wait() == r.Unanswered("usage_limit", detail)
        task = await h.task(1)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(detail, r.ErrorDetail("usage_limit"))))
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sub.id,), "usage_limit", detail, "walk"),
                                       usage=used(2, 30, 2, tool_calls=2))
    assert model.calls == 2
    assert await host.entries() == [
        r.UserEntry("walk", sub.id),
        r.AssistantEntry("", "tool_use", (faux.call("step", {}, id="c1"),), r.Usage(10, 1), model="faux"),
        r.ToolResultEntry("c1", "step", "stepped"),
        r.AssistantEntry("", "tool_use", (faux.call("step", {}, id="c2"),), r.Usage(20, 1), model="faux"),
        r.ToolResultEntry("c2", "step", "stepped"),
    ]
    # With a limit set, a run starts in prepare (checked there); each round's close that would
    # send a request past the limit goes to prepare instead, which ends the run.
    assert _lines(host.storage.history) == [
        "task 1 generation running/prepare; entry root#1 user; submission sub queued; live root",
        "task 1 generation running/request; live root",
        "task 2 tool running/tool_progress; task 1 generation waiting/tools; entry root#2 assistant:tool_use; "
        "live root [lazy]",
        "task 2 tool done/tool_progress; task 1 generation running/request; entry root#3 tool_result; live root",
        "task 3 tool running/tool_progress; task 1 generation waiting/tools; entry root#4 assistant:tool_use; "
        "live root [lazy]",
        "task 3 tool done/tool_progress; task 1 generation running/prepare; entry root#5 tool_result; "
        "live root [lazy]",
        "task 1 generation failed/prepare; submission sub unanswered; live root",
    ]
    assert check_invariants(host.path, settings=st, clean_close=True, quiescent=True) == []


async def test_a_round_of_tool_calls_past_the_tool_call_limit_is_not_run_and_every_call_gets_a_result(host):
    model = FauxModel([faux.reply("", tool_calls=[faux.call("step", {}, id="a"), faux.call("step", {}, id="b")])])
    st = settings(usage_limits=durable.UsageLimits(tool_calls_limit=1))
    async with host.open(model, tools=[STEP], settings=st) as h:
        sub = await h.root.submit("two steps")
        detail = ("The run would pass its tool call limit (settings.usage_limits.tool_calls_limit = 1): "
                  "0 tool calls made, 2 more asked for")
        assert await sub.wait() == r.Unanswered("usage_limit", detail)
    diagnostic = (r.Diagnostic("error", "usage_limit", detail),)
    assert (await host.entries())[2:] == [r.ToolResultEntry("a", "step", CALL_NOT_RUN_LIMIT, True, diagnostic),
                                          r.ToolResultEntry("b", "step", CALL_NOT_RUN_LIMIT, True, diagnostic)]
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "tool_result:error"]


async def test_a_conversation_limit_counts_every_run_and_refuses_the_request_that_would_pass_it(host):
    model = FauxModel([faux.reply("one", usage=r.Usage(1000, 3)), faux.reply("never sent")])
    st = settings(conversation_usage_limits=durable.UsageLimits(input_tokens_limit=1005))
    async with host.open(model, settings=st) as h:
        assert await (await h.root.submit("a")).wait() == r.Answered("one", 2)
        second = await h.root.submit("b")
        estimate = estimate_tokens(SYSTEM) + sum(entry_tokens(e.entry) for e in await h.root.entries())
        detail = (f"The conversation would pass its input token limit "
                  f"(settings.conversation_usage_limits.input_tokens_limit = 1005): 1000 input tokens used, about "
                  f"{estimate} in the next request")
        assert await second.wait() == r.Unanswered("usage_limit", detail)
        assert h.root.usage() == used(1, 1000, 3)
    assert model.calls == 1
    assert await host.transcript() == ["user", "assistant:stop", "user"]


async def test_the_output_and_total_token_limits_and_a_per_run_count_that_starts_afresh(host):
    model = FauxModel([faux.reply("one", usage=r.Usage(10, 50)), faux.reply("two", usage=r.Usage(10, 50))])
    st = settings(usage_limits=durable.UsageLimits(output_tokens_limit=50))
    async with host.open(model, settings=st) as h:
        assert await (await h.root.submit("a")).wait() == r.Answered("one", 2)
        assert await (await h.root.submit("b")).wait() == r.Answered("two", 4)  # a new run counts afresh
        assert h.root.usage() == used(2, 20, 100)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("step", {})], usage=r.Usage(10, 50))])
    st = settings(usage_limits=durable.UsageLimits(output_tokens_limit=50, total_tokens_limit=10_000))
    async with host.open(model, tools=[STEP], settings=st) as h:
        sub = await h.root.submit("c")
        assert await sub.wait() == r.Unanswered(
            "usage_limit", "The run would pass its output token limit (settings.usage_limits.output_tokens_limit = "
                           "50): 50 output tokens used")
    model = FauxModel([])
    st = settings(conversation_usage_limits=durable.UsageLimits(total_tokens_limit=200))
    async with host.open(model, settings=st) as h:
        status = await (await h.root.submit("d")).wait()
        assert isinstance(status, r.Unanswered) and status.detail.startswith(
            "The conversation would pass its total token limit (settings.conversation_usage_limits.total_tokens_limit"
            " = 200): 180 tokens used, about ")
    assert model.calls == 0


async def test_the_run_usage_is_shown_live_while_a_per_run_limit_is_set_and_survives_a_crash(host):
    model = FauxModel([faux.reply("", tool_calls=[faux.call("step", {})], usage=r.Usage(10, 1)),
                       faux.hang("half")])
    st = settings(usage_limits=durable.UsageLimits(request_limit=3))
    async with host.open(model, tools=[STEP], settings=st) as h:
        sub = await h.root.submit("go")
        live = await until_live(h, lambda live: live.generation is not None and live.generation.message.text == "half")
        assert live.run == r.Run(1, (sub.id,), used(2, 10, 1, tool_calls=1))
        crash(h)
    model = FauxModel([faux.reply("answer"), faux.reply("never sent")])
    async with host.open(model, tools=[STEP], settings=st) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        assert h.root.live().run.usage == used(2, 10, 1, tool_calls=1)
        host.clock.advance(1)
        assert await h.root.submission(sub.id).wait() == r.Answered("answer", 5)  # request 3 of 3
    assert model.calls == 1
