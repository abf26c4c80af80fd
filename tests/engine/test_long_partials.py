"""A partial answer or tool output long enough to be kept apart from its row (issue 25, item 1:
`durable.storage.texts`) behaves as a short one across a crash: what was committed of it is what
recovery keeps, whole, and what the live document showed."""

from __future__ import annotations

import anyio
import attrs
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.storage.texts import LONG
from durable.testing import crash

from .conftest import partial_is, settings, until_live

pytestmark = pytest.mark.anyio

LONG_TEXT = "".join(f"sentence {i} of a long partial answer. " for i in range(400))  # ~15 kB
HOST_STOPPED_1 = "The host stopped while the model was answering, on attempt 1"


async def test_a_long_partial_cut_off_by_a_crash_is_kept_whole_as_the_aborted_attempt(host):
    assert len(LONG_TEXT) > 10 * LONG
    async with host.open(FauxModel([faux.hang(LONG_TEXT)]), settings=settings()) as h:
        sub = await h.root.submit("hi")
        await until_live(h, partial_is(LONG_TEXT))
        crash(h)
    async with host.open(FauxModel([faux.reply("Done.")]), settings=settings()) as h:
        assert h.root.live().generation is not None  # reopened: the committed partial, whole
        assert h.root.live().generation.message.text == LONG_TEXT
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("Done.", 3)
        assert attrs.evolve(h.root.live(), usage=r.UsageTotals()) == r.Live()  # settled (usage totals kept)
    entries = await host.entries()
    assert (entries[1].text, entries[1].stop_reason, entries[1].error) == (LONG_TEXT, "aborted", HOST_STOPPED_1)


async def test_an_unsafe_tools_long_output_cut_off_by_a_crash_is_kept_whole_in_its_error_result(host):
    started = anyio.Event()

    async def long_running(args, api, ctx):
        for i in range(0, len(LONG_TEXT), 1000):
            await api.output(LONG_TEXT[i:i + 1000])
        started.set()
        await anyio.sleep_forever()

    tool = durable.define_tool("long_running", "runs long", execute=long_running)  # unsafe
    script = [faux.reply("", tool_calls=[faux.call("long_running", {}, id="c1")]), faux.reply("Sorry.")]
    model = FauxModel(script)
    async with host.open(model, settings=settings(), tools=[tool]) as h:
        sub = await h.root.submit("go")
        await started.wait()
        live = await until_live(h, lambda live: bool(live.tools) and live.tools[0].output == LONG_TEXT)
        assert live.tools[0].output == LONG_TEXT
        crash(h)
    async with host.open(model, settings=settings(), tools=[tool]) as h:
        assert h.root.live().tools[0].output == LONG_TEXT
        assert await h.root.submission(sub.id).wait() == r.Answered("Sorry.", 4)
    result = (await host.entries())[2]
    assert result.is_error and result.content == (
        f"Tool long_running was interrupted and may have partially run\nPartial output:\n{LONG_TEXT}")
