"""Reasoning with the scripted faux model: streamed as `ReasoningDelta`s before the text, committed
into live (`live.generation.message.reasoning`) by the same coalesced flushes as the text, stored
on the assistant entry as signed blocks that go back to the model in the tool loop and the next
turn; a partial reasoning cut off by an abort or a crash is kept on the aborted entry as a
partial block and never sent again; reasoning tokens are counted apart."""

from __future__ import annotations

import pytest

import durable
from durable import codec, records as r
from durable.models import FauxModel, ReasoningDelta, TextDelta, faux
from durable.models.faux import faux_reasoning
from durable.models.protocol import FinalMessage, ModelRequest, UsageEvent, sendable_reasoning
from durable.tasks.generation.records import HOST_STOPPED_STREAM, RUN_ABORTED
from durable.testing import check_invariants, crash

from .conftest import settings, until_live

pytestmark = pytest.mark.anyio

THOUGHT = "Let me think"
SIGNED = r.Reasoning(THOUGHT, "faux", signature=faux_reasoning(THOUGHT)[0].signature)


async def test_the_faux_model_streams_its_reasoning_first_and_ends_with_a_signed_block():
    model = FauxModel([faux.reply("Hi!", reasoning=THOUGHT)], token_size=4)
    events = [e async for e in model.stream(ModelRequest("", (r.UserEntry("hi"),)))]
    assert events == [ReasoningDelta("Let "), ReasoningDelta("me t"), ReasoningDelta("hink"), TextDelta("Hi!"),
                      UsageEvent(r.Usage(10, 4, reasoning_tokens=3)),
                      FinalMessage("Hi!", "stop", (), r.Usage(10, 4, reasoning_tokens=3), reasoning=(SIGNED,))]
    # 3 reasoning tokens and 1 of text in the 4 output tokens; the signature is a digest of the text
    assert SIGNED.signature is not None and SIGNED.signature.startswith("faux-")


async def test_every_committed_live_document_shows_the_reasoning_then_the_text_after_it(host):
    async with host.open(FauxModel([faux.reply("Hi!", reasoning=THOUGHT)], token_size=4),
                         settings=settings()) as h:
        sub = await h.root.submit("hi")
        assert await sub.wait() == r.Answered("Hi!", 2)
    assert host.storage is not None
    partials = [batch.live["root"].generation.message for batch in host.storage.batches
                if "root" in batch.live and batch.live["root"].generation is not None
                and batch.live["root"].generation.message != r.PartialMessage()]
    assert partials == [  # every delta committed (persist_within=0): each snapshot exactly
        r.PartialMessage(reasoning="Let "),
        r.PartialMessage(reasoning="Let me t"),
        r.PartialMessage(reasoning="Let me think"),
        r.PartialMessage("Hi!", reasoning="Let me think"),
    ]
    assert (await host.entries())[1] == r.AssistantEntry("Hi!", "stop", (), r.Usage(10, 4, reasoning_tokens=3),
                                                         reasoning=(SIGNED,), model="faux")


async def test_coalesced_flushes_carry_the_reasoning_like_the_text(host):
    model = FauxModel([faux.hang("", reasoning="x" * 4000)], token_size=4)
    async with host.open(model, settings=durable.Settings()) as h:  # the default: 100 ms windows
        await h.root.submit("hi")
        live = await until_live(h, lambda live: live.generation is not None
                                and live.generation.message.reasoning == "x" * 4000)
        assert live.generation == r.GenerationLive(1, r.PartialMessage(reasoning="x" * 4000))
        await h.root.abort()
    assert host.storage is not None
    flushes = [line for line in host.storage.history if line == "live root [lazy]"]
    assert 1 <= len(flushes) < 1000  # coalesced: far fewer commits than the 1000 deltas


async def test_the_tool_loop_and_the_next_turn_send_the_signed_blocks_back(host):
    async def look(args, api, ctx):
        return "sunny"

    tool = durable.define_tool("look", "look outside", replay="safe", execute=look)
    script = [faux.reply("", tool_calls=[faux.call("look", {}, id="c1")], reasoning=THOUGHT),
              faux.reply("Sunny.", reasoning="It is sunny"), faux.reply("Yes.")]
    model = FauxModel(script)
    async with host.open(model, tools=[tool], settings=settings()) as h:
        assert await (await h.root.submit("weather?")).wait() == r.Answered("Sunny.", 4)
        assert await (await h.root.submit("sure?")).wait() == r.Answered("Yes.", 6)
        totals = h.root.usage()
    first, second, third = model.requests
    assert [sendable_reasoning(e, "faux") for e in second.messages if isinstance(e, r.AssistantEntry)] == [(SIGNED,)]
    assert [sendable_reasoning(e, "faux") for e in third.messages if isinstance(e, r.AssistantEntry)] == [
        (SIGNED,), faux_reasoning("It is sunny")]
    assert [sendable_reasoning(e, "anthropic") for e in third.messages if isinstance(e, r.AssistantEntry)] == [(), ()]
    assert totals.reasoning_tokens == 3 + 3  # counted apart, as part of the output


async def test_an_abort_mid_reasoning_keeps_it_as_a_partial_block_never_sent_again(host):
    model = FauxModel([faux.hang("", reasoning=THOUGHT), faux.reply("Fresh.")], token_size=4)
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await until_live(h, lambda live: live.generation is not None and live.generation.message.reasoning == THOUGHT)
        await h.root.abort()
        assert await sub.wait() == r.Unanswered("aborted", RUN_ABORTED)
        assert await (await h.root.submit("again")).wait() == r.Answered("Fresh.", 4)
    aborted = (await host.entries())[1]
    assert aborted == r.AssistantEntry("", "aborted", (), r.Usage(), RUN_ABORTED, 1,
                                       reasoning=(r.Reasoning(THOUGHT, partial=True),), model="faux")
    assert model.requests[1].messages == ((await host.entries())[0], (await host.entries())[2])  # not the partial
    assert check_invariants(host.path, requests=model.requests, quiescent=True, clean_close=True) == []


async def test_a_crash_mid_reasoning_keeps_it_on_the_interrupted_entry_and_the_retry_does_not_send_it(host):
    model = FauxModel([faux.hang("", reasoning=THOUGHT)], token_size=4)
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await until_live(h, lambda live: live.generation is not None and live.generation.message.reasoning == THOUGHT)
        crash(h)
    again = FauxModel([faux.reply("Done.", reasoning="Quick")])
    async with host.open(again, settings=settings()) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("Done.", 3)
    detail = HOST_STOPPED_STREAM.format(attempt=1)
    entries = await host.entries()
    assert entries[1] == r.AssistantEntry("", "aborted", (), r.Usage(), detail, 1, interrupted=True,
                                          reasoning=(r.Reasoning(THOUGHT, partial=True),), model="faux")
    assert again.requests[0].messages == (entries[0],)
    assert check_invariants(host.path, requests=again.requests, quiescent=True, clean_close=True) == []


def test_reasoning_is_stored_only_when_there_is_some_and_older_rows_load_without_it():
    plain = r.AssistantEntry("Hi", "stop")
    assert "reasoning" not in codec.dumps(plain, r.Entry)
    assert codec.loads('{"type": "assistant", "text": "Hi", "stop_reason": "stop"}', r.Entry) == plain
    assert "reasoning" not in codec.dumps(r.PartialMessage("Hi"))
    signed = r.AssistantEntry("Hi", "stop", reasoning=(
        r.Reasoning("t", "anthropic", signature="s"), r.Reasoning("", "anthropic", redacted="d"),
        r.Reasoning("", "openai", id="rs_1", encrypted="e", summary=("a", "b")), r.Reasoning("cut", partial=True)))
    text = codec.dumps(signed, r.Entry)
    assert '"reasoning":[{"text":"t","format":"anthropic","signature":"s"},{"text":"","format":"anthropic",' \
           '"redacted":"d"},{"text":"","format":"openai","id":"rs_1","encrypted":"e","summary":["a","b"]},' \
           '{"text":"cut","format":"","partial":true}]' in text.replace(" ", "")
    assert codec.loads(text, r.Entry) == signed
    assert r.reasoning_text(signed.reasoning) == "t\n\na\n\nb\n\ncut"


def test_the_invariants_find_a_partial_block_on_an_entry_that_would_be_sent(tmp_path):
    from durable.testing.invariants.features import check_reasoning
    from durable.testing.invariants.image import SessionImage

    image = SessionImage.__new__(SessionImage)
    image.entries = {"root": [r.StoredEntry("root", 2, r.AssistantEntry("x", "stop", reasoning=(
        r.Reasoning("cut", partial=True),))), r.StoredEntry("root", 3, r.AssistantEntry("", "aborted", reasoning=(
            r.Reasoning("cut", partial=True),)))]}
    assert check_reasoning(image) == [
        "Assistant entry 2 of conversation 'root' (stop) holds a partial reasoning block, which would be sent back"]
