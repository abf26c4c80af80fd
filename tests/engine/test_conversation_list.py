"""`Harness.conversations()`: every conversation of the session as committed, by id, exactly:
created by an input, seeded, forked, archived (even one never used), deleted, a sub-agent's, one
whose run is active, and the same list after a crash."""

from __future__ import annotations

import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux
from durable.testing import crash

from .conftest import partial_is, settings, until_live, used

pytestmark = pytest.mark.anyio


async def test_each_conversation_created_seeded_forked_archived_or_deleted_is_listed_as_committed(host):
    model = FauxModel([faux.reply("Paris."), faux.reply("Rome.")])
    async with host.open(model, settings=settings()) as h:
        assert h.conversations() == []
        h.conversation("named only")  # a handle writes nothing: not a conversation yet
        assert h.root.live() == r.Live()  # nor does reading one
        assert h.conversations() == []
        assert await (await h.root.submit("Capital of France?")).wait() == durable.Answered("Paris.", 2)
        assert h.conversations() == [r.ConversationInfo("root", 2, usage=used(1, 10, 2))]
        imported = h.conversation("imported")
        await imported.seed([{"role": "user", "content": "Capital of Spain?"},
                             {"role": "assistant", "content": "Madrid."}])
        fork = await imported.fork("what-if", at_seq=1)
        assert await (await fork.submit("Capital of Italy?")).wait() == durable.Answered("Rome.", 3)
        await imported.archive()
        await h.conversation("never used").archive()
        assert h.conversations() == [
            r.ConversationInfo("imported", 2, archived=True),
            r.ConversationInfo("never used", 0, archived=True),
            r.ConversationInfo("root", 2, usage=used(1, 10, 2)),
            r.ConversationInfo("what-if", 3, forked_from="imported", forked_at=1, usage=used(1, 10, 2)),
        ]
        await h.conversation("never used").unarchive()  # committed, as a document equal to a new one's
        await h.root.delete()
        assert h.conversations() == [
            r.ConversationInfo("imported", 2, archived=True),
            r.ConversationInfo("never used", 0),
            r.ConversationInfo("what-if", 3, forked_from="imported", forked_at=1, usage=used(1, 10, 2)),
        ]
        listed = h.conversations()
    async with host.open(FauxModel([]), settings=settings()) as h:
        assert h.conversations() == listed


async def test_a_run_in_flight_is_busy_and_after_a_crash_the_list_is_the_one_committed(host):
    model = FauxModel([faux.reply("Paris."), faux.hang("Once upon")])
    async with host.open(model, settings=settings()) as h:
        assert await (await h.root.submit("Capital of France?")).wait() == durable.Answered("Paris.", 2)
        await h.root.fork("retry", at_seq=1)
        await h.conversation("old").archive()
        story = await h.conversation("story").submit("A story, please")
        await until_live(h, partial_is("Once upon"), "story")
        before = [
            r.ConversationInfo("old", 0, archived=True),
            r.ConversationInfo("retry", 1, forked_from="root", forked_at=1),
            r.ConversationInfo("root", 2, usage=used(1, 10, 2)),
            r.ConversationInfo("story", 1, busy=True, usage=used(1)),  # counted as the request starts
        ]
        assert h.conversations() == before
        crash(h)
    async with host.open(FauxModel([faux.reply("The end.")]), settings=settings()) as h:
        assert h.conversations() == before  # as committed: the cut-off run is still active
        await h.resume()
        await host.clock.wait_for_timer("retry:2")  # the story's generation, task 2
        host.clock.advance(1.0)
        assert await h.conversation("story").submission(story.id).wait() == durable.Answered("The end.", 3)
        assert h.conversations() == [*before[:3], r.ConversationInfo("story", 3, usage=used(2, 10, 2))]


async def test_a_sub_agents_conversation_is_listed_with_its_parent(host):
    child_model = FauxModel([faux.reply("About 545,000.")])
    researcher = durable.subagent("researcher", "Finds facts", instructions="Cite sources.", model=child_model)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("researcher", {"task": "Population of Lisbon?"})]),
                       faux.reply("Lisbon has about 545,000 people.")])
    async with host.open(model, tools=[researcher], settings=settings()) as h:
        answer = await (await h.root.submit("How many people live in Lisbon?")).wait()
        assert answer == durable.Answered("Lisbon has about 545,000 people.", 4)
        assert h.conversations() == [
            r.ConversationInfo("root", 4, usage=used(2, 20, 17, tool_calls=1)),  # its own: `h.root.usage()` adds the child's
            r.ConversationInfo("root/researcher-2", 2, parent="root", usage=used(1, 10, 4)),
        ]
        assert h.root.usage() == used(3, 30, 21, tool_calls=1)


async def test_a_closed_harness_lists_nothing(host):
    async with host.open(FauxModel([]), settings=settings()) as h:
        pass
    with pytest.raises(durable.HarnessClosed):
        h.conversations()
