"""Tool retries and timeouts (docs/spec.md §8): a tool may ask the model to call it again, at most
`max_retries` times per run (invalid arguments count too), counted from committed results; a
tool's timeout is a durable deadline from its stored start, across restarts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.tasks.tool import TOOL_RETRIES_EXHAUSTED, TOOL_TIMEOUT, TOOL_TIMEOUT_UNSAFE
from durable.testing import crash
from durable.testing.crash import entry_kind as kind_of

from .conftest import partial_is, settings, until_live

pytestmark = pytest.mark.anyio

T0 = 1_000_000.0
NO_CITY = "No city named 'Pariss'; check the spelling"


def weather_tool(calls, **options):
    async def weather(city: str) -> str:
        calls.append(city)
        if city != "Paris":
            raise durable.RetryTool(f"No city named {city!r}; check the spelling")
        return "Sunny in Paris"

    return durable.define_tool("weather", "The weather in a city", execute=weather, **options)


def weather_call(city, id):
    return faux.call("weather", {"city": city}, id=id)


def error(content, code, message=None):
    return (content, True, (r.Diagnostic("error", code, message or content),))


def results(entries):
    return [(e.content, e.is_error, e.diagnostics) for e in entries if isinstance(e, r.ToolResultEntry)]


async def test_a_retry_reaches_the_model_which_calls_again_and_succeeds(host):
    calls = []
    model = FauxModel([faux.reply("", tool_calls=[weather_call("Pariss", "c1")]),
                       faux.reply("", tool_calls=[weather_call("Paris", "c2")]),
                       faux.reply("It is sunny.")])
    async with host.open(model, settings=settings(), tools=[weather_tool(calls)]) as h:
        sub = await h.root.submit("weather?")
        assert await sub.wait() == r.Answered("It is sunny.", 6)
    assert calls == ["Pariss", "Paris"]
    assert results(await host.entries()) == [error(NO_CITY, "retry"), ("Sunny in Paris", False, ())]
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "assistant:tool_use",
                                       "tool_result", "assistant:stop"]


async def test_past_max_retries_the_call_ends_with_an_error_result_that_says_so(host):
    calls = []
    model = FauxModel([faux.reply("", tool_calls=[weather_call("Pariss", "c1")]),
                       faux.reply("", tool_calls=[weather_call("Pariss", "c2")]),
                       faux.reply("", tool_calls=[weather_call("Pariss", "c3")]),
                       faux.reply("I give up.")])
    async with host.open(model, settings=settings(), tools=[weather_tool(calls, max_retries=2)]) as h:
        sub = await h.root.submit("weather?")
        assert await sub.wait() == r.Answered("I give up.", 8)
    exhausted = TOOL_RETRIES_EXHAUSTED.format(tool="weather", max_retries=2, why=NO_CITY)
    assert exhausted == f"Tool weather is out of retries (max_retries=2): {NO_CITY}"
    assert results(await host.entries()) == [error(NO_CITY, "retry"), error(NO_CITY, "retry"),
                                             error(exhausted, "retries_exhausted")]


async def test_invalid_arguments_count_as_retries(host):
    calls = []
    model = FauxModel([faux.reply("", tool_calls=[faux.call("weather", {"town": "Paris"}, id="c1")]),
                       faux.reply("", tool_calls=[weather_call("Pariss", "c2")]),
                       faux.reply("Sorry.")])
    async with host.open(model, settings=settings(), tools=[weather_tool(calls)]) as h:  # max_retries=1
        sub = await h.root.submit("weather?")
        assert await sub.wait() == r.Answered("Sorry.", 6)
    invalid = ("Tool weather: invalid arguments: $: Additional properties are not allowed ('town' was unexpected) "
               "(keyword: additionalProperties); $: 'city' is a required property (keyword: required)")
    exhausted = TOOL_RETRIES_EXHAUSTED.format(tool="weather", max_retries=1, why=NO_CITY)
    assert results(await host.entries()) == [error(invalid, "invalid_arguments"),
                                             error(exhausted, "retries_exhausted")]
    assert calls == ["Pariss"]


async def test_retries_are_counted_per_run_and_per_tool(host):
    calls = []
    model = FauxModel([faux.reply("", tool_calls=[weather_call("Pariss", "c1")]), faux.reply("First."),
                       faux.reply("", tool_calls=[weather_call("Pariss", "c2")]), faux.reply("Second.")])
    async with host.open(model, settings=settings(), tools=[weather_tool(calls)]) as h:
        assert await (await h.root.submit("one")).wait() == r.Answered("First.", 4)
        assert await (await h.root.submit("two")).wait() == r.Answered("Second.", 8)
    assert results(await host.entries()) == [error(NO_CITY, "retry"), error(NO_CITY, "retry")]  # a new run


async def test_the_retry_count_survives_a_crash_between_the_retry_result_and_the_next_call(host):
    calls = []
    tools = [weather_tool(calls)]
    model = FauxModel([faux.reply("", tool_calls=[weather_call("Pariss", "c1")]), faux.hang("Let me")])
    async with host.open(model, settings=settings(), tools=tools) as h:
        sub = await h.root.submit("weather?")
        await until_live(h, partial_is("Let me"))  # the retry result was committed with this request
        crash(h)
    model = FauxModel([faux.reply("", tool_calls=[weather_call("Pariss", "c2")]), faux.reply("No luck.")])
    async with host.open(model, settings=settings(), tools=tools) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")  # the interrupted request is charged, then retried
        host.clock.advance(1.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("No luck.", 7)
    exhausted = TOOL_RETRIES_EXHAUSTED.format(tool="weather", max_retries=1, why=NO_CITY)
    assert results(await host.entries()) == [error(NO_CITY, "retry"), error(exhausted, "retries_exhausted")]
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "assistant:aborted",
                                       "assistant:tool_use", "tool_result:error", "assistant:stop"]


# ------------------------------------------------------------------ timeouts


def slow_tool(name, clock, replay, runs, *, seconds=100.0, timeout=30.0):
    async def execute(args, api, ctx):
        runs.append(ctx.attempt)
        await api.output(f"{name} started")
        await clock.sleep_until(clock.now() + seconds, f"work:{name}")
        return f"{name} finished"

    return durable.define_tool(name, "Works a while", replay=replay, execute=execute, timeout=timeout)


def started(live):
    return any(s.output for s in live.tools)


@pytest.mark.parametrize("replay", ["safe", "unsafe"])
async def test_a_tool_past_its_timeout_is_cancelled_and_answered_keeping_its_partial_output(host, replay):
    runs = []
    model = FauxModel([faux.reply("", tool_calls=[faux.call("slow", {}, id="c1")]), faux.reply("Too slow.")])
    async with host.open(model, settings=settings(), tools=[slow_tool("slow", host.clock, replay, runs)]) as h:
        sub = await h.root.submit("go")
        assert await host.clock.wait_for_timer("tool_timeout:2") == T0 + 30.0
        host.clock.advance(30.0)
        assert await sub.wait() == r.Answered("Too slow.", 4)
        template = TOOL_TIMEOUT if replay == "safe" else TOOL_TIMEOUT_UNSAFE
        message = template.format(tool="slow", seconds=30.0)
        task = await h.task(2)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(message, r.ErrorDetail("timeout"))))
    assert message == ("Tool slow timed out after 30 s" if replay == "safe"
                       else "Tool slow timed out after 30 s and may have partially run")
    assert results(await host.entries()) == [error(message + "\nPartial output:\nslow started", "timeout", message)]
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "assistant:stop"]
    assert runs == [1]


async def test_a_safe_tool_run_again_after_a_crash_keeps_the_deadline_of_its_first_start(host):
    runs = []
    tools = [slow_tool("slow", host.clock, "safe", runs)]
    model = FauxModel([faux.reply("", tool_calls=[faux.call("slow", {}, id="c1")])])
    async with host.open(model, settings=settings(), tools=tools) as h:
        sub = await h.root.submit("go")
        await until_live(h, started)
        host.clock.advance(10.0)
        crash(h)
    host.clock.advance(10.0)
    model = FauxModel([faux.reply("Too slow.")])
    async with host.open(model, settings=settings(), tools=tools) as h:
        await h.resume()
        assert await host.clock.wait_for_timer("tool_timeout:2") == T0 + 30.0  # not T0 + 50
        host.clock.advance(10.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("Too slow.", 4)
    message = "Tool slow timed out after 30 s"
    assert results(await host.entries()) == [error(message + "\nPartial output:\nslow started", "timeout", message)]
    assert runs == [1, 2]


@pytest.mark.parametrize("replay", ["safe", "unsafe"])
async def test_a_tool_found_past_its_deadline_after_a_crash_is_answered_timed_out_without_running(host, replay):
    runs = []
    tools = [slow_tool("slow", host.clock, replay, runs)]
    model = FauxModel([faux.reply("", tool_calls=[faux.call("slow", {}, id="c1")])])
    async with host.open(model, settings=settings(), tools=tools) as h:
        sub = await h.root.submit("go")
        await until_live(h, started)
        crash(h)
    host.clock.advance(45.0)  # the process stayed dead past the deadline
    model = FauxModel([faux.reply("It timed out.")])
    async with host.open(model, settings=settings(), tools=tools) as h:
        assert await h.root.submission(sub.id).wait() == r.Answered("It timed out.", 4)
    message = TOOL_TIMEOUT.format(tool="slow", seconds=30) if replay == "safe" else \
        TOOL_TIMEOUT_UNSAFE.format(tool="slow", seconds=30)
    assert results(await host.entries()) == [error(message + "\nPartial output:\nslow started", "timeout", message)]
    assert runs == [1]
    assert [(x.type, x.task.id, x.reason, x.detail) for x in host.reports] == [
        ("task_interrupted", 2, "not_rerun", message)]
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "assistant:stop"]


def test_tool_options_are_checked_when_the_tool_is_defined():
    async def run(args, api, ctx):
        return "x"

    for bad in (-1, 1.5, True):
        with pytest.raises(durable.ToolDefinitionError, match="max_retries must be an int >= 0"):
            durable.define_tool("t", "T", execute=run, max_retries=bad)
    for bad in (0, -3, "30"):
        with pytest.raises(durable.ToolDefinitionError, match="timeout must be a positive number"):
            durable.define_tool("t", "T", execute=run, timeout=bad)
    tool = durable.define_tool("t", "T", execute=run, timeout=30, max_retries=0)
    assert (tool.timeout, tool.max_retries, tool.approval) == (30.0, 0, False)

    @durable.tool(timeout=5, max_retries=3, approval=True)
    async def careful(x: int) -> int:
        return x

    assert (careful.timeout, careful.max_retries, careful.approval) == (5.0, 3, True)


async def test_a_timeout_also_bounds_a_tool_that_does_not_use_the_clock(host):
    async def stuck(args, api, ctx):
        await anyio.sleep_forever()

    tool = durable.define_tool("stuck", "Never returns", execute=stuck, replay="safe", timeout=5)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("stuck", {}, id="c1")]), faux.reply("OK.")])
    async with host.open(model, settings=settings(), tools=[tool]) as h:
        sub = await h.root.submit("go")
        await host.clock.wait_for_timer("tool_timeout:2")
        host.clock.advance(5.0)
        assert await sub.wait() == r.Answered("OK.", 4)
    assert results(await host.entries()) == [error("Tool stuck timed out after 5 s", "timeout")]


# ------------------------------------------------------------------ across a SIGKILL

KILLED = """
import sys, anyio, durable
from durable.models import FauxModel, faux

path, replay = sys.argv[1], sys.argv[2]
clock = durable.FakeClock(1_000_000.0)  # never moves in this process: the deadline cannot come here

async def slow(args, api, ctx):
    await api.output("slow started")
    print("started", ctx.attempt, flush=True)
    await anyio.sleep_forever()

tool = durable.define_tool("slow", "Works a while", execute=slow, replay=replay, timeout=30)
model = FauxModel([faux.reply("", tool_calls=[faux.call("slow", {}, id="c1")])])
settings = durable.Settings(progress=durable.Progress(0, 0))

async def main():
    async with durable.open_harness(path, model=model, tools=[tool], clock=clock, settings=settings) as h:
        await h.root.submit("go")
        await anyio.sleep_forever()

anyio.run(main, backend="trio")
"""


@pytest.mark.parametrize("replay", ["safe", "unsafe"])
@pytest.mark.parametrize("reopened_after", [10.0, 45.0])
async def test_a_tool_timeout_holds_across_a_sigkill(tmp_path, replay, reopened_after):
    """Killed 0 s after its start; reopened 10 s after it (before the 30 s deadline: a safe tool
    runs again and is cut off at the same deadline, an unsafe one is not run again) or 45 s after
    it (past the deadline: neither runs again, both are answered timed out)."""
    path = tmp_path / "s.sqlite"
    child = subprocess.Popen([sys.executable, "-c", KILLED, str(path), replay], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "started 1"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    runs = []

    async def slow(args, api, ctx):
        runs.append(ctx.attempt)
        await api.output("again")
        await anyio.sleep_forever()

    tool = durable.define_tool("slow", "Works a while", execute=slow, replay=replay, timeout=30)
    clock = durable.FakeClock(T0 + reopened_after)
    model = FauxModel([faux.reply("Answered.")])
    reports = []
    async with durable.open_harness(path, model=model, tools=[tool], clock=clock, settings=settings(),
                                    report=reports.append) as h:
        await h.resume()
        sid = (await h.tasks(kind="generation"))[0].input.submission_ids[0]
        if replay == "safe" and reopened_after < 30:
            assert await clock.wait_for_timer("tool_timeout:2") == T0 + 30.0  # the first start's deadline
            clock.set(T0 + 30.0)
        assert await h.root.submission(sid).wait() == r.Answered("Answered.", 4)
        entries = [e.entry for e in await h.root.entries()]
    late = reopened_after >= 30
    if replay == "safe":
        message, code = "Tool slow timed out after 30 s", "timeout"
        partial = "slow started" if late else "again"  # a safe tool run again starts its output afresh
        assert runs == ([] if late else [2])
    else:
        message, code = (("Tool slow timed out after 30 s and may have partially run", "timeout") if late else
                         ("Tool slow was interrupted and may have partially run", "interrupted"))
        partial = "slow started"
        assert runs == []
    assert entries[2] == r.ToolResultEntry("c1", "slow", f"{message}\nPartial output:\n{partial}", True,
                                           (r.Diagnostic("error", code, message),))
    assert [kind_of(e) for e in entries] == ["user", "assistant:tool_use", "tool_result:error", "assistant:stop"]
    assert model.requests[0].messages[-1] == entries[2]
    expected = ("not_rerun", message) if replay == "unsafe" or late else ("interrupted", "Tool slow runs again "
                                                                                         "(replay safe)")
    assert [(x.type, x.reason, x.detail) for x in reports] == [("task_interrupted", *expected)]


RETRIED = """
import sys, anyio, durable
from durable.models import FauxModel, faux

async def weather(city: str) -> str:
    raise durable.RetryTool(f"No city named {city!r}; check the spelling")

tool = durable.define_tool("weather", "The weather", execute=weather)
model = FauxModel([faux.reply("", tool_calls=[faux.call("weather", {"city": "Pariss"}, id="c1")]),
                   faux.hang("Let me")])
settings = durable.Settings(progress=durable.Progress(0, 0))

async def main():
    async with durable.open_harness(sys.argv[1], model=model, tools=[tool], settings=settings,
                                    clock=durable.FakeClock(1_000_000.0)) as h:
        await h.root.submit("weather?")
        async for live in h.root.follow():
            if live.generation is not None and live.generation.message.text == "Let me":
                print("asking again", flush=True)  # the retry result is committed with this request
                await anyio.sleep_forever()

anyio.run(main, backend="trio")
"""


async def test_the_retry_count_survives_a_sigkill_between_the_retry_result_and_the_next_call(tmp_path):
    path = tmp_path / "s.sqlite"
    child = subprocess.Popen([sys.executable, "-c", RETRIED, str(path)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "asking again"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    calls = []
    model = FauxModel([faux.reply("", tool_calls=[weather_call("Pariss", "c2")]), faux.reply("No luck.")])
    clock = durable.FakeClock(T0)
    async with durable.open_harness(path, model=model, tools=[weather_tool(calls)], clock=clock,
                                    settings=settings()) as h:
        await h.resume()
        await clock.wait_for_timer("retry:1")  # the cut-off request is charged, then sent again
        clock.advance(1.0)
        sid = (await h.tasks(kind="generation"))[0].input.submission_ids[0]
        assert await h.root.submission(sid).wait() == r.Answered("No luck.", 7)
        entries = [e.entry for e in await h.root.entries()]
    exhausted = TOOL_RETRIES_EXHAUSTED.format(tool="weather", max_retries=1, why=NO_CITY)
    assert results(entries) == [error(NO_CITY, "retry"), error(exhausted, "retries_exhausted")]
    assert [kind_of(e) for e in entries] == ["user", "assistant:tool_use", "tool_result:error", "assistant:aborted",
                                             "assistant:tool_use", "tool_result:error", "assistant:stop"]
    assert calls == ["Pariss"]


async def test_a_tool_with_a_timeout_that_raises_before_its_deadline_is_answered_as_without_one(host):
    async def picky(city: str) -> str:
        if city == "Pariss":
            raise durable.RetryTool(NO_CITY)
        raise ValueError("no weather today")

    tool = durable.define_tool("weather", "The weather", execute=picky, timeout=30)
    model = FauxModel([faux.reply("", tool_calls=[weather_call("Pariss", "c1")]),
                       faux.reply("", tool_calls=[weather_call("Oslo", "c2")]), faux.reply("OK.")])
    async with host.open(model, settings=settings(), tools=[tool]) as h:
        assert await (await h.root.submit("weather?")).wait() == r.Answered("OK.", 6)
    failed = "Tool weather failed: ValueError: no weather today"
    assert results(await host.entries()) == [error(NO_CITY, "retry"), error(failed, "tool_error")]
