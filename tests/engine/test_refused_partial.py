"""One request per attempt (issue 25, item 7): a partial answer's commit refused by a full disk
never sends the model request again. While the disk is full the partial waits its turn and the
stream goes on; when the disk stays full past `disk_full_patience` the harness stops, and the
attempt, cut off, is charged at the next open and says why. Refusals are injected below the
crashable store."""

from __future__ import annotations

import pytest

import durable
from durable import records as r
from durable.errors import DiskFull
from durable.models import FauxModel, faux
from durable.testing.crash import entry_kind as kind_of

from .conftest import settings

pytestmark = pytest.mark.anyio


def _full(path: str) -> DiskFull:
    return DiskFull(f"A commit to {path} was rolled back: the disk is full (injected)", location=path)


def _is_partial(batch) -> bool:
    return not batch.barrier and any(
        live.generation is not None and live.generation.message.text for live in batch.live.values())


def _refuse_partials(host, times: float) -> list[str]:
    """Refuse the first `times` commits of a partial answer with a full disk; returns the texts refused."""
    assert host.storage is not None
    inner = host.storage.inner
    real_commit = inner.commit
    refused: list[str] = []

    async def commit(batch):  # type: ignore[no-untyped-def]
        if _is_partial(batch) and len(refused) < times:
            refused.append(next(iter(batch.live.values())).generation.message.text)
            raise _full(host.path)
        await real_commit(batch)

    inner.commit = commit  # type: ignore[method-assign]
    return refused


async def test_a_refused_partial_commit_waits_its_turn_and_the_request_is_sent_once(host):
    model = FauxModel([faux.reply("Hello there, friend")], token_size=5)
    async with host.open(model, settings=settings()) as h:
        refused = _refuse_partials(host, 3)
        assert await (await h.root.submit("hi")).wait() == r.Answered("Hello there, friend", 2)
    assert refused and model.request_count == 1
    assert [(type(x).__name__, x.topic) for x in host.reports] == [("ErrorReport", "commit")] * len(refused)
    assert host.reports[0].message == (f"The commit of conversation 'root''s live document could not commit and will "
                                       f"try again: A commit to {host.path} was rolled back: the disk is full "
                                       f"(injected); tried again for 60 s more while the disk stays full")
    assert [(kind_of(e), e.text) for e in await host.entries()] == [("user", "hi"), ("assistant:stop",
                                                                                     "Hello there, friend")]


async def test_a_disk_full_past_patience_stops_the_harness_and_the_cut_off_attempt_is_charged_once(host):
    model = FauxModel([faux.reply("Hello there, friend"), faux.reply("Again")], token_size=5)
    quick = settings(disk_full_patience=0.2)
    async with host.open(model, settings=quick) as h:
        refused = _refuse_partials(host, float("inf"))
        sub = await h.root.submit("hi")
        with pytest.raises(DiskFull, match="disk_full_patience"):
            await sub.wait()
    assert refused and model.request_count == 1  # never sent again in that process
    host.reports.clear()
    async with host.open(model, settings=quick) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")  # charged: the next attempt after the backoff
        host.clock.advance(1.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("Again", 2)
    assert [m.attempt for m in model.requests] == [1, 2]
    assert host.reports == [durable.TaskInterrupted(durable.TaskRef(1, "generation", "root"), "interrupted", 1,
                                                    "The host stopped while the model was answering, on attempt 1")]
    assert [(kind_of(e), e.text) for e in await host.entries()] == [("user", "hi"), ("assistant:stop", "Again")]
