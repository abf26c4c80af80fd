"""Structured output: `submit(text, output=T)` (or a harness-wide `output=`) stores T's JSON schema
with the input; each request of the run asks for it; an answer that does not match goes back to
the model with the problems, `settings.output_retries` times, then the run ends
`unanswered{output_invalid}`. `Answered.output` holds the validated JSON, `answer(T)` a `T`."""

from __future__ import annotations

import dataclasses
import re
from typing import Literal, TypedDict

import attrs
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.tasks.generation.records import OUTPUT_CORRECTION, Request, RunNotes
from durable.testing import check_invariants, crash
from durable.tools.schema import output_schema

from .conftest import partial_is, settings, until_live

pytestmark = pytest.mark.anyio


@attrs.frozen
class Weather:
    """A forecast."""

    city: str
    celsius: int
    sky: Literal["sunny", "cloudy"] = "sunny"


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Person(TypedDict):
    name: str
    age: int


WEATHER = {"description": "A forecast.", "type": "object",
           "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"},
                          "sky": {"type": "string", "enum": ["sunny", "cloudy"]}},
           "required": ["city", "celsius"], "additionalProperties": False}
VALID = '{"city": "Paris", "celsius": 18}'


def corrected(*problems: str) -> r.UserEntry:
    return r.UserEntry(OUTPUT_CORRECTION.format(problems="; ".join(problems)))


async def test_an_invalid_answer_goes_back_once_and_the_valid_one_is_the_answer_as_a_t(host):
    model = FauxModel([faux.reply("It is sunny in Paris."), faux.reply(VALID)])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("Weather in Paris?", output=Weather)
        assert await sub.answer(Weather) == Weather("Paris", 18)
        assert await sub.wait() == r.Answered(VALID, 4, {"city": "Paris", "celsius": 18})
        assert await sub.answer() == VALID
        assert (await sub.get()).output == WEATHER
        task = await h.task(1)
        assert task.state == r.Terminal(r.Done({"seq": 4}))
    problem = "the answer is not valid JSON (Expecting value: line 1 column 1 (char 0))"
    assert await host.entries() == [
        r.UserEntry("Weather in Paris?", sub.id),
        r.AssistantEntry("It is sunny in Paris.", "stop", usage=r.Usage(10, 6), model="faux"),
        corrected(problem),
        r.AssistantEntry(VALID, "stop", usage=r.Usage(10, 8), model="faux"),
    ]
    assert [q.output for q in model.requests] == [WEATHER, WEATHER]
    assert model.requests[1].messages == tuple((await host.entries())[:3])  # the model reads its answer and why
    assert check_invariants(host.path, settings=settings(), clean_close=True, quiescent=True) == []


async def test_a_model_that_never_complies_ends_output_invalid_after_output_retries(host):
    model = FauxModel([faux.reply('{"city": "Paris"}'), faux.reply('{"city": "Paris", "celsius": "18"}'),
                       faux.reply('{"celsius": 18}')])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("Weather in Paris?", output=Weather)
        missing = "$: 'city' is a required property (keyword: required)"
        detail = f"The answer did not match the output schema after 2 retries (settings.output_retries): {missing}"
        assert await sub.wait() == r.Unanswered("output_invalid", detail)
        with pytest.raises(durable.SubmissionUnanswered):
            await sub.answer(Weather)
        task = await h.task(1)
        assert task.state == r.Terminal(r.Failed(r.ErrorInfo(detail, r.ErrorDetail("output_invalid"))))
        assert h.root.live().run_failure == r.RunFailure(1, (sub.id,), "output_invalid", detail, "Weather in Paris?")
    assert await host.transcript() == ["user", "assistant:stop", "user", "assistant:stop", "user", "assistant:stop"]
    entries = await host.entries()
    assert entries[2] == corrected("$: 'celsius' is a required property (keyword: required)")
    assert entries[4] == corrected("$.celsius: '18' is not of type 'integer' (keyword: type)")
    assert model.calls == 3
    assert check_invariants(host.path, settings=settings(), clean_close=True, quiescent=True) == []


async def test_output_retries_0_ends_at_the_first_invalid_answer(host):
    model = FauxModel([faux.reply("no")])
    async with host.open(model, settings=settings(output_retries=0)) as h:
        status = await (await h.root.submit("x?", output=Weather)).wait()
    assert status == r.Unanswered("output_invalid", "The answer did not match the output schema after no retry "
                                  "(settings.output_retries): the answer is not valid JSON (Expecting value: line 1 "
                                  "column 1 (char 0))")


async def test_a_reopened_session_enforces_the_stored_schema_and_keeps_the_count_of_retries(host):
    model = FauxModel([faux.reply("not json"), faux.hang('{"ci')])
    async with host.open(model, settings=settings(output_retries=1)) as h:
        sub = await h.root.submit("Weather?", output=Weather)
        await until_live(h, partial_is('{"ci'))
        task = await h.task(1)
        assert task.checkpoint == Request(1, {}, 0, RunNotes(output_retries=1))
        crash(h)
    # The new process was given no output type: the input's stored schema decides.
    model = FauxModel([faux.reply("still not json")])
    async with host.open(model, settings=settings(output_retries=1)) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1)
        status = await h.root.submission(sub.id).wait()
        assert isinstance(status, r.Unanswered) and status.reason == "output_invalid"
        assert status.detail.startswith("The answer did not match the output schema after 1 retry")
    assert model.requests[0].output == WEATHER
    assert await host.transcript() == ["user", "assistant:stop", "user", "assistant:aborted", "assistant:stop"]


async def test_the_harness_wide_output_and_types_of_every_kind(host):
    model = FauxModel([faux.reply('{"x": 1, "y": 2.5}'), faux.reply('{"name": "Ada", "age": 36}'),
                       faux.reply('{"response": 3}'), faux.reply('{"response": "three"}'), faux.reply("plain")])
    async with host.open(model, settings=settings(), output=Point) as h:
        assert await (await h.root.submit("a point")).answer(Point) == Point(1.0, 2.5)
        assert await (await h.root.submit("a person", output=Person)).answer(Person) == {"name": "Ada", "age": 36}
        assert await (await h.root.submit("a number", output=int)).answer(int) == 3
        assert await (await h.root.submit("a number or a word", output=int | str)).answer(int | str) == "three"
    assert model.requests[2].output == {"type": "object", "properties": {"response": {"type": "integer"}},
                                        "required": ["response"], "additionalProperties": False}
    async with host.open(FauxModel([faux.reply("plain")]), settings=settings()) as h:
        sub = await h.root.submit("text")
        assert await sub.answer() == "plain"
        with pytest.raises(durable.InvalidInput, match=f"Submission {sub.id} was not submitted with an output type"):
            await sub.answer(Point)


async def test_a_type_that_cannot_be_a_schema_and_an_id_taken_with_another_schema_are_refused(host):
    async with host.open(FauxModel([faux.reply(VALID)]), settings=settings()) as h:
        with pytest.raises(durable.InvalidInput, match=r"The output type .*object.* cannot be described as JSON"):
            await h.root.submit("x", output=object)
        sub = await h.root.submit("Weather?", id="w1", output=Weather)
        assert await sub.answer(Weather) == Weather("Paris", 18)
        assert (await h.root.submit("Weather?", id="w1", output=Weather)).id == "w1"
        with pytest.raises(durable.InvalidInput, match="'w1' .* is taken by an input with another output schema"):
            await h.root.submit("Weather?", id="w1", output=Point)
        with pytest.raises(durable.InvalidInput, match="'w1' .* is taken by an input with another output schema"):
            await h.root.submit("Weather?", id="w1")
    assert await host.transcript() == ["user", "assistant:stop"]


async def test_queued_inputs_of_another_schema_are_answered_by_a_run_of_their_own(host):
    model = FauxModel([faux.hang(), faux.reply('{"x": 0, "y": 0}'), faux.reply("two texts")])
    async with host.open(model, settings=settings()) as h:
        first = await h.root.submit("first")
        await model.wait_for_requests(1)
        point = await h.root.submit("a point", output=Point)
        text = await h.root.submit("a text")
        await h.root.abort()
        assert (await first.wait()).reason == "aborted"
        assert await point.answer(Point) == Point(0, 0)
        assert await text.answer() == "two texts"
        runs = [t.input.submission_ids for t in await h.tasks(kind="generation")]
    assert runs == [(first.id,), (point.id,), (text.id,)]
    assert [q.output is not None for q in model.requests] == [False, True, False]


async def test_a_deferred_model_sends_a_new_job_after_an_invalid_answer(host):
    model = FauxModel([faux.reply("nope"), faux.reply(VALID)], deferred=True, poll_after=5.0)
    async with host.open(model, settings=settings(stream=durable.StreamSettings(deferred=True))) as h:
        sub = await h.root.submit("Weather?", output=Weather)
        for _ in range(2):
            await host.clock.wait_for_timer("poll:1")
            host.clock.advance(5.0)
        assert await sub.answer(Weather) == Weather("Paris", 18)
    assert len(model.submitted) == 2 and re.fullmatch(r"g1-s3-a1", model.requests[1].key)
