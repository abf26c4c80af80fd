"""Usage: running totals committed with what changes them (`conv.usage()`, `h.usage()`): requests
and tokens per model, tool calls, and tool runtime as the union of the started calls' intervals,
a call cut off by a crash counting to its last commit and not while it was cut off."""

from __future__ import annotations

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.testing import crash

from .conftest import settings, until_live, used

pytestmark = pytest.mark.anyio

TOKENS = r.Usage(100, 20, reasoning_tokens=5, cache_read_tokens=40, cache_write_tokens=10)


def clock_tool(name, clock, seconds, *, replay="safe", output_after=None, hang=False):
    """A tool that works `seconds` on the harness's clock (a timer the test fires); with
    `output_after`, it first emits output once the clock passed that many seconds; `hang`: it
    then never finishes."""

    async def execute(args, api, ctx):
        start = clock.now()
        if output_after is not None:
            await clock.sleep_until(start + output_after, f"{name}:output")
            await api.output("half way")
        if hang:
            await anyio.sleep_forever()
        await clock.sleep_until(start + seconds, f"{name}:done")
        return f"{name} done"

    return durable.define_tool(name, f"works {seconds:g} s", replay=replay, execute=execute)


async def test_parallel_calls_count_their_union_and_a_second_round_adds_its_own(host):
    clock = host.clock
    tools = [clock_tool("long", clock, 10), clock_tool("short", clock, 4), clock_tool("third", clock, 3)]
    model = FauxModel([faux.reply("", tool_calls=[faux.call("long", {}), faux.call("short", {})], usage=TOKENS),
                       faux.reply("", tool_calls=[faux.call("third", {})], usage=r.Usage(50, 5)),
                       faux.reply("done", usage=r.Usage(60, 1))])
    async with host.open(model, tools=tools, settings=settings()) as h:
        sub = await h.root.submit("go")
        await clock.wait_for_timer("long:done")
        await clock.wait_for_timer("short:done")
        clock.advance(4)  # short ends at +4, long at +10: together 10 s, not 14
        await clock.wait_for_timer("long:done")
        clock.advance(6)
        await clock.wait_for_timer("third:done")
        clock.advance(3)
        assert await sub.wait() == r.Answered("done", 7)
        expected = r.UsageTotals((r.ModelUsage("faux", 3, 210, 26, 5, 40, 10),), tool_calls=3, tool_seconds=13.0)
        assert h.root.usage() == expected == h.usage() == h.root.live().usage
        assert (expected.requests, expected.input_tokens, expected.output_tokens, expected.total_tokens) == \
            (3, 210, 26, 236)
    async with host.open(FauxModel([])) as h:  # committed: a later process reads the same totals
        assert h.root.usage() == expected


async def test_usage_is_per_model_and_the_harness_sums_its_conversations(host):
    async with host.open(FauxModel([faux.reply("one", usage=r.Usage(10, 2))])) as h:
        await (await h.root.submit("a")).wait()
    other = FauxModel([faux.reply("two", usage=r.Usage(7, 3)), faux.reply("three", usage=r.Usage(5, 1))],
                      name="other")
    async with host.open(other) as h:
        await (await h.root.submit("b")).wait()
        await (await h.conversation("side").submit("c")).wait()
        assert h.root.usage() == r.UsageTotals((r.ModelUsage("faux", 1, 10, 2), r.ModelUsage("other", 1, 7, 3)))
        assert h.conversation("side").usage() == used(1, 5, 1, model="other")
        assert h.usage() == r.UsageTotals((r.ModelUsage("faux", 1, 10, 2), r.ModelUsage("other", 2, 12, 4)))
        assert h.usage().model("other") == r.ModelUsage("other", 2, 12, 4)
        assert h.usage().model("none") == r.ModelUsage("none")


async def test_a_failed_attempt_and_its_retry_are_two_requests_and_the_partial_is_charged(host):
    model = FauxModel([faux.error("Overloaded", kind="overloaded", status_code=529, partial="Hel"),
                       faux.reply("Hello", usage=r.Usage(10, 2))])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await host.clock.wait_for_timer("retry:1")
        assert h.root.usage() == used(1, 0, 0)  # the partial reported no usage
        host.clock.advance(1)
        assert await sub.wait() == r.Answered("Hello", 3)
        assert h.root.usage() == used(2, 10, 2)


async def test_an_unsafe_call_cut_off_by_a_crash_counts_to_its_last_commit_not_to_the_reopen(host):
    clock = host.clock
    tool = clock_tool("send", clock, 10, replay="unsafe", output_after=2, hang=True)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("send", {}, id="c1")]), faux.reply("ok")])
    async with host.open(model, tools=[tool], settings=settings()) as h:
        sub = await h.root.submit("go")
        await clock.wait_for_timer("send:output")
        clock.advance(2)
        await until_live(h, lambda live: [s.output for s in live.tools] == ["half way"])
        crash(h)
    clock.advance(100)  # the host is down for 100 s
    async with host.open(model, tools=[tool], settings=settings()) as h:
        assert await h.root.submission(sub.id).wait() == r.Answered("ok", 4)
        assert h.root.usage().tool_calls == 1
        assert h.root.usage().tool_seconds == 2.0  # from its start to its output, its last commit


async def test_a_safe_call_run_again_does_not_count_the_time_it_was_cut_off(host):
    clock = host.clock
    first = clock_tool("lookup", clock, 10, output_after=2, hang=True)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("lookup", {}, id="c1")]), faux.reply("ok")])
    async with host.open(model, tools=[first], settings=settings()) as h:
        sub = await h.root.submit("go")
        await clock.wait_for_timer("lookup:output")
        clock.advance(2)
        await until_live(h, lambda live: [s.output for s in live.tools] == ["half way"])
        crash(h)
    clock.advance(50)
    again = clock_tool("lookup", clock, 3)
    async with host.open(model, tools=[again], settings=settings()) as h:
        await h.resume()
        await clock.wait_for_timer("lookup:done")
        clock.advance(3)
        assert await h.root.submission(sub.id).wait() == r.Answered("ok", 4)
        # 2 s before the crash and 3 s after the restart; the 50 s it was cut off are not counted.
        assert h.root.usage().tool_seconds == 5.0


async def test_a_cut_off_call_counts_to_its_last_stamped_output_at_most_output_stamp_before_its_last_flush(host):
    """An output flush stamps the task row again only when its stamp is `OUTPUT_STAMP` (1 s) old:
    a flush sooner grows the output beside the file, and the crash's interrupt time is the last
    stamp (here 0.5 s before the last flush)."""
    from durable.tasks.tool.kind import OUTPUT_STAMP

    clock = host.clock

    async def execute(args, api, ctx):
        start = clock.now()
        await clock.sleep_until(start + 2, "send:output")
        await api.output("half way")  # the row's stamp is 2 s old: stamped
        await clock.sleep_until(start + 2 + OUTPUT_STAMP / 2, "send:more")
        await api.output(", and more")  # 0.5 s: not stamped
        await anyio.sleep_forever()

    tool = durable.define_tool("send", "works", replay="unsafe", execute=execute)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("send", {}, id="c1")]), faux.reply("ok")])
    async with host.open(model, tools=[tool], settings=settings()) as h:
        sub = await h.root.submit("go")
        await clock.wait_for_timer("send:output")
        clock.advance(2)
        await clock.wait_for_timer("send:more")
        clock.advance(OUTPUT_STAMP / 2)
        await until_live(h, lambda live: [s.output for s in live.tools] == ["half way, and more"])
        crash(h)
    clock.advance(100)
    async with host.open(model, tools=[tool], settings=settings()) as h:
        assert await h.root.submission(sub.id).wait() == r.Answered("ok", 4)
        assert h.root.usage().tool_seconds == 2.0  # to the last stamp, not to the last flush (2.5 s)
