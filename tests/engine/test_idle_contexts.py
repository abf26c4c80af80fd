"""Contexts of idle conversations dropped from memory (durable.engine.idle): after
`keep_idle_context` seconds without a run, a conversation's context is dropped when another
context is used, and read back from the file, exactly, on its next run; never while it runs."""

from __future__ import annotations

import sqlite3

import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.tokens import entry_tokens

from .test_context import Reading

pytestmark = pytest.mark.anyio


def recording(seen: list[tuple[r.Entry, ...]], *steps: object) -> FauxModel:
    def record(step: object):
        def answer(request):
            seen.append(tuple(request.messages))
            return faux.reply(step) if isinstance(step, str) else step
        return answer

    return FauxModel([record(s) for s in steps], tokens_per_second=None)


async def turn(h: durable.Harness, cid: str, text: str) -> None:
    status = await (await h.conversation(cid).submit(text)).wait()
    assert isinstance(status, durable.Answered), status


def texts(messages: tuple[r.Entry, ...]) -> list[tuple[str, str]]:
    return [(type(m).__name__, m.text) for m in messages]  # type: ignore[attr-defined]


async def test_an_idle_context_is_dropped_after_keep_idle_context_and_read_back_exactly(host):
    seen: list[tuple[r.Entry, ...]] = []
    model = recording(seen, "a1", "b1", "b2", "b3", "a2")
    async with host.open(model, settings=durable.Settings(keep_idle_context=30.0)) as h:
        convs = h._session.convs
        await turn(h, "a", "qa1")
        await turn(h, "b", "qb1")
        before = tuple(e.entry for e in convs["a"].context)
        host.clock.advance(29.0)
        await turn(h, "b", "qb2")  # a idle for 29 s: kept
        assert convs["a"].context_loaded and len(convs["a"].context) == 2
        host.clock.advance(2.0)
        await turn(h, "b", "qb3")  # a idle for 31 s: dropped when b's context is used; b's kept
        assert not convs["a"].context_loaded and convs["a"]._context is None
        assert convs["b"].context_loaded and len(convs["b"].context) == 6
        await turn(h, "a", "qa2")  # read back from the file
        assert seen[-1][:2] == before
        assert texts(seen[-1]) == [("UserEntry", "qa1"), ("AssistantEntry", "a1"), ("UserEntry", "qa2")]
        ctx = convs["a"].context
        assert convs["a"].context_loaded and [s.seq for s in ctx] == [1, 2, 3, 4]
        assert ctx.tokens == sum(entry_tokens(s.entry) for s in ctx)
    assert [texts(m) for m in seen[1:4]] == [
        [("UserEntry", "qb1")],
        [("UserEntry", "qb1"), ("AssistantEntry", "b1"), ("UserEntry", "qb2")],
        [("UserEntry", "qb1"), ("AssistantEntry", "b1"), ("UserEntry", "qb2"), ("AssistantEntry", "b2"),
         ("UserEntry", "qb3")],
    ]


async def test_a_running_conversation_keeps_its_context(host):
    seen: list[tuple[r.Entry, ...]] = []
    model = recording(seen, faux.hang("thinking"), "b1")
    async with host.open(model, settings=durable.Settings(keep_idle_context=0.0)) as h:
        convs = h._session.convs
        await h.conversation("a").submit("qa1")
        await model.wait_for_requests(1)
        host.clock.advance(3600.0)
        await turn(h, "b", "qb1")
        assert convs["a"].context_loaded and texts(tuple(e.entry for e in convs["a"].context)) == [
            ("UserEntry", "qa1")]
        assert h.conversation("a").live().busy


async def test_none_keeps_every_context(host):
    model = recording([], "a1", "b1")
    async with host.open(model, settings=durable.Settings(keep_idle_context=None)) as h:
        await turn(h, "a", "qa1")
        host.clock.advance(10.0**6)
        await turn(h, "b", "qb1")
        assert h._session.convs["a"].context_loaded and len(h._session.convs["a"].context) == 2


def test_a_negative_keep_idle_context_is_refused():
    with pytest.raises(ValueError, match="keep_idle_context must be at least 0 or None, not -1"):
        durable.Settings(keep_idle_context=-1)


async def test_a_context_dropped_after_a_compaction_or_a_fork_is_read_back_from_its_summary_on(host):
    seen: list[tuple[r.Entry, ...]] = []
    model = recording(seen, "a0", "a1", "a2", "SUMMARY", "x1", "a3", "f1")
    st = durable.Settings(keep_idle_context=10.0, compaction=durable.Compaction(keep_last=2))
    async with host.open(model, settings=st) as h:
        convs = h._session.convs
        for i in range(3):
            await turn(h, "root", f"q{i}")
        tid = await h.root.compact()
        assert (await h.wait_for_task(tid)).state == r.Terminal(r.Done({"first_kept_seq": 5}))
        fork = await h.root.fork("f")
        kept = [(s.seq, s.entry) for s in convs["root"].context]
        assert [seq for seq, _ in kept] == [5, 6]
        host.clock.advance(11.0)
        await turn(h, "x", "qx")  # root (and the fork, never loaded) idle for 11 s
        assert not convs["root"].context_loaded and not convs["f"].context_loaded
        await turn(h, "root", "q3")
        await turn(h, "f", "qf")
        ctx = convs["root"].context
        assert [(s.seq, s.entry) for s in ctx][:2] == kept and [s.seq for s in ctx] == [5, 6, 8, 9]
        assert ctx.tokens == sum(entry_tokens(s.entry) for s in ctx)
        fctx = convs["f"].context
        assert [s.seq for s in fctx] == [5, 6, 8, 9] and fctx.tokens == sum(entry_tokens(s.entry) for s in fctx)
        assert fork.id == "f"
    summary = seen[5][0]
    assert summary == r.CompactionEntry("SUMMARY", 5, summary.usage) == seen[6][0]
    assert texts(seen[5][1:]) == [("UserEntry", "q2"), ("AssistantEntry", "a2"), ("UserEntry", "q3")]
    assert texts(seen[6][1:]) == [("UserEntry", "q2"), ("AssistantEntry", "a2"), ("UserEntry", "qf")]


async def test_an_entry_damaged_while_its_context_was_dropped_ends_the_next_run_naming_it(host):
    model = Reading([faux.reply("a1"), faux.reply("b1"), faux.reply("never")])
    async with host.open(model, settings=durable.Settings(keep_idle_context=0.0)) as h:
        await turn(h, "a", "qa1")
        await turn(h, "b", "qb1")  # drops a's context
        assert not h._session.convs["a"].context_loaded
        conn = sqlite3.connect(host.path)
        with conn:  # framed as the codec writes it, damaged inside
            conn.execute("""UPDATE entries SET body = '{"type":"assistant","text":5,"bogus":1}' """
                         "WHERE conversation_id = 'a' AND seq = 2")
        conn.close()
        result = await (await h.conversation("a").submit("qa2")).wait()
    detail = (f"Task 3 (generation) stopped: Entry 2 of conversation 'a' in {host.path} cannot be read: "
              "required field missing @ $.stop_reason; extra fields found (bogus) @ $")
    assert result == r.Unanswered("storage_error", detail)
    ref = durable.TaskRef(3, "generation", "a")
    assert [(type(x).__name__, x.message if hasattr(x, "message") else x.detail) for x in host.reports] == [
        ("ErrorReport", detail), ("TaskFaulted", detail)]
    assert [x.task for x in host.reports] == [ref, ref]
    assert model.calls == 2  # no request was sent with the damaged entry
    conn = sqlite3.connect(host.path)
    assert conn.execute("SELECT seq, kind FROM entries WHERE conversation_id = 'a' ORDER BY seq").fetchall() == [
        (1, "user"), (2, "assistant"), (3, "user")]
    conn.close()


async def test_nothing_is_dropped_while_a_refused_commit_waits_to_be_sent_again(host):
    model = recording([], "a1", "b1")
    async with host.open(model, settings=durable.Settings(keep_idle_context=5.0)) as h:
        session = h._session
        await turn(h, "a", "qa1")
        await turn(h, "b", "qb1")
        host.clock.advance(6.0)
        session.idle.used(session, "b", hold=True)  # as `load_context` does while one waits
        assert session.convs["a"].context_loaded
        session.idle.used(session, "b")
        assert not session.convs["a"].context_loaded


async def test_the_handles_a_host_keeps_per_conversation_have_no_dict_each(host):
    # A host may hold a handle per conversation (and per input): fixed slots, no `__dict__` each.
    async with host.open(FauxModel([faux.reply("a")], tokens_per_second=None)) as h:
        conv = h.conversation("a")
        sub = await conv.submit("q")
        await sub.wait()
        for handle in (conv, sub):
            assert not hasattr(handle, "__dict__"), type(handle)
            with pytest.raises(AttributeError):
                setattr(handle, "extra", 1)  # noqa: B010 - what a dict would take
