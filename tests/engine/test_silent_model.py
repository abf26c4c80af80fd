"""A model that goes silent ends as a timed-out attempt by default (issue 25, item 6): before,
`stream_silence` defaulted to None and a silent model held its run forever with no report. On
trio's MockClock: time moves only when every task waits, so the 300 s pass in virtual time."""

from __future__ import annotations

import pytest
import trio
import trio.testing

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.testing.crash import entry_kind as kind_of

from .conftest import settings

pytestmark = pytest.mark.anyio
SILENT = "The model stream was silent for 300 s"


class StreamEnds(FauxModel):
    """A faux model that notes the (virtual) time each of its streams is closed, and when the
    harness last asked it for an event (the silence is counted from there: keeping an event may
    commit, and the mock clock may jump while the writer thread works)."""

    def __init__(self, script) -> None:
        super().__init__(script)
        self.ended: list[float] = []
        self.asked: list[float] = []

    async def stream(self, request):  # type: ignore[override]
        self.asked.append(trio.current_time())
        try:
            async for event in super().stream(request):
                yield event
                self.asked.append(trio.current_time())
        finally:
            self.ended.append(trio.current_time())


@pytest.fixture
def anyio_backend():
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


async def test_a_silent_model_ends_as_a_timed_out_attempt_with_a_report_by_default(host):
    assert durable.Settings().stream.stream_silence == 300.0
    host.inbox_poll = None  # no perpetual timer to move the mock clock on while the writer works
    model = StreamEnds([faux.hang("Let me"), faux.reply("Fine")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await model.wait_for_requests(1)
        until = await host.clock.wait_for_timer("retry:1")
        # The stream was closed 300 s (virtual) after the harness last asked it for an event, not
        # counted from the request: keeping "Let me" committed it, and the mock clock jumps on to
        # the next timer whenever every task waits, as while the writer thread commits.
        assert model.ended[0] - model.asked[-1] == 300.0
        assert h.root.live().generation.retry == r.RetryLive(1, until, SILENT, "timeout", "faux")
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Fine", 3)
    assert [(type(x).__name__, x.message, x.topic) for x in host.reports] == [
        ("ErrorReport", f"Attempt 1 of task 1 failed: {SILENT}", "model")]
    assert [(kind_of(e), e.text) for e in await host.entries()] == [
        ("user", "hi"), ("assistant:error", "Let me"), ("assistant:stop", "Fine")]


async def test_stream_silence_none_still_means_no_limit(host):
    host.inbox_poll = None
    model = FauxModel([faux.hang("Let me")])
    # No deadline around the harness: the mock clock jumps to the next deadline whenever every
    # task waits, also while the writer thread commits, so one (a `move_on_after`) could fire
    # before the checks below, and it did (the abort's commit let the clock jump to its end:
    # a cancelled close that hung before the scheduler's fix).
    async with host.open(model, settings=settings(stream=durable.StreamSettings(stream_silence=None))) as h:
        sub = await h.root.submit("hi")
        await model.wait_for_requests(1)
        await trio.sleep(3_600)  # virtual: far past the default 300 s
        assert h.root.live().generation.retry is None and model.request_count == 1
        await h.root.abort()
        assert (await sub.wait()).reason == "aborted"
    assert host.reports == []
