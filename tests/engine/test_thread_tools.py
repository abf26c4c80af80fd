"""Plain `def` tools run in a worker thread (durable.tools.threads): their result, their exception as
an error result, their context and streamed output, their timeout (the call abandoned, answered as
cut off mid-run whatever its replay policy), and a clean close while the thread runs."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux

from .conftest import settings

pytestmark = pytest.mark.anyio

BACKENDS = pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])


def round_with(name: str, arguments: Any = None) -> FauxModel:
    return FauxModel([faux.reply("", tool_calls=[faux.call(name, arguments or {}, id="c1")]), faux.reply("ok")])


def results(entries: list[Any]) -> list[tuple[str, bool]]:
    return [(e.content, e.is_error) for e in entries if isinstance(e, r.ToolResultEntry)]


@BACKENDS
async def test_a_plain_def_tool_runs_off_the_event_loop_thread_and_its_value_is_the_result(host, anyio_backend):
    threads: list[int] = []

    @durable.tool
    def add(a: int, b: int, ctx: durable.ToolContext) -> dict[str, int]:
        """Add two numbers."""
        threads.append(threading.get_ident())
        return {"sum": a + b, "task": ctx.task_id}

    assert add.threaded and add.parameters["required"] == ["a", "b"]
    async with host.open(round_with("add", {"a": 2, "b": 3}), tools=[add], settings=settings()) as h:
        assert await (await h.root.submit("hi")).answer() == "ok"
        loop_thread = threading.get_ident()
    assert len(threads) == 1 and threads[0] != loop_thread
    assert results(await host.entries()) == [('{"sum": 5, "task": 2}', False)]


@BACKENDS
async def test_a_plain_def_tools_exception_is_an_error_result_the_model_reads(host, anyio_backend):
    @durable.tool
    def boom() -> str:
        """Fail."""
        raise ValueError("bad input")

    async with host.open(round_with("boom"), tools=[boom], settings=settings()) as h:
        assert await (await h.root.submit("hi")).answer() == "ok"
    assert results(await host.entries()) == [("Tool boom failed: ValueError: bad input", True)]


async def test_a_raw_plain_def_tool_streams_output_from_its_thread(host):
    def shout(args: Any, api: durable.ToolApi, ctx: durable.ToolContext) -> str:
        api.output_sync("working ")
        api.output_sync("hard")
        return str(args["word"]).upper()

    tool = durable.define_tool("shout", "Shout.", {"type": "object", "properties": {"word": {"type": "string"}}},
                               execute=shout)
    async with host.open(round_with("shout", {"word": "hey"}), tools=[tool], settings=settings()) as h:
        sub = await h.root.submit("hi")
        events = [e async for e in sub.stream()]
    assert [e for e in events if isinstance(e, durable.ToolOutputEvent)] == [
        durable.ToolOutputEvent("c1", "shout", "working "), durable.ToolOutputEvent("c1", "shout", "hard")]
    assert results(await host.entries()) == [("HEY", False)]


@BACKENDS
async def test_a_plain_def_tool_past_its_timeout_is_abandoned_and_answered_as_cut_off(host, anyio_backend):
    started, release, ended = threading.Event(), threading.Event(), threading.Event()
    late: list[str] = []

    @durable.tool(replay="safe", timeout=5)
    def slow(api: durable.ToolApi) -> str:
        """Block until released."""
        started.set()
        release.wait()
        try:
            api.output_sync("too late")  # the call was abandoned: dropped
            late.append("taken")
        except BaseException as exc:
            late.append(repr(exc))
        finally:
            ended.set()
        return "done"

    async with host.open(round_with("slow"), tools=[slow], settings=settings()) as h:
        sub = await h.root.submit("hi")
        await host.clock.wait_for_timer("tool_timeout:2")
        await anyio.to_thread.run_sync(started.wait)  # its thread runs (a call cancelled before never runs)
        host.clock.advance(5)
        assert await sub.answer() == "ok"  # answered while the thread still blocks
        release.set()
        await anyio.to_thread.run_sync(ended.wait)
        task = await h.task(2)
    assert results(await host.entries()) == [("Tool slow timed out after 5 s and may have partially run", True)]
    assert task.checkpoint.output == ""
    assert late == ["taken"]  # taken, and dropped: the call had ended


async def test_a_plain_def_tool_cut_off_by_a_clean_close_is_not_run_again(host):
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []

    @durable.tool(replay="safe")
    def wait_here() -> str:
        """Block until released."""
        runs.append(1)
        started.set()
        release.wait()
        return "done"

    async with host.open(round_with("wait_here"), tools=[wait_here], settings=settings()) as h:
        await h.root.submit("hi")
        await anyio.to_thread.run_sync(started.wait)
    # closed cleanly while its thread ran on
    async with host.open(FauxModel([faux.reply("ok")]), tools=[wait_here], settings=settings()) as h:
        await h.resume()
        live = await h.root.submission((await h.root.entries())[0].entry.submission_id).wait()
        assert live == r.Answered("ok", 4)
    release.set()
    assert runs == [1]
    assert results(await host.entries()) == [("Tool wait_here was interrupted and may have partially run", True)]


@BACKENDS
async def test_an_abort_abandons_a_plain_def_tools_thread_and_answers_the_call_at_once(host, anyio_backend):
    started, release, ended = threading.Event(), threading.Event(), threading.Event()

    @durable.tool
    def stuck() -> str:
        """Block until released."""
        started.set()
        release.wait()
        ended.set()
        return "done"

    async with host.open(round_with("stuck"), tools=[stuck], settings=settings()) as h:
        sub = await h.root.submit("hi")
        await anyio.to_thread.run_sync(started.wait)
        await h.root.abort()
        assert await sub.wait() == r.Unanswered("aborted", "The run was aborted")
        assert not ended.is_set()  # answered while its thread still runs
        release.set()
        await anyio.to_thread.run_sync(ended.wait)
    assert results(await host.entries()) == [("The tool call was aborted", True)]
