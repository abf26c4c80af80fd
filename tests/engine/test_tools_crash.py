"""Tools after crashes, client tools, and bad calls (docs/spec.md §3, §4, §5)."""

from __future__ import annotations

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.testing import FakeClock, crash

from .conftest import settings, until_live

pytestmark = pytest.mark.anyio


def slot_output_is(text):
    return lambda live: any(s.output == text for s in live.tools)


class Runs(list):
    """Executions of a tool, by call id; `wait(n)` returns once the n-th run's output is committed
    (with output_interval 0, `api.output` returns after its commit)."""

    def __init__(self):
        super().__init__()
        self._changed = anyio.Event()

    async def wait(self, n):
        while len(self) < n:
            await self._changed.wait()

    def add(self, call_id):
        self.append(call_id)
        self._changed.set()
        self._changed = anyio.Event()


def hanging_tool(name, replay, executions):
    async def execute(args, api, ctx):
        await api.output("step 1")
        executions.add(ctx.call_id)
        await anyio.sleep_forever()

    return durable.define_tool(name, "Works for a long time", replay=replay, execute=execute)


@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_a_safe_tool_that_never_finishes_runs_exactly_restart_limit_times(host, anyio_backend):
    runs = Runs()
    heavy = hanging_tool("heavy", "safe", runs)
    st = settings(restart_limit=2)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("heavy", {}, id="c1")])])
    async with host.open(model, settings=st, tools=[heavy]) as h:
        sub = await h.root.submit("work")
        await until_live(h, slot_output_is("step 1"))
        crash(h)
    async with host.open(FauxModel([]), settings=st, tools=[heavy]) as h:
        await h.resume()
        await runs.wait(2)
        crash(h)
    model = FauxModel([faux.reply("The tool failed.")])
    message = "Tool heavy was interrupted 2 times in a row; it is not run again"
    async with host.open(model, settings=st, tools=[heavy]) as h:
        assert await h.root.submission(sub.id).wait() == r.Answered("The tool failed.", 4)
        tool_task = await h.task(2)
        assert tool_task.state == r.Terminal(r.Failed(r.ErrorInfo(message, r.ErrorDetail("restart_limit"))))
    assert runs == ["c1", "c1"]
    result = r.ToolResultEntry("c1", "heavy", message + "\nPartial output:\nstep 1", True,
                               (r.Diagnostic("error", "restart_limit", message),))
    assert model.requests[0].messages[-1] == result
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "assistant:stop"]
    assert [(x.type, x.task.id, x.reason, x.restarts) for x in host.reports] == [
        ("task_interrupted", 2, "interrupted", 1),
        ("task_interrupted", 2, "restart_limit", 2),
    ]


async def test_an_unsafe_tool_cut_off_once_is_not_run_again_and_the_run_continues(host):
    runs = Runs()
    deploy = hanging_tool("deploy", "unsafe", runs)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("deploy", {}, id="c1")])])
    async with host.open(model, settings=settings(), tools=[deploy]) as h:
        sub = await h.root.submit("ship it")
        await until_live(h, slot_output_is("step 1"))
        crash(h)
    model = FauxModel([faux.reply("It may have partly run.")])
    message = "Tool deploy was interrupted and may have partially run"
    async with host.open(model, settings=settings(), tools=[deploy]) as h:
        assert await h.root.submission(sub.id).wait() == r.Answered("It may have partly run.", 4)
    assert runs == ["c1"]
    assert model.requests[0].messages[-1] == r.ToolResultEntry(
        "c1", "deploy", message + "\nPartial output:\nstep 1", True, (r.Diagnostic("error", "interrupted", message),))
    assert [(x.type, x.reason) for x in host.reports] == [("task_interrupted", "not_rerun")]


async def test_a_crash_while_waiting_for_a_tool_round_does_not_charge_the_generation(host):
    runs = Runs()
    slow = hanging_tool("slow", "safe", runs)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("slow", {}, id="c1")])])
    async with host.open(model, settings=settings(), tools=[slow]) as h:
        await h.root.submit("go")
        await until_live(h, slot_output_is("step 1"))
        crash(h)
    async with host.open(FauxModel([]), settings=settings(), tools=[slow]) as h:
        generation, tool_task = await h.task(1), await h.task(2)
        assert (generation.state, generation.restarts) == (r.Waiting(on=(2,)), 0)
        assert (tool_task.state, tool_task.restarts) == (r.Pending(), 1)


async def test_tools_run_in_parallel_and_results_follow_the_call_order(host):
    gate = anyio.Event()
    order = []

    async def first(args, api, ctx):
        await gate.wait()
        order.append("first")
        return "one"

    async def second(args, api, ctx):
        order.append("second")
        gate.set()
        return {"n": 2}

    tools = [durable.define_tool("first", "1", execute=first), durable.define_tool("second", "2", execute=second)]
    model = FauxModel([faux.reply("", tool_calls=[faux.call("first", {}, id="a"), faux.call("second", {}, id="b")]),
                       faux.reply("done")])
    async with host.open(model, settings=settings(), tools=tools) as h:
        assert await (await h.root.submit("both")).wait() == r.Answered("done", 5)
    assert order == ["second", "first"]
    assert model.requests[1].messages[-2:] == (r.ToolResultEntry("a", "first", "one"),
                                               r.ToolResultEntry("b", "second", '{"n": 2}'))


async def test_bad_calls_become_error_results_the_model_can_read(host):
    async def boom(args, api, ctx):
        raise RuntimeError("disk on fire")

    async def echo(args, api, ctx):
        return args["text"]

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    tools = [durable.define_tool("boom", "fails", execute=boom), durable.define_tool("echo", "echo", schema, execute=echo)]
    calls = [faux.call("echo", raw="{not json", id="a"), faux.call("echo", {"text": 5}, id="b"),
             faux.call("nope", {}, id="c"), faux.call("boom", {}, id="d")]
    model = FauxModel([faux.reply("", tool_calls=calls), faux.reply("ok")])
    async with host.open(model, settings=settings(), tools=tools) as h:
        assert await (await h.root.submit("try")).wait() == r.Answered("ok", 7)
    results = model.requests[1].messages[-4:]
    assert [(x.call_id, x.is_error, x.diagnostics[0].code) for x in results] == [
        ("a", True, "invalid_arguments"), ("b", True, "invalid_arguments"),
        ("c", True, "unknown_tool"), ("d", True, "tool_error")]
    assert results[0].content.startswith("Tool echo: the arguments are not valid JSON")
    assert results[1].content == "Tool echo: invalid arguments: $.text: 5 is not of type 'string' (keyword: type)"
    assert results[2].content == "Unknown tool nope (known tools: boom, echo)"
    assert results[3].content == "Tool boom failed: RuntimeError: disk on fire"


# --------------------------------------------------------------------------- client tools


def ask_user():
    return durable.define_tool("ask_user", "Ask the person", client=True)


async def test_a_client_tool_is_answered_after_a_restart_without_any_charge(host):
    model = FauxModel([faux.reply("", tool_calls=[faux.call("ask_user", {}, id="q1")])])
    async with host.open(model, settings=settings(), tools=[ask_user()]) as h:
        sub = await h.root.submit("ask me")
        await until_live(h, lambda live: [s.status for s in live.tools] == ["waiting"])
        crash(h)
    model = FauxModel([faux.reply("Thanks")])
    async with host.open(model, settings=settings(), tools=[ask_user()]) as h:
        assert [(t.id, t.state, t.restarts) for t in await h.tasks(state="waiting")] == [
            (1, r.Waiting(on=(2,)), 0), (2, r.Waiting(client=True), 0)]
        await h.submit_tool_result("q1", "yes")
        with pytest.raises(durable.ToolResultRejected, match="q1"):
            await h.submit_tool_result("q1", "again")
        with pytest.raises(durable.ToolResultRejected, match="zzz"):
            await h.submit_tool_result("zzz", "who")
        assert await h.root.submission(sub.id).wait() == r.Answered("Thanks", 4)
    assert model.requests[0].messages[-1] == r.ToolResultEntry("q1", "ask_user", "yes")
    assert host.reports == []


async def test_a_client_tool_times_out_at_its_stored_deadline_across_a_restart(host):
    model = FauxModel([faux.reply("", tool_calls=[faux.call("ask_user", {}, id="q1")])])
    st = settings(client_tool_timeout=300.0)
    async with host.open(model, settings=st, tools=[ask_user()]) as h:
        sub = await h.root.submit("ask me")
        deadline = await host.clock.wait_for_timer("client_tool:2")
        assert deadline == host.clock.now() + 300.0
        assert h.wake() == durable.Wake(False, deadline)
        crash(h)
    host.clock.advance(301.0)  # the host was down longer than the deadline
    model = FauxModel([faux.reply("No answer came")])
    async with host.open(model, settings=st, tools=[ask_user()]) as h:
        assert await h.root.submission(sub.id).wait() == r.Answered("No answer came", 4)
    assert model.requests[0].messages[-1] == r.ToolResultEntry(
        "q1", "ask_user", "Tool execution timed out", True, (r.Diagnostic("error", "timeout", "Tool execution timed out"),))
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "assistant:stop"]


async def test_a_result_for_a_tool_the_harness_runs_is_rejected(host):
    async def slow(args, api, ctx):
        await anyio.sleep_forever()

    model = FauxModel([faux.reply("", tool_calls=[faux.call("slow", {}, id="s1")])])
    async with host.open(model, settings=settings(), tools=[durable.define_tool("slow", "s", execute=slow)]) as h:
        await h.root.submit("go")
        await until_live(h, lambda live: len(live.tools) == 1)
        with pytest.raises(durable.ToolResultRejected, match="s1 \\(slow\\) is not a client tool call"):
            await h.submit_tool_result("s1", "x")


# --------------------------------------------------------------------------- deferred answers


def deferred_settings(**kw):
    return settings(stream=durable.StreamSettings(deferred=True), **kw)


async def crash_during_fetch(host, **kw):
    model = FauxModel([faux.hang()], deferred=True, poll_after=2.0)
    async with host.open(model, settings=deferred_settings(**kw)) as h:
        sub = await h.root.submit("think hard")
        await host.clock.wait_for_timer("poll:1")
        host.clock.advance(2.0)
        await model.wait_until(lambda: model.fetches == ["faux-job-1"])
        crash(h)
    assert model.submitted == ["faux-job-1"]
    return sub.id


FETCH_STOPPED_1 = "The host stopped while the deferred answer was fetched, on attempt 1"


async def test_a_crash_during_a_deferred_fetch_polls_the_same_job_again(host):
    sid = await crash_during_fetch(host)
    model = FauxModel([], deferred=True)
    model.adopt_job("faux-job-1", faux.reply("Deep answer"))
    async with host.open(model, settings=deferred_settings()) as h:
        await h.resume()
        until = await host.clock.wait_for_timer("retry:1")
        assert h.root.live().generation.retry == r.RetryLive(1, until, FETCH_STOPPED_1, "interrupted")
        host.clock.advance(1.0)
        assert await h.root.submission(sid).wait() == r.Answered("Deep answer", 2)
    assert (model.submitted, model.fetches, model.cancelled) == ([], ["faux-job-1"], [])
    assert await host.transcript() == ["user", "assistant:stop"]


async def test_without_retries_a_cut_off_fetch_ends_the_run_and_cancels_the_job_once(host):
    policy = durable.RetryPolicy(enabled=False)
    sid = await crash_during_fetch(host, retry=policy)
    model = FauxModel([], deferred=True)
    async with host.open(model, settings=deferred_settings(retry=policy)) as h:
        assert await h.root.submission(sid).wait() == r.Unanswered("interrupted", FETCH_STOPPED_1)
    assert (model.submitted, model.fetches, model.cancelled) == ([], [], ["faux-job-1"])


async def test_a_replacement_host_whose_clock_is_behind_still_charges_the_cut_off_fetch(host):
    policy = durable.RetryPolicy(enabled=False)
    sid = await crash_during_fetch(host, retry=policy)
    behind = FakeClock(start=host.clock.now() - 3600.0)
    model = FauxModel([], deferred=True)
    async with host.open(model, settings=deferred_settings(retry=policy), clock=behind) as h:
        assert await h.root.submission(sid).wait() == r.Unanswered("interrupted", FETCH_STOPPED_1)
    assert model.cancelled == ["faux-job-1"]


async def test_a_deferred_answer_is_polled_until_ready(host):
    model = FauxModel([faux.reply("Slow but sure")], deferred=True, poll_after=5.0, polls=2)
    async with host.open(model, settings=deferred_settings()) as h:
        sub = await h.root.submit("wait for it")
        for _ in range(2):
            until = await host.clock.wait_for_timer("poll:1")
            assert h.root.live().generation == r.GenerationLive(1, deferred=r.DeferredLive(until))
            host.clock.advance(5.0)
        assert await sub.wait() == r.Answered("Slow but sure", 2)
    assert (model.submitted, model.fetches) == (["faux-job-1"], ["faux-job-1", "faux-job-1"])
