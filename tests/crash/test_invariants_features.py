"""The invariant checker knows what agents are built with: a structured answer that does not
match its schema, answers sent back past `output_retries`, usage totals that miss answers or
requests, and a run whose requests did not send its committed instructions are each named."""

from __future__ import annotations

import pytest

import durable
from durable import records as r
from durable.models.protocol import ModelRequest
from durable.storage import MemoryStorage
from durable.storage.protocol import Batch
from durable.tasks.generation.records import GenerationInput, Request, RunNotes
from durable.testing import check_commit_history, check_invariants

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
          "additionalProperties": False}


async def session(*batches: Batch) -> MemoryStorage:
    store = MemoryStorage()
    await store.open()
    for b in batches:
        await store.commit(b)
    return store


def run(answer: str, *, status: r.SubmissionStatus, notes: RunNotes = RunNotes(), extra: tuple[r.Entry, ...] = (),
        usage: r.UsageTotals = r.UsageTotals(), outcome: r.Outcome = r.Done({"seq": 2})) -> Batch:
    task = r.Task(1, "root", "generation", GenerationInput(("s1",)), r.Terminal(outcome), Request(1, {}, 0, notes))
    sub = r.Submission("s1", "root", "hi", seq=1, status=status, task_id=1, output=SCHEMA)
    entries = [r.UserEntry("hi", "s1"), *extra, r.AssistantEntry(answer, "stop", usage=r.Usage(10, 2))]
    return Batch(tasks=[task], entries=[r.StoredEntry("root", i, e) for i, e in enumerate(entries, 1)],
                 submissions=[sub], live={"root": r.Live(usage=usage)})


COUNTED = r.UsageTotals((r.ModelUsage("faux", 1, 10, 2),))


async def test_a_structured_answer_that_matches_its_schema_keeps_every_invariant():
    store = await session(run('{"n": 1}', status=r.Answered('{"n": 1}', 2, {"n": 1}), usage=COUNTED))
    assert check_invariants(store, clean_close=True, quiescent=True) == []


async def test_an_answer_that_does_not_match_or_differs_from_its_output_is_named():
    store = await session(run('{"n": "one"}', status=r.Answered('{"n": "one"}', 2, {"n": "one"}), usage=COUNTED))
    assert check_invariants(store) == [
        "Submission s1 is answered with text that does not match its output schema: $.n: 'one' is not of type "
        "'integer' (keyword: type)"]
    store = await session(run('{"n": 1}', status=r.Answered('{"n": 1}', 2, {"n": 2}), usage=COUNTED))
    assert check_invariants(store) == ["Submission s1 holds an output that is not its answer's JSON"]


async def test_answers_sent_back_past_output_retries_are_named():
    sent_back = (r.AssistantEntry("no", "stop"), r.UserEntry("fix it"), r.AssistantEntry("no", "stop"),
                 r.UserEntry("fix it"))
    store = await session(run('{"n": 1}', status=r.Answered('{"n": 1}', 6, {"n": 1}), notes=RunNotes(output_retries=2),
                              extra=sent_back, usage=COUNTED))
    assert check_invariants(store, settings=durable.Settings(output_retries=1)) == [
        "Task 1 (generation) sent 2 answers back, past output_retries = 1",
        "The run of task 1 holds 2 answers sent back to the model, past output_retries = 1",
    ]


async def test_usage_that_misses_an_answer_or_a_request_is_named():
    store = await session(run('{"n": 1}', status=r.Answered('{"n": 1}', 2, {"n": 1})))
    assert check_invariants(store) == [
        "The usage of conversation 'root' counts 0 input / 0 output tokens, fewer than its answers hold (10 / 2)"]
    store = await session(run('{"n": 1}', status=r.Answered('{"n": 1}', 2, {"n": 1}), usage=COUNTED))
    requests = [ModelRequest("You are a helpful assistant.", (), key=f"g1-s1-a{n}") for n in (1, 2)]
    assert check_invariants(store, requests=requests) == [
        "Conversation 'root' counts 1 request(s), but the model saw 2 of its runs"]


async def test_a_request_without_the_committed_instructions_and_instructions_that_change_are_named():
    store = await session(run('{"n": 1}', status=r.Answered('{"n": 1}', 2, {"n": 1}), usage=COUNTED,
                              notes=RunNotes("Assembled.")))
    assert check_invariants(store, requests=[ModelRequest("Assembled.", (), key="g1-s1-a1")]) == []
    assert check_invariants(store, requests=[ModelRequest("Other.", (), key="g1-s1-a1")]) == [
        "Request g1-s1-a1 of task 1 was sent with other instructions than the run committed"]
    task = r.Task(1, "root", "generation", GenerationInput(("s1",)), r.Running(), Request(1, {}, 0, RunNotes("A.")))
    later = r.Task(1, "root", "generation", GenerationInput(("s1",)), r.Running(), Request(2, {}, 0, RunNotes("B.")))
    assert check_commit_history([Batch(tasks=[task]), Batch(tasks=[later])]) == [
        "The instructions of the run of task 1 changed after they were committed (once)"]
