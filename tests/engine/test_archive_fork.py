"""Conversations as data: archive (an expected exit, refusing new input, kept across a reopen) and
fork (a copy of the history up to a seq; refused while a run is at that point)."""

from __future__ import annotations

import anyio
import pytest

import durable
import durable.sync
from durable import records as r
from durable.models import FauxModel, faux
from durable.storage import SQLiteStorage
from durable.testing import check_invariants, crash

from .conftest import partial_is, settings, until_live, used

pytestmark = pytest.mark.anyio

ARCHIVED = "The conversation was archived"
CALL_ARCHIVED = "The tool call was stopped: the conversation was archived"


def refusal(path: str, conversation: str = "root") -> str:
    return f"Conversation {conversation!r} in {path} is archived; the input was not accepted (unarchive it first)"


async def entries_of(path: str, conversation: str) -> list[r.Entry]:
    store = SQLiteStorage(path)
    await store.open()
    try:
        return [e.entry for e in await store.get_entries(conversation)]
    finally:
        await store.close()


async def test_archive_during_a_streaming_run_ends_it_archived_uncharged_and_refuses_input_until_unarchived(host):
    model = FauxModel([faux.hang("Once upon"), faux.reply("Hello again")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("story")
        queued = await h.root.submit("and then?")  # waits behind the run: answered archived too
        await until_live(h, partial_is("Once upon"))
        endings = []
        h.storage.on_commit = lambda number, batch: endings.extend(
            (batch.live["root"].archived, [s.id for s in batch.submissions]) for t in batch.tasks if t.terminal)
        await h.root.archive()
        assert await sub.wait() == r.Unanswered("archived", ARCHIVED)
        assert endings == [(True, [sub.id, queued.id])]  # the flag, with the ending, in one commit
        assert await queued.wait() == r.Unanswered("archived", ARCHIVED)
        task = await h.task(1)
        assert (task.state, task.restarts, task.stop) == (r.Terminal(r.Aborted()), 0, "archived")
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sub.id,), "archived", ARCHIVED, "story"),
                                       usage=used(1), archived=True)
        with pytest.raises(durable.ConversationArchived) as refused:
            await h.root.submit("more")
        assert str(refused.value) == refusal(host.path)
        await h.root.archive()  # archiving again changes nothing
        assert [t.id for t in await h.tasks()] == [1]
        await h.root.unarchive()
        assert not h.root.live().archived
        assert await (await h.root.submit("once more")).answer() == "Hello again"
    # the queued input never ran: it has no entry
    assert await host.transcript() == ["user", "assistant:aborted", "user", "assistant:stop"]
    entries = await host.entries()
    assert entries[1] == r.AssistantEntry("Once upon", "aborted", error=ARCHIVED, model="faux")
    assert host.reports == []  # no failure, no interruption: nothing charged
    assert check_invariants(host.path) == []


async def test_archive_during_a_tool_round_stops_the_tool_as_an_abort_does(host):
    started = anyio.Event()

    async def execute(args, api, ctx):
        await api.output("half")
        started.set()
        await anyio.sleep_forever()

    slow = durable.define_tool("slow", "never ends", execute=execute)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("slow", {}, id="a")])])
    async with host.open(model, settings=settings(), tools=[slow]) as h:
        sub = await h.root.submit("go")
        await started.wait()
        await h.root.archive()
        assert await sub.wait() == r.Unanswered("archived", ARCHIVED)
        tool = (await h.tasks(kind="tool"))[0]
        assert (tool.state, tool.restarts) == (r.Terminal(r.Aborted()), 0)
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error"]
    assert (await host.entries())[2] == r.ToolResultEntry(
        "a", "slow", f"{CALL_ARCHIVED}\nPartial output:\nhalf", True, (r.Diagnostic("error", "archived", CALL_ARCHIVED),))
    assert host.reports == []


async def test_the_archive_survives_a_reopen_and_a_resume_leaves_the_conversation_alone(host):
    model = FauxModel([faux.reply("Hi")])
    async with host.open(model, settings=settings()) as h:
        assert await (await h.root.submit("hello")).answer() == "Hi"
        commits = h.session.commit_count
        await h.root.archive()  # no run: one commit
        assert h.session.commit_count == commits + 1
        usage = h.root.usage()
        assert h.root.live() == r.Live(usage=usage, archived=True)
    async with host.open(FauxModel([]), settings=settings()) as h:
        await h.resume()
        assert h.root.live() == r.Live(usage=usage, archived=True)
        assert await h.tasks(state="running") == [] and await h.tasks(state="pending") == []
        with pytest.raises(durable.ConversationArchived) as refused:
            await h.root.submit("again")
        assert str(refused.value) == refusal(host.path)
    assert await host.transcript() == ["user", "assistant:stop"]


async def test_fork_then_edit_a_message_leaves_the_source_unchanged(host):
    model = FauxModel([faux.reply("Hello"), faux.reply("5"), faux.reply("6")])
    async with host.open(model, settings=settings()) as h:
        assert await (await h.root.submit("hi")).answer() == "Hello"
        assert await (await h.root.submit("what is 2+2?")).answer() == "5"
        fork = await h.root.fork("edit", at_seq=2)  # just before the message to edit
        assert fork.id == "edit" and [e.seq for e in await fork.entries()] == [1, 2]
        assert await (await fork.submit("what is 2+4?")).answer() == "6"
        assert [type(e).__name__ for e in model.requests[-1].messages] == ["UserEntry", "AssistantEntry", "UserEntry"]
        assert [e.text for e in model.requests[-1].messages] == ["hi", "Hello", "what is 2+4?"]
    forked = await entries_of(host.path, "edit")
    assert [(type(e).__name__, e.text) for e in forked] == [
        ("UserEntry", "hi"), ("AssistantEntry", "Hello"), ("UserEntry", "what is 2+4?"), ("AssistantEntry", "6")]
    assert forked[0].submission_id == (await entries_of(host.path, "root"))[0].submission_id
    assert [(type(e).__name__, e.text) for e in await entries_of(host.path, "root")] == [
        ("UserEntry", "hi"), ("AssistantEntry", "Hello"), ("UserEntry", "what is 2+2?"), ("AssistantEntry", "5")]
    async with host.open(FauxModel([faux.reply("7")]), settings=settings()) as h:  # the fork reopens whole
        assert await (await h.conversation("edit").submit("and 3+4?")).answer() == "7"
        assert [e.seq for e in await h.conversation("edit").entries()] == [1, 2, 3, 4, 5, 6]
    assert check_invariants(host.path) == []


async def test_fork_is_refused_during_an_active_run_at_that_point_and_onto_an_existing_conversation(host):
    model = FauxModel([faux.reply("Hello"), faux.hang("thinking")])
    async with host.open(model, settings=settings()) as h:
        assert await (await h.root.submit("hi")).answer() == "Hello"
        await h.root.submit("think hard")  # its run starts at seq 3
        await until_live(h, partial_is("thinking"))
        where = f"Conversation 'root' cannot be forked as 'b' in {host.path}"
        for at_seq in (None, 3):
            with pytest.raises(durable.ForkRefused) as refused:
                await h.root.fork("b", at_seq=at_seq)
            assert str(refused.value) == (f"{where}: 'root' has an active run (task 2) from seq 3 at that point; "
                                          f"fork before its input, or wait for it to end")
        assert await h.storage.get_live("b") is None
        await h.root.fork("b", at_seq=2)  # before the run's input: taken whole
        with pytest.raises(durable.ForkRefused) as refused:
            await h.root.fork("b", at_seq=1)
        assert str(refused.value) == f"{where}: conversation 'b' exists"
        with pytest.raises(durable.InvalidInput):
            await h.root.fork("c", at_seq=9)
        assert [e.seq for e in await h.conversation("b").entries()] == [1, 2]
        assert h.conversation("b").live() == r.Live(forked_from="root", forked_at=2)


async def test_a_fork_never_splits_a_tool_round_and_the_file_keeps_its_invariants(host):
    model = FauxModel([faux.reply("", tool_calls=[faux.call("echo", {"x": 1}, id="c")]), faux.reply("done")])
    echo = durable.define_tool("echo", "echo", execute=lambda args, api, ctx: args, replay="safe")
    async with host.open(model, settings=settings(), tools=[echo]) as h:
        assert await (await h.root.submit("go")).answer() == "done"
        with pytest.raises(durable.InvalidInput) as refused:
            await h.root.fork("b", at_seq=2)
        assert str(refused.value) == (
            f"Conversation 'root' cannot be forked as 'b' in {host.path}: seq 3 answers a tool call before at_seq 2, "
            f"so the fork would hold a call without its result; fork before the call's message or after its results")
        await h.root.fork("b", at_seq=3)
        await h.root.fork("c")
        await h.conversation("d").archive()  # an empty conversation can be archived too
    assert [type(e).__name__ for e in await entries_of(host.path, "b")] == [
        "UserEntry", "AssistantEntry", "ToolResultEntry"]
    assert await entries_of(host.path, "c") == await entries_of(host.path, "root")
    assert check_invariants(host.path) == []


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_archive_fork_and_seed_through_the_blocking_api(tmp_path, backend):
    path = str(tmp_path / "s.sqlite")
    with durable.sync.open_harness(path, model=FauxModel([faux.reply("Hi")]), backend=backend) as h:
        assert h.root.seed([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]) == 2
        fork = h.root.fork("f", at_seq=1)
        assert [e.entry for e in fork.entries()] == [r.UserEntry("a")]
        h.root.archive()
        with pytest.raises(durable.ConversationArchived):
            h.root.submit("c")
        h.root.unarchive()
        assert h.root.submit("c").answer() == "Hi"
    assert check_invariants(path) == []


async def test_a_crash_after_the_archive_mark_ends_the_run_archived_at_the_next_open(host):
    model = FauxModel([faux.hang("Once upon")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("story")
        await until_live(h, partial_is("Once upon"))

        def on_commit(number, batch):  # right after the stop mark, before the abort handler runs
            if any(t.stop == "archived" for t in batch.tasks):
                crash(h)

        h.storage.on_commit = on_commit
        with pytest.raises(BaseException):
            await h.root.archive()
        await h.storage.crashed.wait()
    async with host.open(FauxModel([]), settings=settings()) as h:
        with pytest.raises(durable.ConversationArchived):  # stopping for the archive already
            await h.root.submit("more")
        assert await h.root.submission(sub.id).wait() == r.Unanswered("archived", ARCHIVED)
        assert h.root.live().archived and h.root.live().run is None
        assert [(x.type, x.reason) for x in host.reports] == [("task_interrupted", "interrupted")]
    assert await host.transcript() == ["user", "assistant:aborted"]
    assert check_invariants(host.path) == []
