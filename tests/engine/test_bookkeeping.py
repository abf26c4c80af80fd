"""A harness's bookkeeping does not grow with settled work (issue 29): after turns that ended
(answered, with tool rounds), its maps of tasks, submissions, commits, waiters and timers hold
nothing of them, and run again over the same conversations they hold exactly as many entries as
after the first round. A long-running app must be able to take turns for ever."""

from __future__ import annotations

import anyio
import pytest

import durable
from durable.models import FauxModel, faux

pytestmark = pytest.mark.anyio

CONVERSATIONS = 6


async def _lookup(args, api, ctx):
    return "42"


def counts(h: durable.Harness) -> dict[str, int]:
    """How many entries each map of the harness holds (per task, submission, commit, conversation)."""
    s = h._session
    return {
        "tasks": len(s.tasks), "ended_children": len(s.ended_children), "submissions": len(s.submissions),
        "durable commits": len(s._durable), "ending": len(s._ending), "settling": len(s._settling),
        "task waiters": len(s._task_done), "settled waiters": len(s._settled), "placing": len(s._placing),
        "refused": len(s._refused), "followers": len(s._followers), "runners": len(h._scheduler._runners),
        "timers": len(h.clock.timers) if hasattr(h.clock, "timers") else 0, "blobs": len(h._rt._blobs),
        "conversations": len(s.convs), "queued": sum(len(c.queued) for c in s.convs.values()),
        "contexts used": len(s.idle._used),
    }


async def a_round(h: durable.Harness) -> None:
    """One turn with a tool round on each conversation, at once; each waited for, then followed."""
    async def one(i: int) -> None:
        conv = h.conversation(f"c{i}")
        sub = await conv.submit(f"question {i}")
        assert await sub.answer() == "It is 42."
        assert isinstance(await sub.wait(), durable.Answered)

    async with anyio.create_task_group() as tg:
        for i in range(CONVERSATIONS):
            tg.start_soon(one, i)


async def test_the_maps_of_a_harness_hold_nothing_of_settled_turns(host):
    lookup = durable.define_tool("lookup", "Look up", replay="safe", execute=_lookup)
    steps = [faux.reply("Let me look.", tool_calls=[faux.call("lookup", {})]), faux.reply("It is 42.")]
    model = FauxModel(steps * (CONVERSATIONS * 4), tokens_per_second=None)
    async with host.open(model, tools=[lookup], settings=durable.Settings(keep_idle_context=0)) as h:
        await a_round(h)
        after_one = counts(h)
        assert after_one == {**dict.fromkeys(after_one, 0), "conversations": CONVERSATIONS,
                             "contexts used": after_one["contexts used"]}
        assert 1 <= after_one["contexts used"] <= CONVERSATIONS
        for _ in range(3):
            await a_round(h)
        assert counts(h) == after_one


async def test_waiting_for_an_ended_task_again_and_again_holds_nothing(host):
    lookup = durable.define_tool("lookup", "Look up", replay="safe", execute=_lookup)
    steps = [faux.reply("Let me look.", tool_calls=[faux.call("lookup", {})]), faux.reply("It is 42.")]
    model = FauxModel(steps, tokens_per_second=None)
    async with host.open(model, tools=[lookup]) as h:
        sub = await h.root.submit("question")
        assert isinstance(await sub.wait(), durable.Answered)
        for task_id in (1, 2) * 50:  # the generation and its tool, both ended
            assert (await h.wait_for_task(task_id)).terminal
        assert counts(h)["task waiters"] == 0
