"""A settled submission carries its answer: `Answered(text, seq)` names the final assistant entry
(also after a restart), and `answer()` returns its text or raises `SubmissionUnanswered`."""

from __future__ import annotations

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux

from .conftest import partial_is, settings, until_live

pytestmark = pytest.mark.anyio


async def test_the_answer_is_the_final_assistant_entry_after_a_tool_round(host):
    lookup = durable.define_tool("lookup", "Look up", replay="safe", execute=_lookup)
    model = FauxModel([faux.reply("Let me look.", tool_calls=[faux.call("lookup", {})]), faux.reply("It is 42.")])
    async with host.open(model, settings=settings(), tools=[lookup]) as h:
        sub = await h.root.submit("What is it?")
        status = await sub.wait()
        assert status == r.Answered("It is 42.", 4)
        assert await sub.answer() == "It is 42."
        [stored] = await h.root.entries(status.seq, status.seq)
        assert stored.entry == r.AssistantEntry("It is 42.", "stop", attempt=1, usage=stored.entry.usage, model="faux")
    # A later process reads the same answer from the file.
    async with host.open(FauxModel()) as h:
        assert await h.root.submission(sub.id).answer() == "It is 42."
        assert (await h.root.submission(sub.id).get()).status == r.Answered("It is 42.", 4)


async def test_answer_raises_for_an_interrupted_input_with_its_reason_and_detail(host):
    model = FauxModel([faux.hang("work"), faux.reply("The new one.")])
    async with host.open(model, settings=settings()) as h:
        first = await h.root.submit("one")
        await until_live(h, partial_is("work"))
        second = await h.root.submit("two", when_busy="interrupt")
        assert await second.answer() == "The new one."
        assert await second.wait() == r.Answered("The new one.", 4)
        with pytest.raises(durable.SubmissionUnanswered) as caught:
            await first.answer()
    err = caught.value
    assert (err.reason, err.detail) == ("interrupted", "The run was interrupted by a new input")
    assert str(err) == (f"Submission {first.id} in {host.path} was not answered (interrupted): "
                        "The run was interrupted by a new input")
    assert isinstance(err, durable.HarnessError) and isinstance(err, durable.DurableError)


async def test_an_answer_without_text_is_an_empty_string(host):
    model = FauxModel([faux.reply("")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("say nothing")
        assert await sub.wait() == r.Answered("", 2)
        assert await sub.answer() == ""


async def test_waiting_on_a_submission_this_harness_settles_takes_its_record_from_the_settling_commit(host):
    """`wait()` on an input this harness knows unsettled reads nothing from the store: every
    waiter gets the settled record the commit wrote. An input settled before is read from it."""
    model = FauxModel([faux.reply("One."), faux.reply("Two.")])
    async with host.open(model, settings=settings()) as h:
        reads: list[str] = []
        read = h.storage.get_submission

        async def counted(submission_id: str) -> r.Submission | None:
            reads.append(submission_id)
            return await read(submission_id)

        h.storage.get_submission = counted  # type: ignore[method-assign]  # counting the reads
        sub = await h.root.submit("one")
        statuses: list[r.SubmissionStatus] = []

        async def wait() -> None:
            statuses.append(await sub.wait())

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            tg.start_soon(wait)
        assert (statuses, reads) == ([r.Answered("One.", 2)] * 2, [])
        assert await sub.wait() == r.Answered("One.", 2)  # settled before this wait: the store says
        assert reads == [sub.id]
        with pytest.raises(durable.UnknownSubmission, match=f"Submission s-nope does not exist in {host.path}"):
            await h.root.submission("s-nope").wait()


async def _lookup(args, api, ctx):
    return "42"
