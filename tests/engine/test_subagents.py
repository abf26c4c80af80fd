"""Sub-agents (docs/spec.md §8): a tool call runs a child conversation in the same harness and
waits for it (`waiting`, never charged); the child's answer is the call's result, its usage rolls
up, the waiting call is never billed as tool runtime; stopping the parent stops the child; a
crash anywhere resumes both without running an unsafe tool twice; depth is limited."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import anyio
import attrs
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.storage import SQLiteStorage
from durable.tasks.generation.records import CALL_ABORTED, CALL_INTERRUPTED, RUN_ABORTED
from durable.tasks.tool import SUBAGENT_TOO_DEEP, SUBAGENT_UNANSWERED, TOOL_MAY_HAVE_RUN, Delegated

from .conftest import settings, until_live

pytestmark = pytest.mark.anyio

T0 = 1_000_000.0


def u(inp: int, out: int) -> r.Usage:
    return r.Usage(input_tokens=inp, output_tokens=out)


def totals(*models: tuple[str, int, int, int], tool_calls: int = 0, tool_seconds: float = 0.0) -> r.UsageTotals:
    return r.UsageTotals(tuple(r.ModelUsage(m, n, i, o) for m, n, i, o in models), tool_calls, tool_seconds)


async def transcript(path: str, cid: str) -> list[tuple[str, str]]:
    """(kind, text) of every entry of conversation `cid` in the file."""
    from durable.testing.crash import entry_kind

    store = SQLiteStorage(path)
    await store.open()
    try:
        out = []
        for e in await store.get_entries(cid):
            text = getattr(e.entry, "text", None)
            out.append((entry_kind(e.entry), text if text is not None else e.entry.content))
        return out
    finally:
        await store.close()


def team(clock, notes, *, gate=None, started=None):
    """A researcher (no tools, model `faux-small`) and a writer (the unsafe tool `save_note`,
    which works 2 s of the clock, model `faux-writer`); the parent calls both at once."""

    async def save_note(text: str) -> str:
        notes.append(text)
        if started is not None:
            started.set()
        if gate is not None:
            await gate.wait()
        clock.advance(2.0)
        return f"saved {text}"

    save = durable.define_tool("save_note", "Save a note (not safe to repeat)", execute=save_note)
    research = FauxModel([faux.reply("X is 42.", usage=u(7, 3))], name="faux-small")
    writing = FauxModel([faux.reply("", tool_calls=[faux.call("save_note", {"text": "X=42"}, id="w1")], usage=u(8, 4)),
                         faux.reply("Saved.", usage=u(9, 2))], name="faux-writer")
    tools = [durable.subagent("researcher", "Finds facts", instructions="You research.", model=research),
             durable.subagent("writer", "Writes notes", instructions="You write.", tools=[save], model=writing)]
    parent = FauxModel([faux.reply("Delegating.", usage=u(10, 5), tool_calls=[
        faux.call("researcher", {"task": "find X"}, id="c1"), faux.call("writer", {"task": "note X"}, id="c2")]),
        faux.reply("Both done.", usage=u(20, 3))])
    return parent, tools, research, writing


PARENT_DONE = [("user", "go"), ("assistant:tool_use", "Delegating."), ("tool_result", "X is 42."),
               ("tool_result", "Saved."), ("assistant:stop", "Both done.")]
RESEARCHER_DONE = [("user", "find X"), ("assistant:stop", "X is 42.")]
WRITER_DONE = [("user", "note X"), ("assistant:tool_use", ""), ("tool_result", "saved X=42"),
               ("assistant:stop", "Saved.")]
CHILD_USAGE = {"root/researcher-2": totals(("faux-small", 1, 7, 3)),
               "root/writer-3": totals(("faux-writer", 2, 17, 6), tool_calls=1, tool_seconds=2.0)}
# The parent's own two requests and two calls, and its children's usage rolled up; the 2 s its
# sub-agent calls waited are not billed again (only the writer's tool, once).
ROOT_OWN = totals(("faux", 2, 30, 8), tool_calls=2)
ROOT_USAGE = totals(("faux", 2, 30, 8), ("faux-small", 1, 7, 3), ("faux-writer", 2, 17, 6), tool_calls=3,
                    tool_seconds=2.0)


def in_order(usage: r.UsageTotals) -> r.UsageTotals:
    """The totals with their models by name (which child's first request was counted first is
    up to the scheduler: both children start at once)."""
    return attrs.evolve(usage, models=tuple(sorted(usage.models, key=lambda m: m.model)))


@attrs.define
class Work:
    """The team at work: the parent's input, the writer's unsafe tool held at `gate`."""

    notes: list[str]
    gate: anyio.Event
    parent: FauxModel
    tools: list[durable.Tool]
    research: FauxModel
    writing: FauxModel


@asynccontextmanager
async def writer_at_work(host):
    """A harness on the team, its parent run ("go") submitted and the writer's unsafe tool running
    (the researcher answered, both calls of the parent wait)."""
    notes: list[str] = []
    gate, started = anyio.Event(), anyio.Event()
    work = Work(notes, gate, *team(host.clock, notes, gate=gate, started=started))
    async with host.open(work.parent, settings=settings(), tools=work.tools) as h:
        sub = await h.root.submit("go")
        await started.wait()
        # The writer's tool may start before the researcher's answer is committed: wait for both.
        await until_live(h, lambda lv: [s.status for s in lv.tools] == ["done", "waiting"])
        yield h, sub, work


async def test_two_subagents_answer_the_parents_calls_their_usage_rolls_up_and_tool_runtime_is_billed_once(host):
    async with writer_at_work(host) as (h, sub, w):
        live = await until_live(h, lambda lv: [s.status for s in lv.tools] == ["done", "waiting"])
        assert live.tools == (r.ToolSlot("c1", "researcher", 2, status="done", conversation="root/researcher-2"),
                              r.ToolSlot("c2", "writer", 3, status="waiting", conversation="root/writer-3"))
        waiting = await h.task(3)
        assert (waiting.state, waiting.checkpoint) == (r.Waiting(), Delegated("root/writer-3", "subagent-3", T0))
        writer = h.conversation("root/writer-3").live()
        assert writer.parent == r.ParentCall("root", 3, "c2", "writer", 1)
        assert writer.tools == (r.ToolSlot("w1", "save_note", 6, status="running"),)
        w.gate.set()
        assert await sub.wait() == r.Answered("Both done.", 5)
        for cid, usage in CHILD_USAGE.items():
            assert h.conversation(cid).usage() == usage
        assert in_order(h.root.usage()) == ROOT_USAGE
        assert in_order(h.usage()) == ROOT_USAGE  # every conversation counted once
        assert h.root.live().usage == ROOT_OWN  # its own document: the waits are never billed
        assert attrs.evolve(h.root.live(), usage=r.EMPTY_USAGE) == r.Live()
    assert w.notes == ["X=42"]
    assert await transcript(host.path, "root") == PARENT_DONE
    assert await transcript(host.path, "root/researcher-2") == RESEARCHER_DONE
    assert await transcript(host.path, "root/writer-3") == WRITER_DONE
    # Each child asked its own model, with its own instructions and tools.
    assert [m.name for m in w.research.requests[0].tools] == []
    assert [m.name for m in w.writing.requests[0].tools] == ["save_note"]
    assert w.writing.requests[0].system == "You are a helpful assistant.\n\nYou write."
    assert [t.name for t in w.parent.requests[0].tools] == ["researcher", "writer"]


async def test_a_crash_while_the_childs_unsafe_tool_runs_resumes_both_without_running_it_again(host):
    async with writer_at_work(host) as (h, sub, w):
        h.abandon()  # a crash: nothing more is written
    assert host.storage is not None
    await host.storage.release()
    async with host.open(w.parent, settings=settings(), tools=w.tools) as h:
        assert await h.root.submission(sub.id).wait() == r.Answered("Both done.", 5)
    assert w.notes == ["X=42"]  # not run a second time
    cut = TOOL_MAY_HAVE_RUN.format(tool="save_note")
    assert await transcript(host.path, "root/writer-3") == [
        ("user", "note X"), ("assistant:tool_use", ""), ("tool_result:error", cut), ("assistant:stop", "Saved.")]
    assert await transcript(host.path, "root") == PARENT_DONE


async def test_an_abort_of_the_parent_stops_the_child_and_its_unsafe_tool(host):
    async with writer_at_work(host) as (h, sub, w):
        await h.root.abort()
        assert await sub.wait() == r.Unanswered("aborted", RUN_ABORTED)
        child = await h.conversation("root/writer-3").submission("subagent-3").wait()
        assert child == r.Unanswered("aborted", RUN_ABORTED)
        assert h.conversation("root/writer-3").live().run is None
        assert [t.id for t in await h.tasks(state="waiting")] == []
    assert w.notes == ["X=42"]
    assert await transcript(host.path, "root") == [
        ("user", "go"), ("assistant:tool_use", "Delegating."), ("tool_result", "X is 42."),
        ("tool_result:error", CALL_ABORTED)]
    assert await transcript(host.path, "root/writer-3") == [
        ("user", "note X"), ("assistant:tool_use", ""), ("tool_result:error", CALL_ABORTED)]


async def test_an_abort_of_the_childs_run_ends_the_parents_call_with_an_error_result_naming_why(host):
    async with writer_at_work(host) as (h, sub, _):
        await h.conversation("root/writer-3").abort()
        assert await sub.wait() == r.Answered("Both done.", 5)
    message = SUBAGENT_UNANSWERED.format(tool="writer", conversation="root/writer-3", reason="aborted",
                                         detail=RUN_ABORTED)
    assert message == ("Sub-agent writer (conversation 'root/writer-3') ended without an answer (aborted): "
                       "The run was aborted")
    assert await transcript(host.path, "root") == [
        ("user", "go"), ("assistant:tool_use", "Delegating."), ("tool_result", "X is 42."),
        ("tool_result:error", message), ("assistant:stop", "Both done.")]


async def test_a_subagent_past_the_depth_limit_is_not_started_and_the_error_names_the_depth(host):
    inner = durable.subagent("inner", "Goes deeper", model=FauxModel([faux.reply("never")], name="inner"))
    outer_model = FauxModel([faux.reply("", tool_calls=[faux.call("inner", {"task": "deeper"}, id="i1")]),
                             faux.reply("Could not go deeper.")], name="outer")
    outer = durable.subagent("outer", "Delegates again", tools=[inner], model=outer_model)
    parent = FauxModel([faux.reply("", tool_calls=[faux.call("outer", {"task": "dig"}, id="o1")]),
                        faux.reply("Done.")])
    assert durable.Settings().subagent_depth == 3
    async with host.open(parent, settings=settings(subagent_depth=1), tools=[outer]) as h:
        assert await (await h.root.submit("dig deep")).wait() == r.Answered("Done.", 4)
    message = SUBAGENT_TOO_DEEP.format(tool="inner", conversation="root/outer-2", depth=1, limit=1)
    assert message == ("Sub-agent inner was not started: conversation 'root/outer-2' is at depth 1, and sub-agents "
                       "may nest 1 deep (settings.subagent_depth)")
    assert await transcript(host.path, "root/outer-2") == [
        ("user", "dig"), ("assistant:tool_use", ""), ("tool_result:error", message),
        ("assistant:stop", "Could not go deeper.")]
    assert await transcript(host.path, "root") == [
        ("user", "dig deep"), ("assistant:tool_use", ""), ("tool_result", "Could not go deeper."),
        ("assistant:stop", "Done.")]


@attrs.frozen
class Fact:
    name: str
    value: int


async def test_a_structured_subagent_answers_its_call_with_json_text(host):
    child = FauxModel([faux.reply('{"name": "X", "value": 42}')], name="facts")
    facts = durable.subagent("facts", "Returns a fact", output=Fact, model=child)
    parent = FauxModel([faux.reply("", tool_calls=[faux.call("facts", {"task": "X?"}, id="f1")]),
                        faux.reply("X is 42.")])
    async with host.open(parent, settings=settings(), tools=[facts]) as h:
        assert await (await h.root.submit("what is X")).wait() == r.Answered("X is 42.", 4)
    assert child.requests[0].output is not None
    assert parent.requests[1].messages[-1] == r.ToolResultEntry("f1", "facts", json.dumps({"name": "X", "value": 42}))


async def test_an_interrupt_of_the_parent_stops_the_child(host):
    async with writer_at_work(host) as (h, first, w):
        second = await h.root.submit("never mind", when_busy="interrupt")
        assert (await first.wait()).reason == "interrupted"
        assert await h.conversation("root/writer-3").submission("subagent-3").wait() == r.Unanswered(
            "aborted", RUN_ABORTED)
        assert await second.wait() == r.Answered("Both done.", 6)  # the faux script's next step
    assert w.notes == ["X=42"]
    assert await transcript(host.path, "root") == [
        ("user", "go"), ("assistant:tool_use", "Delegating."), ("tool_result", "X is 42."),
        ("tool_result:error", CALL_INTERRUPTED), ("user", "never mind"), ("assistant:stop", "Both done.")]
    assert await transcript(host.path, "root/writer-3") == [
        ("user", "note X"), ("assistant:tool_use", ""), ("tool_result:error", CALL_ABORTED)]


async def test_a_call_waiting_for_its_child_survives_a_clean_close_uncharged(host):
    async with writer_at_work(host) as (h, sub, w):
        pass  # a clean close while the writer's unsafe tool runs
    waiting = await _task(host.path, 3)
    assert (waiting.state, waiting.restarts) == (r.Waiting(), 0)
    w.gate.set()
    async with host.open(w.parent, settings=settings(), tools=w.tools) as h:
        assert await h.root.submission(sub.id).wait() == r.Answered("Both done.", 5)
        assert (await h.task(3)).restarts == 0
    assert w.notes == ["X=42"]  # cut off by the close: "may have partially run", not run again
    assert (await transcript(host.path, "root/writer-3"))[2] == ("tool_result:error",
                                                                 TOOL_MAY_HAVE_RUN.format(tool="save_note"))


async def _task(path: str, task_id: int) -> r.Task:
    store = SQLiteStorage(path)
    await store.open()
    try:
        task = await store.get_task(task_id)
        assert task is not None
        return task
    finally:
        await store.close()
