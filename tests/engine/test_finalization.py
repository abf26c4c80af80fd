"""A turn leaves no async generator to the garbage collector: one that is would be finalized
through the event loop (on trio a thread-safe wake-up and a loop pass each; on asyncio a task
each), which once cost about a third of the engine's CPU a step."""

from __future__ import annotations

import gc
import sys

import pytest

import durable
from durable.models import FauxModel, faux
from durable.storage import MemoryStorage

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["trio", "asyncio"])
def anyio_backend(request):
    return request.param


async def test_turns_with_tool_rounds_leave_no_async_generator_to_the_garbage_collector():
    async def step(args, api, ctx):
        await api.output("working")
        return "ok"

    tool = durable.define_tool("step", "a step", replay="safe", execute=step)
    script = []
    for _ in range(5):
        script += [faux.reply("", tool_calls=[faux.call("step", {})]), faux.reply("done")]
    firstiter, finalizer = sys.get_asyncgen_hooks()
    finalized: list[str] = []

    def counting(agen):  # type: ignore[no-untyped-def]
        finalized.append(getattr(agen, "__qualname__", repr(agen)))
        if finalizer is not None:
            finalizer(agen)

    sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=counting)
    try:
        async with durable.open_harness(MemoryStorage(), model=FauxModel(script), tools=[tool]) as h:
            for i in range(5):
                assert await (await h.conversation(f"c{i}").submit("go")).wait() == durable.Answered("done", 4)
        gc.collect()
    finally:
        sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)
    assert finalized == []
