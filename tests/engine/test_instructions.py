"""Instructions: sections after `settings.system_prompt`, strings or async functions of a
`PrepareContext`. Static ones cost nothing (no prepare commit); with a dynamic one a run starts
in `prepare`, runs the sections once and commits their text with the move to `request`, so every
attempt and tool round of the run (and a process that reopens it) sends the same text, and a new
run assembles them afresh. A section that raises or runs out of time ends the run
`unanswered{prepare_failed}` naming it; a death in prepare is charged in prepare."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.tasks.generation.records import Prepare, Request, RunNotes
from durable.testing import check_invariants, crash

from .conftest import partial_is, settings, until_live, used

pytestmark = pytest.mark.anyio

SYSTEM = "You are a helpful assistant."
QUICK = durable.Settings()  # an answer streamed within `persist_within` is never flushed: the commits are the turn's


def _lines(history: list[str]) -> list[str]:
    return [re.sub(r"sub_[0-9a-f]+", "sub", line) for line in history]


async def test_static_sections_are_joined_after_the_system_prompt_and_cost_no_commit(host):
    model = FauxModel([faux.reply("Hi")])
    async with host.open(model, settings=QUICK, instructions=["Be brief.", "", "Answer in English."]) as h:
        assert await (await h.root.submit("hello")).wait() == r.Answered("Hi", 2)
    assert model.requests[0].system == f"{SYSTEM}\n\nBe brief.\n\nAnswer in English."
    assert _lines(host.storage.history) == [
        "task 1 generation running/request; entry root#1 user; submission sub queued; live root",
        "task 1 generation done/request; entry root#2 assistant:stop; submission sub done; live root",
    ]


async def test_without_sections_the_system_prompt_is_sent_as_it_is(host):
    model = FauxModel([faux.reply("Hi")])
    async with host.open(model, settings=settings(system_prompt="Terse.")) as h:
        await (await h.root.submit("hello")).wait()
    assert model.requests[0].system == "Terse."


async def test_a_dynamic_section_runs_in_prepare_with_the_run_and_costs_one_commit(host):
    seen: list[durable.PrepareContext[dict[str, str]]] = []

    async def profile(ctx: durable.PrepareContext[dict[str, str]]) -> str:
        seen.append(ctx)
        return f"The user is {ctx.deps['name']}."

    model = FauxModel([faux.reply("Hi Ada")])
    async with host.open(model, settings=QUICK, instructions=["Be brief.", profile], deps={"name": "Ada"}) as h:
        sub = await h.root.submit("hello")
        assert await sub.wait() == r.Answered("Hi Ada", 2)
    text = f"{SYSTEM}\n\nBe brief.\n\nThe user is Ada."
    assert model.requests[0].system == text
    assert seen == [durable.PrepareContext("root", 1, ("hello",), (sub.id,), {"name": "Ada"}, host.clock.now())]
    assert _lines(host.storage.history) == [
        "task 1 generation running/prepare; entry root#1 user; submission sub queued; live root",
        "task 1 generation running/request; live root",  # the instructions, committed: then the request
        "task 1 generation done/request; entry root#2 assistant:stop; submission sub done; live root",
    ]


async def test_a_retried_attempt_and_the_next_tool_round_send_the_same_text_and_a_new_run_assembles_afresh(host):
    calls = []

    async def counter(ctx: durable.PrepareContext) -> str:
        calls.append(ctx.task_id)
        return f"Section call {len(calls)}."

    async def lookup(args, api, ctx):
        return "42"

    tools = [durable.define_tool("lookup", "looks up", replay="safe", execute=lookup)]
    model = FauxModel([faux.error("Overloaded", kind="overloaded", status_code=529),
                       faux.reply("", tool_calls=[faux.call("lookup", {})]), faux.reply("It is 42."),
                       faux.reply("Second run.")])
    async with host.open(model, tools=tools, settings=settings(), instructions=[counter]) as h:
        sub = await h.root.submit("what is it?")
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1)
        assert await sub.wait() == r.Answered("It is 42.", 4)
        assert await (await h.root.submit("again")).wait() == r.Answered("Second run.", 6)
    first, second = f"{SYSTEM}\n\nSection call 1.", f"{SYSTEM}\n\nSection call 2."
    assert [(q.attempt, q.system) for q in model.requests] == [(1, first), (2, first), (1, first), (1, second)]
    assert calls == [1, 3]  # once per run (task 2 was the tool call)


async def test_a_process_that_reopens_a_run_sends_the_committed_text_without_running_the_section(host):
    async def first(ctx: durable.PrepareContext) -> str:
        return "Written by the first process."

    async def second(ctx: durable.PrepareContext) -> str:
        raise AssertionError("a run whose instructions are committed does not assemble them again")

    async with host.open(FauxModel([faux.hang("Hel")]), settings=settings(), instructions=[first]) as h:
        sub = await h.root.submit("hello")
        await until_live(h, partial_is("Hel"))
        task = await h.task(1)
        assert task.checkpoint == Request(1, {}, 0, RunNotes(f"{SYSTEM}\n\nWritten by the first process."))
        crash(h)
    model = FauxModel([faux.reply("Hello")])
    async with host.open(model, settings=settings(), instructions=[second]) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1)
        assert await h.root.submission(sub.id).wait() == r.Answered("Hello", 3)
    assert model.requests[0].system == f"{SYSTEM}\n\nWritten by the first process."


async def test_a_section_that_raises_ends_the_run_prepare_failed_naming_it_and_nothing_is_sent(host):
    async def user_profile(ctx: durable.PrepareContext) -> str:
        raise ConnectionError("the profile service is down")

    model = FauxModel([faux.reply("never")])
    async with host.open(model, settings=settings(), instructions=["Be brief.", user_profile]) as h:
        sub = await h.root.submit("hello")
        name = user_profile.__qualname__
        detail = f"Instruction section {name} failed: ConnectionError: the profile service is down"
        assert await sub.wait() == r.Unanswered("prepare_failed", detail)
        task = await h.task(1)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(detail, r.ErrorDetail("prepare_failed"))))
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sub.id,), "prepare_failed", detail, "hello"))
    assert model.calls == 0
    assert await host.transcript() == ["user"]
    assert [(x.message, x.topic) for x in host.reports] == [(f"Task 1: {detail}", "task")]


async def test_a_section_that_returns_no_string_or_never_finishes_fails_the_prepare(host):
    async def number(ctx: durable.PrepareContext) -> str:
        return 42  # type: ignore[return-value]

    async def forever(ctx: durable.PrepareContext) -> str:
        await anyio.sleep_forever()
        return ""

    model = FauxModel([])
    async with host.open(model, settings=settings(prepare_timeout=0.05), instructions=[number]) as h:
        sub = await h.root.submit("one")
        assert await sub.wait() == r.Unanswered(
            "prepare_failed", f"Instruction section {number.__qualname__} failed: TypeError: it returned a int, "
                              f"not a string")
    async with host.open(model, settings=settings(prepare_timeout=0.05), instructions=[forever]) as h:
        sub = await h.root.submit("two")
        assert await sub.wait() == r.Unanswered(
            "prepare_failed", f"Instruction section {forever.__qualname__} did not finish within 0.05 s "
                              f"(settings.prepare_timeout)")
    assert model.calls == 0


async def test_a_crash_in_prepare_is_charged_in_prepare_and_runs_the_sections_again(host):
    started = anyio.Event()

    async def slow(ctx: durable.PrepareContext) -> str:
        started.set()
        await anyio.sleep_forever()
        return ""

    async def quick(ctx: durable.PrepareContext) -> str:
        return "Quick."

    async with host.open(FauxModel([]), settings=settings(), instructions=[slow]) as h:
        sub = await h.root.submit("hello")
        await started.wait()
        crash(h)
    model = FauxModel([faux.reply("Hi")])
    async with host.open(model, settings=settings(), instructions=[quick]) as h:
        task = await h.task(1)
        assert (task.state, task.restarts, task.checkpoint) == (r.Pending(), 1, Prepare(1))
        assert await h.root.submission(sub.id).wait() == r.Answered("Hi", 2)
    assert model.requests[0].system == f"{SYSTEM}\n\nQuick."
    assert [(x.reason, x.restarts, x.detail) for x in host.reports] == [
        ("interrupted", 1, "The prepare phase runs again")]


SEED_CHILD = """
import sys, anyio, durable
from durable.models import FauxModel

async def never_finishes(ctx: durable.PrepareContext) -> str:
    print("in the section", ctx.task_id, ctx.submission_ids[0], flush=True)
    await anyio.sleep_forever()
    return ""

async def main():
    async with durable.open_harness(sys.argv[1], model=FauxModel([]), instructions=[never_finishes],
                                    settings=durable.Settings(restart_limit=1)) as h:
        await h.root.submit("Plan my day")
        await anyio.sleep_forever()

anyio.run(main, backend="trio")
"""


async def test_the_seed_scenario_a_process_killed_in_a_section_that_never_finishes_at_restart_limit_1(
        tmp_path: Path):
    path = tmp_path / "s.sqlite"
    child = subprocess.Popen([sys.executable, "-c", SEED_CHILD, str(path)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    try:
        said, task_id, sid = child.stdout.readline().rsplit(" ", 2)
        assert (said, task_id) == ("in the section", "1")
        sid = sid.strip()
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
    model = FauxModel([])
    reports: list[durable.Report] = []
    detail = "The generation was interrupted once in its prepare phase"

    async def unused(ctx: durable.PrepareContext) -> str:
        raise AssertionError("a run at the restart limit is not prepared again")

    async with durable.open_harness(path, model=model, instructions=[unused], report=reports.append,
                                    settings=durable.Settings(restart_limit=1)) as h:
        assert await h.root.submission(sid).wait() == r.Unanswered("restart_limit", detail)
        task = await h.task(1)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(detail, r.ErrorDetail("restart_limit"))))
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sid,), "restart_limit", detail, "Plan my day"))
        assert h.root.usage() == used()  # no request was ever counted
    assert model.calls == 0  # no model request ever made
    assert reports == [durable.TaskInterrupted(durable.TaskRef(1, "generation", "root"), "restart_limit", 1, detail)]
    assert check_invariants(path, clean_close=True, quiescent=True) == []
