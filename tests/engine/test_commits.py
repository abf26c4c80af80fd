"""What each step of a turn commits, and which commits are barriers (external synchrony).

A barrier is a commit that something outside the process depends on once it returns: the
submission's acknowledgement, a model request, an unsafe tool's start, a client tool handed to
the host, a settled result. Everything else is lazy (`[lazy]`: no fsync; a power cut may lose it,
and it is then redone as after a crash). The last tool of a round to end carries the round's
results and the next request in its own ending commit."""

from __future__ import annotations

import re

import anyio

import pytest

import durable
from durable.errors import CommitFailed
from durable.models import FauxModel, faux

from .conftest import settings, until_live

pytestmark = pytest.mark.anyio

# The default progress settings: an answer streamed within `persist_within` is never flushed.
QUICK = durable.Settings()


def _lines(history: list[str]) -> list[str]:
    return [re.sub(r"sub_[0-9a-f]+", "sub", line) for line in history]


async def _ok(args, api, ctx):
    return "ok"


def _tools():
    safe = durable.define_tool("step", "a step", replay="safe", execute=_ok)
    unsafe = durable.define_tool("send", "send something", execute=_ok)  # unsafe by default
    return [safe, unsafe]


async def test_a_turn_with_a_safe_round_and_an_unsafe_round_commits_two_times_a_step_and_fsyncs_once(host):
    script = [faux.reply("", tool_calls=[faux.call("step", {}, id="a"), faux.call("step", {}, id="b")]),
              faux.reply("", tool_calls=[faux.call("send", {}, id="c")]), faux.reply("done")]
    async with host.open(FauxModel(script), settings=QUICK, tools=_tools()) as h:
        sub = await h.root.submit("go")
        assert await sub.wait() == durable.Answered("done", 7)
    assert host.storage is not None
    history = _lines(host.storage.history)
    # Which of the two safe tools ends last is up to the scheduler: the other one's ending is lazy.
    last = 2 if history[2].startswith("task 3 ") else 3
    first = 5 - last
    assert history == [
        # The acknowledgement of the input is also the barrier before the first request.
        "task 1 generation running/request; entry root#1 user; submission sub queued; live root",
        f"task 2 tool running/tool_progress; task 3 tool running/tool_progress; task 1 generation waiting/tools; "
        f"entry root#2 assistant:tool_use; live root [lazy]",
        f"task {first} tool done/tool_progress; live root [lazy]",
        f"task {last} tool done/tool_progress; task 1 generation running/request; entry root#3 tool_result; "
        f"entry root#4 tool_result; live root",
        "task 4 tool pending/tool_progress; task 1 generation waiting/tools; entry root#5 assistant:tool_use; "
        "live root [lazy]",
        "task 4 tool running/tool_progress",  # the unsafe tool's intent is on disk before it runs
        "task 4 tool done/tool_progress; task 1 generation running/request; entry root#6 tool_result; live root",
        "task 1 generation done/request; entry root#7 assistant:stop; submission sub done; live root",
    ]


async def test_a_round_that_hands_a_client_tool_to_the_host_is_a_barrier(host):
    ask = durable.define_tool("ask_user", "Ask the person", client=True)
    script = [faux.reply("", tool_calls=[faux.call("ask_user", {}, id="q1")]), faux.reply("Thanks")]
    async with host.open(FauxModel(script), settings=QUICK, tools=[ask]) as h:
        sub = await h.root.submit("ask me")
        await until_live(h, lambda live: [s.status for s in live.tools] == ["waiting"])
        await h.submit_tool_result("q1", "yes")
        assert await sub.wait() == durable.Answered("Thanks", 4)
    assert host.storage is not None
    assert _lines(host.storage.history)[1:] == [
        "task 2 tool waiting/tool_progress; task 1 generation waiting/tools; entry root#2 assistant:tool_use; "
        "live root",
        "task 2 tool done/tool_progress; task 1 generation running/request; entry root#3 tool_result; live root",
        "task 1 generation done/request; entry root#4 assistant:stop; submission sub done; live root",
    ]


async def test_a_turn_without_tools_is_two_commits_when_compaction_is_not_needed(host):
    async with host.open(FauxModel([faux.reply("Hi!")]), settings=QUICK) as h:
        assert await (await h.root.submit("hello")).wait() == durable.Answered("Hi!", 2)
    assert host.storage is not None
    assert _lines(host.storage.history) == [
        "task 1 generation running/request; entry root#1 user; submission sub queued; live root",
        "task 1 generation done/request; entry root#2 assistant:stop; submission sub done; live root",
    ]


async def test_a_run_whose_context_must_be_compacted_first_moves_back_to_prepare_before_any_request(host):
    compacting = durable.Settings(compaction=durable.Compaction(threshold=0.0001, keep_last=1))
    script = [faux.reply("one"), faux.reply("Summary."), faux.reply("two")]
    model = FauxModel(script, context_window=1000)
    async with host.open(model, settings=compacting) as h:
        assert await (await h.root.submit("first " * 20)).wait() == durable.Answered("one", 2)
        assert await (await h.root.submit("second")).wait() == durable.Answered("two", 5)
    assert host.storage is not None
    history = _lines(host.storage.history)
    assert history[2:5] == [
        "task 2 generation running/request; entry root#3 user; submission sub queued; live root",
        "task 2 generation running/prepare; live root [lazy]",
        "task 3 compaction pending/-; live root",
    ]
    assert [len(r.messages) for r in model.requests] == [1, 3, 2]  # the summary request, then summary + kept


async def test_streamed_partial_answers_are_lazy_commits(host):
    script = [faux.reply("Hello there, friend")]
    async with host.open(FauxModel(script, token_size=6), settings=settings()) as h:
        assert await (await h.root.submit("hi")).wait() == durable.Answered("Hello there, friend", 2)
    assert host.storage is not None
    flushes = [line for line in host.storage.history if line.endswith("[lazy]")]
    assert flushes == ["live root [lazy]"] * len(flushes) and len(flushes) >= 3


async def test_the_last_tool_closes_the_round_only_once_a_refused_sibling_ending_is_written(host):
    """A sibling's ending refused by the store is tried again after a backoff; the last tool of
    the round must not write the round's close (which carries the sibling's result) before that
    ending is on the store: a crash in between would leave the sibling live with its result
    already in the context."""
    refused_once = anyio.Event()

    async def first(args, api, ctx):
        return "first"

    async def second(args, api, ctx):
        await refused_once.wait()  # ends while the first tool's ending waits to be tried again
        return "second"

    tools = [durable.define_tool("first", "ends first", replay="safe", execute=first),
             durable.define_tool("second", "ends second", replay="safe", execute=second)]
    script = [faux.reply("", tool_calls=[faux.call("first", {}, id="a"), faux.call("second", {}, id="b")]),
              faux.reply("done")]
    async with host.open(FauxModel(script), settings=QUICK, tools=tools) as h:
        assert host.storage is not None
        real_commit = host.storage.commit

        async def commit(batch):  # type: ignore[no-untyped-def]
            if not refused_once.is_set() and any(t.id == 2 and t.terminal for t in batch.tasks):
                refused_once.set()
                raise CommitFailed(f"A commit to {host.path} was refused: disk I/O error (injected)",
                                   location=host.path)
            await real_commit(batch)

        host.storage.commit = commit  # type: ignore[method-assign]
        sub = await h.root.submit("go")
        assert await sub.wait() == durable.Answered("done", 5)
    history = _lines(host.storage.history)
    assert history[1:] == [
        "task 2 tool running/tool_progress; task 3 tool running/tool_progress; task 1 generation waiting/tools; "
        "entry root#2 assistant:tool_use; live root [lazy]",
        "task 2 tool done/tool_progress; live root [lazy]",  # tried again, and written first
        "task 3 tool done/tool_progress; task 1 generation running/request; entry root#3 tool_result; "
        "entry root#4 tool_result; live root",
        "task 1 generation done/request; entry root#5 assistant:stop; submission sub done; live root",
    ]
    assert [type(e).__name__ for e in host.reports if type(e).__name__ == "ErrorReport"] == ["ErrorReport"]
    assert "Task 2 (tool) could not commit and will try again" in host.reports[
        [type(e).__name__ for e in host.reports].index("ErrorReport")].message


async def test_the_open_charge_and_the_backoff_are_lazy_and_made_durable_by_the_retry_request(host):
    """Reopening after a crash charges the cut-off request in a lazy commit, and the failed
    attempt's backoff is lazy too: nothing outside depends on them, and the commit that moves the
    retry to `request` (a barrier, before the request is sent) puts them on disk with it."""
    from .test_generation_crash import crash_while_streaming

    sid = await crash_while_streaming(host, "Hello wor")
    async with host.open(FauxModel([faux.reply("Hello world")]), settings=QUICK) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        assert await h.root.submission(sid).wait() == durable.Answered("Hello world", 3)
    assert host.storage is not None
    assert _lines(host.storage.history) == [
        "task 1 generation pending/request restarts=1 [lazy]",  # the open commit: one more restart
        "task 1 generation running/request restarts=1 [lazy]",
        # The charged attempt and its backoff, then the way back to the request: nothing is sent.
        "task 1 generation sleeping/retry; entry root#2 assistant:aborted; live root [lazy]",
        "task 1 generation running/prepare; live root [lazy]",
        "task 1 generation running/request; live root",  # the barrier: all of the above on disk
        "task 1 generation done/request; entry root#3 assistant:stop; submission sub done; live root",
    ]
