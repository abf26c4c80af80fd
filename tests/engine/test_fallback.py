"""`FallbackModel` in the generation task: a member that fails for good hands the run to the next,
the member in use is kept in the checkpoint across crashes, each answer names its model, and
usage is counted per member. Exact transcripts, reports, live documents and usage."""

from __future__ import annotations

import pytest

import durable
from durable import records as r
from durable.cli.inspect_data import read_session
from durable.cli.inspect_view import print_session
from durable.engine.reports import ErrorReport, ModelFallback, TaskInterrupted, TaskRef
from durable.models import FauxModel, faux
from durable.models.fallback import FallbackMemberMissing
from durable.tasks.generation.records import Request, RunNotes
from durable.testing import check_invariants, crash

from .conftest import partial_is, settings, until_live

pytestmark = pytest.mark.anyio

GEN = TaskRef(1, "generation", "root")
GPT, CLAUDE = "openai:gpt-4o", "anthropic:claude-sonnet-4-5"
HOST_STOPPED_1 = "The host stopped while the model was answering, on attempt 1"


def models(primary: list, secondary: list, **kw) -> tuple[FauxModel, FauxModel, durable.FallbackModel]:
    first, second = FauxModel(primary, name=GPT, **kw), FauxModel(secondary, name=CLAUDE)
    return first, second, durable.FallbackModel([first, second])


def answer(text: str, model: str, attempt: int = 1, stop: str = "stop", calls=(), usage=r.Usage(100, 20)):
    return r.AssistantEntry(text, stop, tuple(calls), usage, None, attempt, model=model)


async def test_a_primary_that_fails_for_good_hands_the_run_to_the_secondary_which_answers(host):
    primary, secondary, model = models([faux.error("Invalid API key", kind="auth", status_code=401)],
                                       [faux.reply("Hello from Claude", usage=r.Usage(100, 20))])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        assert await sub.wait() == r.Answered("Hello from Claude", 2)
        # Costed with genai-prices: Claude Sonnet 4.5 at $3 / $15 per million input / output tokens.
        assert h.root.usage() == r.UsageTotals((r.ModelUsage(GPT, 1, cost=0.0),
                                                r.ModelUsage(CLAUDE, 1, 100, 20, cost=0.0006)))
        assert h.root.live() == r.Live(usage=r.UsageTotals((r.ModelUsage(GPT, 1), r.ModelUsage(CLAUDE, 1, 100, 20))))
    assert await host.entries() == [r.UserEntry("hi", sub.id), answer("Hello from Claude", CLAUDE)]
    assert [q.key for q in primary.requests] == ["g1-s1-a1"]
    assert [(q.key, q.attempt) for q in secondary.requests] == [("g1-s1-a1-m1", 1)]
    assert host.reports == [
        ErrorReport("Attempt 1 of task 1 failed: Invalid API key", GEN, primary_error_repr(), topic="model"),
        ModelFallback(GEN, GPT, CLAUDE, 1, "Invalid API key"),
    ]
    assert check_invariants(host.path, quiescent=True) == []


def primary_error_repr() -> str:
    return ("ModelError('Invalid API key', kind='auth', provider='faux', status_code=401, retry_after=None)")


async def test_retries_exhausted_on_the_primary_move_the_run_on_with_a_fresh_budget_and_partials_kept(host):
    policy = durable.RetryPolicy(max_retries=1, base_delay=1.0)
    busy = faux.error("Overloaded", kind="overloaded", status_code=529, partial="Hel")
    primary, secondary, model = models([busy, busy], [faux.error("Overloaded", kind="overloaded", partial="Hm"),
                                                       faux.reply("Answer", usage=r.Usage(100, 20))])
    async with host.open(model, settings=settings(retry=policy)) as h:
        sub = await h.root.submit("hi")
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        fell_back = await until_live(h, lambda live: live.generation is not None and live.generation.retry is not None
                                     and live.generation.retry.provider == "faux" and len(secondary.requests) == 1)
        assert fell_back.generation.attempt == 1  # attempt 1 of the secondary failed: its own retry follows
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Answer", 5)
    entries = await host.entries()
    assert entries == [
        r.UserEntry("hi", sub.id),
        r.AssistantEntry("Hel", "error", (), entries[1].usage, "Overloaded", 1, model=GPT),
        r.AssistantEntry("Hel", "error", (), entries[2].usage, "Overloaded", 2, model=GPT),
        r.AssistantEntry("Hm", "error", (), entries[3].usage, "Overloaded", 1, model=CLAUDE),
        answer("Answer", CLAUDE, attempt=2),
    ]
    assert [(q.key, q.attempt) for q in primary.requests] == [("g1-s1-a1", 1), ("g1-s2-a2", 2)]
    assert [(q.key, q.attempt) for q in secondary.requests] == [("g1-s3-a1-m1", 1), ("g1-s4-a2-m1", 2)]
    assert [x for x in host.reports if isinstance(x, ModelFallback)] == [ModelFallback(GEN, GPT, CLAUDE, 2,
                                                                                      "Overloaded")]
    # Each member counts its own attempts (1, 2, then 1, 2): the checker reads them per model.
    assert check_invariants(host.path, settings=settings(retry=policy), quiescent=True) == []


async def test_the_run_keeps_the_secondary_through_its_tool_round_and_the_next_run_starts_on_the_primary(host):
    calls = [faux.call("lookup", {"q": "x"}, id="c1")]
    primary, secondary, model = models(
        [faux.error("Bad request", kind="invalid_request", status_code=400), faux.reply("Primary again")],
        [faux.reply("", tool_calls=calls, usage=r.Usage(100, 20)), faux.reply("Done", usage=r.Usage(100, 20))])

    async def lookup(q: str) -> str:
        return f"found {q}"

    tool = durable.define_tool("lookup", "Look up", execute=lookup, replay="safe")
    async with host.open(model, tools=[tool], settings=settings()) as h:
        first = await h.root.submit("one")
        assert await first.wait() == r.Answered("Done", 4)
        second = await h.root.submit("two")
        assert await second.wait() == r.Answered("Primary again", 6)
    entries = await host.entries()
    assert [(type(e).__name__, getattr(e, "model", None)) for e in entries] == [
        ("UserEntry", None), ("AssistantEntry", CLAUDE), ("ToolResultEntry", None), ("AssistantEntry", CLAUDE),
        ("UserEntry", None), ("AssistantEntry", GPT)]
    assert len(primary.requests) == 2 and len(secondary.requests) == 2
    assert secondary.requests[1].key == "g1-s3-a1-m1"  # the tool round's request, on the secondary


async def test_when_the_last_member_fails_for_good_the_run_ends_with_its_error(host):
    _, _, model = models([faux.error("No such model", kind="invalid_model", status_code=404)],
                         [faux.error_stop("Refused")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        assert await sub.wait() == r.Unanswered("model_error", "Refused")
        assert h.root.live().run_failure == r.RunFailure(1, (sub.id,), "model_error", "Refused", "hi")
    assert await host.entries() == [r.UserEntry("hi", sub.id)]
    assert [x for x in host.reports if isinstance(x, ModelFallback)] == [ModelFallback(GEN, GPT, CLAUDE, 1,
                                                                                      "No such model")]


async def test_a_crash_on_the_secondary_is_charged_and_retried_on_the_secondary_never_on_the_primary(host, capsys):
    primary, secondary, model = models([faux.error("Invalid API key", kind="auth", status_code=401)],
                                       [faux.hang("Hel")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await until_live(h, partial_is("Hel"))
        crash(h)
    cut = read_session(host.path)  # what `durable inspect` shows of the run cut off
    assert (cut["tasks"][0]["phase"], cut["tasks"][0]["attempt"], cut["tasks"][0]["fallback_member"]) == (
        "request", 1, 1)
    print_session(cut)
    assert "1 input(s), on fallback model 2" in capsys.readouterr().out
    primary, secondary, model = models([faux.reply("Wrong model")], [faux.reply("Hello", usage=r.Usage(100, 20))])
    async with host.open(model, settings=settings()) as h:
        task = await h.task(1)
        assert (task.state, task.restarts, task.checkpoint) == (r.Pending(), 1, Request(1, {}, 0, RunNotes(model=1)))
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("Hello", 3)
    entries = await host.entries()
    assert entries == [r.UserEntry("hi", sub.id),
                       r.AssistantEntry("Hel", "aborted", (), entries[1].usage, HOST_STOPPED_1, 1, True, model=CLAUDE),
                       answer("Hello", CLAUDE, attempt=2)]
    assert primary.requests == [] and [(q.key, q.attempt) for q in secondary.requests] == [("g1-s2-a2-m1", 2)]
    assert host.reports[-1:] == [TaskInterrupted(GEN, "interrupted", 1, HOST_STOPPED_1)]
    assert check_invariants(host.path, quiescent=True) == []


async def test_a_deferred_primary_whose_job_fails_is_cancelled_there_and_a_streaming_secondary_answers(host):
    primary, secondary, model = models([faux.error("Quota exceeded", kind="quota", status_code=429)],
                                       [faux.reply("Streamed", usage=r.Usage(100, 20))], deferred=True, polls=1)
    policy = durable.StreamSettings(deferred=True)
    async with host.open(model, settings=settings(stream=policy)) as h:
        sub = await h.root.submit("hi")
        await host.clock.wait_for_timer("poll:1")
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Streamed", 2)
        await primary.wait_until(lambda: primary.cancelled != [])
    assert primary.submitted == primary.fetches == primary.cancelled == [primary.submitted[0]]
    assert secondary.submitted == [] and len(secondary.requests) == 1
    assert (await host.entries())[1] == answer("Streamed", CLAUDE)


async def test_a_deferred_job_of_the_secondary_is_polled_there_after_a_crash(host):
    primary = FauxModel([faux.error("Invalid API key", kind="auth", status_code=401)], name=GPT)
    secondary = FauxModel([faux.reply("From the job", usage=r.Usage(100, 20))], name=CLAUDE, deferred=True,
                          polls=2)
    policy = durable.StreamSettings(deferred=True)
    async with host.open(durable.FallbackModel([primary, secondary]), settings=settings(stream=policy)) as h:
        sub = await h.root.submit("hi")
        await host.clock.wait_for_timer("poll:1")
        task = await h.task(1)
        crash(h)
    assert task.checkpoint.job.model == 1 and task.checkpoint.notes.model == 1
    again = FauxModel([], name=CLAUDE, deferred=True, polls=2)
    # The provider outlives the host: the job is still there.
    again.adopt_job(secondary.submitted[0], faux.reply("From the job", usage=r.Usage(100, 20)), polls=2)
    model = durable.FallbackModel([FauxModel([], name=GPT), again])
    async with host.open(model, settings=settings(stream=policy)) as h:
        await h.resume()
        for _ in range(2):
            await host.clock.wait_for_timer("poll:1")
            host.clock.advance(1.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("From the job", 2)
    assert again.fetches == [secondary.submitted[0]] * 2 and model.members[0].fetches == []


async def test_a_checkpoint_naming_a_member_the_model_no_longer_has_faults_its_run_naming_it(host):
    _, _, model = models([faux.error("Invalid API key", kind="auth", status_code=401)], [faux.hang("Hel")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await until_live(h, partial_is("Hel"))
        crash(h)
    async with host.open(FauxModel([], name=GPT), settings=settings()) as h:
        await h.resume()
        status = await h.root.submission(sub.id).wait()
    assert status.reason == "faulted" and "member 2 of openai:gpt-4o, which has 1 member(s) now" in status.detail


def test_a_fallback_model_flattens_nested_ones_and_needs_a_model():
    a, b, c = FauxModel(name="a:1", context_window=10), FauxModel(name="b:2"), FauxModel(name="c:3")
    model = durable.FallbackModel([a, durable.FallbackModel([b, c])])
    assert model.members == (a, b, c)
    assert (model.name, model.context_window, model.deferred) == ("fallback:a:1,b:2,c:3", 10, False)
    assert repr(model) == "FallbackModel([a:1, b:2, c:3])"
    assert isinstance(model, durable.Model)
    with pytest.raises(ValueError, match="at least one model"):
        durable.FallbackModel([])
    assert issubclass(FallbackMemberMissing, durable.DurableError)


async def test_called_directly_a_fallback_model_streams_from_the_first_member_that_starts(anyio_backend):
    from durable.models.protocol import FinalMessage, ModelRequest

    model = durable.FallbackModel([FauxModel([faux.error("down", kind="server")], name="a:1"),
                                   FauxModel([faux.reply("up")], name="b:2")])
    events = [e async for e in model.stream(ModelRequest("", (r.UserEntry("hi"),)))]
    assert isinstance(events[-1], FinalMessage) and events[-1].text == "up"
    failing = durable.FallbackModel([FauxModel([faux.error("down", kind="server")], name="a:1"),
                                     FauxModel([faux.error("also down", kind="auth")], name="b:2")])
    with pytest.raises(durable.ModelError, match="also down"):
        [e async for e in failing.stream(ModelRequest("", (r.UserEntry("hi"),)))]



async def test_a_compaction_asks_the_members_in_order_and_counts_each_request_where_it_went(host):
    primary, _, model = models(
        [faux.reply("a0", usage=r.Usage(100, 20)), faux.reply("a1", usage=r.Usage(100, 20)),
         faux.error("Overloaded", kind="overloaded"), faux.reply("a2", usage=r.Usage(100, 20))],
        [faux.reply("SUMMARY", usage=r.Usage(50, 10))])
    async with host.open(model, settings=settings(compaction=durable.Compaction(keep_last=2))) as h:
        for i in range(2):
            assert await (await h.root.submit(f"q{i}")).wait() == r.Answered(f"a{i}", 2 * i + 2)
        tid = await h.root.compact()
        assert (await h.wait_for_task(tid)).state == r.Terminal(r.Done({"first_kept_seq": 3}))
        assert await (await h.root.submit("q2")).wait() == r.Answered("a2", 7)
        assert h.root.live().usage == r.UsageTotals((r.ModelUsage(GPT, 4, 300, 60), r.ModelUsage(CLAUDE, 1, 50, 10)))
    assert (await host.entries())[4] == r.CompactionEntry("SUMMARY", 3, r.Usage(50, 10))
    assert [q.key for q in primary.requests] == ["g1-s1-a1", "g2-s3-a1", "c3", "g4-s6-a1"]


def test_rows_written_before_models_were_recorded_load_and_a_single_models_rows_look_as_before():
    from durable import codec
    from durable.tasks.generation.records import Poll

    old = codec.from_data({"type": "assistant", "text": "Hi", "stop_reason": "stop", "tool_calls": [],
                           "usage": {"input_tokens": 1, "output_tokens": 2}, "error": None, "attempt": 1,
                           "interrupted": False}, r.Entry)
    assert old == r.AssistantEntry("Hi", "stop", (), r.Usage(1, 2)) and old.model is None
    poll = codec.from_data({"type": "poll", "attempt": 1, "job": {"key": "g1-s1-a1", "handle": "j1"},
                            "poll_at": 5.0, "rounds": 0}, r.Checkpoint)
    assert poll == Poll(1, r.DeferredJob("g1-s1-a1", "j1"), 5.0) and poll.job.model == poll.notes.model == 0
    assert codec.to_data(poll, r.Checkpoint) == {"type": "poll", "attempt": 1, "poll_at": 5.0, "rounds": 0,
                                                 "job": {"key": "g1-s1-a1", "handle": "j1"}}  # written as before
    assert "model" not in codec.to_data(Request(1), r.Checkpoint)
    assert codec.to_data(Request(1, {}, 0, RunNotes(model=1)), r.Checkpoint)["notes"] == {"model": 1}
    assert "cost" not in codec.to_data(r.ModelUsage("m", 1))
