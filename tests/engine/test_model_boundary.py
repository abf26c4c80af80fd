"""What a model returns is checked at the model boundary; runs are bounded; a BaseException from
a tool closes the harness cleanly (issue 13, items 5-7)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.models.protocol import FinalMessage, ModelRequest, StreamEvent, TextDelta, ToolCallEvent, UsageEvent

from durable.testing import check_invariants
from durable.testing.crash import entry_kind as kind_of

from .conftest import settings

pytestmark = pytest.mark.anyio


class Scripted(FauxModel):
    """Streams the given final messages (or raises the given exceptions), one per request."""

    def __init__(self, answers):
        super().__init__([])
        self.answers = list(answers)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:  # type: ignore[override]
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        yield answer


MALFORMED = [
    (FinalMessage("x", "finished"), "unknown stop reason 'finished' (expected one of error, length, stop, tool_use)"),  # type: ignore[arg-type]
    (FinalMessage("", "tool_use"), "stop reason tool_use without any tool call"),
    (FinalMessage("", "tool_use", (r.ToolCall("a", "t", "{}"), r.ToolCall("a", "t", "{}"))),
     "tool call id 'a' is empty or used twice"),
    (FinalMessage("x", "stop", (r.ToolCall("a", "t", "{}"),)), "1 tool call(s) under stop reason 'stop'"),
]


@pytest.mark.parametrize(("bad", "why"), MALFORMED, ids=["stop_reason", "tool_use_without_calls", "duplicate_ids",
                                                         "calls_under_stop"])
async def test_a_malformed_answer_fails_its_attempt_and_nothing_unreadable_is_committed(host, bad, why):
    model = Scripted([bad, FinalMessage("Fine", "stop")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        until = await host.clock.wait_for_timer("retry:1")
        message = f"The model's answer was malformed: {why}"
        assert h.root.live().generation.retry == r.RetryLive(1, until, message, "invalid_response", "faux")
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Fine", 2)
    assert await host.transcript() == ["user", "assistant:stop"]
    async with host.open(FauxModel([]), settings=settings()) as h:  # the file reads back
        assert [e.entry.text for e in await h.root.entries()] == ["hi", "Fine"]


async def test_without_retries_a_malformed_answer_ends_the_run_as_a_model_error(host):
    model = Scripted([FinalMessage("", "tool_use")])
    async with host.open(model, settings=settings(retry=durable.RetryPolicy(enabled=False))) as h:
        result = await (await h.root.submit("hi")).wait()
    assert result == r.Unanswered("model_error", "The model's answer was malformed: stop reason tool_use without "
                                                 "any tool call")


@pytest.mark.parametrize("exc", [TimeoutError(), TimeoutError("deadline"), ConnectionResetError("reset by peer")])
async def test_a_builtin_timeout_or_connection_error_from_a_model_is_a_retryable_attempt(host, exc):
    model = Scripted([exc, FinalMessage("Fine", "stop")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await host.clock.wait_for_timer("retry:1")
        retry = h.root.live().generation.retry
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Fine", 2)
    expected = {TimeoutError: ("timeout", "The model request timed out"),
                ConnectionResetError: ("connection", "The connection to the model failed: reset by peer")}[type(exc)]
    assert retry.kind == expected[0] and retry.error.startswith(expected[1])


async def test_a_model_that_always_calls_a_tool_is_stopped_at_the_cap_of_tool_rounds(host):
    async def ping(args, api, ctx):
        return "pong"

    tool = durable.define_tool("ping", "Ping", replay="safe", execute=ping)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("ping", {}, id=f"c{i}")]) for i in range(4)])
    async with host.open(model, settings=settings(max_tool_rounds=3), tools=[tool]) as h:
        sub = await h.root.submit("loop")
        detail = "The run was ended after 3 tool rounds (settings.max_tool_rounds)"
        assert await sub.wait() == r.Unanswered("tool_round_limit", detail)
        assert h.root.live().run_failure == r.RunFailure(1, (sub.id,), "tool_round_limit", detail, "loop")
    assert len(model.requests) == 4
    assert await host.transcript() == ["user"] + ["assistant:tool_use", "tool_result"] * 3 + [
        "assistant:tool_use", "tool_result:error"]
    last = (await host.entries())[-1]
    assert (last.call_id, last.is_error, last.diagnostics[0].code) == ("c3", True, "tool_round_limit")


async def test_a_deferred_model_that_always_calls_a_tool_is_stopped_at_the_same_cap(host):
    async def ping(args, api, ctx):
        return "pong"

    tool = durable.define_tool("ping", "Ping", replay="safe", execute=ping)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("ping", {}, id=f"c{i}")]) for i in range(3)],
                      deferred=True, poll_after=1.0, polls=1)
    stream = durable.StreamSettings(deferred=True)
    async with host.open(model, settings=settings(max_tool_rounds=2, stream=stream), tools=[tool]) as h:
        sub = await h.root.submit("loop")
        for _ in range(3):  # every round's job is polled once (the submit commits the round count too)
            await host.clock.wait_for_timer("poll:1")
            host.clock.advance(1.0)
        detail = "The run was ended after 2 tool rounds (settings.max_tool_rounds)"
        assert await sub.wait() == r.Unanswered("tool_round_limit", detail)
    assert len(model.submitted) == 3
    assert await host.transcript() == ["user"] + ["assistant:tool_use", "tool_result"] * 2 + [
        "assistant:tool_use", "tool_result:error"]


async def test_a_keyboard_interrupt_in_a_tool_closes_the_harness_cleanly_and_reaches_the_host(host):
    async def boom(args, api, ctx):
        raise KeyboardInterrupt

    tool = durable.define_tool("boom", "Interrupts", execute=boom)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("boom", {}, id="k")]), faux.reply("after")])
    with pytest.raises(KeyboardInterrupt):
        async with host.open(model, settings=settings(), tools=[tool]) as h:
            await (await h.root.submit("go")).wait()
    async with host.open(FauxModel([faux.reply("after")]), settings=settings(), tools=[tool]) as h:
        # a clean close, not a crash: nothing charged; the unsafe call may have partially run
        tool_task = await h.task(2)
        assert (tool_task.state, tool_task.restarts, tool_task.checkpoint.started) == (r.Pending(), 0, True)
        assert await h.root.submission((await h.task(1)).input.submission_ids[0]).wait() == r.Answered("after", 4)
    results = [e for e in await host.entries() if isinstance(e, r.ToolResultEntry)]
    assert [x.content for x in results] == ["Tool boom was interrupted and may have partially run"]
    assert check_invariants(host.path, clean_close=True) == []  # the file is consistent afterwards


class Events(FauxModel):
    """Streams the given events, one list per request."""

    def __init__(self, *streams):
        super().__init__([])
        self.streams = list(streams)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:  # type: ignore[override]
        self.requests.append(request)
        for event in self.streams.pop(0):
            yield event


JUNK = [
    (ToolCallEvent("oops"), "a tool call is not a ToolCall of strings: 'oops'"),  # type: ignore[arg-type]
    (ToolCallEvent(r.ToolCall("a", "t", {"x": 1})), "a tool call is not a ToolCall of strings: "  # type: ignore[arg-type]
     "ToolCall(id='a', name='t', arguments={'x': 1})"),
    (TextDelta(b"bytes"), "a text delta holds bytes, not a string: b'bytes'"),  # type: ignore[arg-type]
    (UsageEvent(r.Usage(-1, 2)), "its usage is not a Usage of non-negative integers: "
     "Usage(input_tokens=-1, output_tokens=2, reasoning_tokens=0, cache_read_tokens=0, cache_write_tokens=0)"),
    (UsageEvent({"input_tokens": 1}), "its usage is not a Usage of non-negative integers: "  # type: ignore[arg-type]
     "{'input_tokens': 1}"),
    ("hello", "expected a stream event (TextDelta, ReasoningDelta, ToolCallEvent, UsageEvent or FinalMessage), "
     "got str"),
]


@pytest.mark.parametrize(("junk", "why"), JUNK, ids=["call_of_a_string", "call_of_a_dict", "delta_of_bytes",
                                                     "negative_usage", "usage_of_a_dict", "a_string"])
async def test_a_junk_stream_event_fails_its_attempt_and_never_reaches_the_commit_line(host, junk, why):
    """Issue 25, item 6: before, a ToolCallEvent holding a string was retried as "could not
    commit" 9 times over 6.5 s and ended the run `storage_error` though storage was fine."""
    model = Events([TextDelta("Hel"), junk, FinalMessage("Hello", "stop")], [FinalMessage("Fine", "stop")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        until = await host.clock.wait_for_timer("retry:1")
        message = f"The model's answer was malformed: {why}"
        assert h.root.live().generation.retry == r.RetryLive(1, until, message, "invalid_response", "faux")
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Fine", 3)
    assert [(type(x).__name__, x.message, x.task.id, x.topic) for x in host.reports] == [
        ("ErrorReport", f"Attempt 1 of task 1 failed: {message}", 1, "model")]
    entries = await host.entries()  # what came before the junk is kept as the aborted attempt
    assert [(kind_of(e), e.text) for e in entries] == [("user", "hi"), ("assistant:error", "Hel"),
                                                       ("assistant:stop", "Fine")]
    assert len(model.requests) == 2


async def test_a_final_message_of_junk_is_refused_before_it_is_committed(host):
    junk = FinalMessage("x", "stop", usage=r.Usage(1, "2"))  # type: ignore[arg-type]
    model = Scripted([junk, FinalMessage("Fine", "stop")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await host.clock.wait_for_timer("retry:1")
        assert h.root.live().generation.retry.error == ("The model's answer was malformed: its usage is not a Usage "
                                                        "of non-negative integers: Usage(input_tokens=1, "
                                                        "output_tokens='2', reasoning_tokens=0, cache_read_tokens=0, "
                                                        "cache_write_tokens=0)")
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Fine", 2)
    assert await host.transcript() == ["user", "assistant:stop"]


async def test_a_long_streamed_answer_with_surrogates_is_answered_not_a_storage_error(host):
    """A character split over two deltas (two lone surrogates) and a lone surrogate, in a partial
    long enough to be kept apart as UTF-8: the run answers, with no report. The partial was
    stored with the pair joined and U+FFFD for the lone one; the answer (a JSON body) keeps them."""
    text = "x" * 300 + "Hel\ud83d" + "\ude00lo \udc80!"
    model = Events([TextDelta("x" * 300 + "Hel\ud83d"), TextDelta("\ude00lo \udc80!"), FinalMessage(text, "stop")])
    async with host.open(model, settings=settings()) as h:
        assert await (await h.root.submit("hi")).wait() == r.Answered(text, 2)
    assert host.reports == []
    assert [(kind_of(e), e.text) for e in await host.entries()] == [
        ("user", "hi"), ("assistant:stop", "x" * 300 + "Hel\U0001f600lo \udc80!")]
