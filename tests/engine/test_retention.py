"""Deleting ended conversations from a running harness (docs/spec.md §8): `Conversation.delete`
and `Harness.prune`, on a file and in memory; live conversations are never touched."""

from __future__ import annotations

import hashlib
import os

import anyio
import pytest

import durable
from durable.models.faux import FauxModel, Hang, reply
from durable.records import Answered, UserEntry
from durable.testing.invariants import check_invariants
from durable.testing.scripts import by_input

pytestmark = pytest.mark.anyio


def _model():
    return by_input({"keep working": [Hang()]}, default=reply("Done."))


@pytest.fixture(params=["file", "memory"])
def where(request: pytest.FixtureRequest, tmp_path) -> object:
    return os.fspath(tmp_path / "s.sqlite") if request.param == "file" else durable.MemoryStorage("retention")


async def test_prune_by_end_time_and_keep_last(where) -> None:
    clock = durable.FakeClock(100.0)
    async with durable.open_harness(where, model=_model(), clock=clock) as h:
        for cid in ("a", "b", "c", "d"):
            assert await (await h.conversation(cid).submit(f"hello {cid}")).answer() == "Done."
            clock.advance(100.0)  # a ends at 100, b at 200, c at 300, d at 400
        busy = await h.conversation("busy").submit("keep working")

        report = await h.prune(ended_before=350.0, keep_last=3)
        assert report.conversations == ("a",)  # b and c ended before 350 but are among the 3 newest
        assert report.rows == 5 and report.commits == 3
        report = await h.prune(ended_before=350.0)
        assert report.conversations == ("b", "c")
        assert await h.conversation("b").entries() == []
        assert [e.entry.text for e in await h.conversation("d").entries()] == ["hello d", "Done."]  # type: ignore[union-attr]
        # A deleted conversation starts again from nothing.
        assert await (await h.conversation("a").submit("again")).wait() == Answered("Done.", 2)
        assert [type(e.entry) for e in await h.conversation("a").entries()][0] is UserEntry
        assert (await h.prune()).conversations == ("a", "d")  # the busy one never
        assert (await busy.get()).conversation_id == "busy"
    if isinstance(where, str):
        assert check_invariants(where) == []


async def test_delete_refuses_a_conversation_that_has_not_ended(where) -> None:
    async with durable.open_harness(where, model=_model()) as h:
        await h.conversation("busy").submit("keep working")
        with pytest.raises(durable.ConversationNotEnded) as refused:
            await h.conversation("busy").delete()
        assert str(refused.value) == (f"Conversation 'busy' in {h.storage.location} is not ended (it has a live task "
                                      f"or an unsettled input, or does not exist); nothing was deleted")
        with pytest.raises(durable.ConversationNotEnded):
            await h.conversation("never").delete()
        assert await (await h.conversation("x").submit("hi")).answer() == "Done."
        report = await h.conversation("x").delete()
        assert report.conversations == ("x",)
        assert await h.conversation("x").entries() == []
        assert len(await h.conversation("busy").entries()) == 1


class _GatedMemory(durable.MemoryStorage):
    """A memory store whose deletions wait for the test's gate."""

    def __init__(self) -> None:
        super().__init__("gated")
        self.started = anyio.Event()
        self.gate = anyio.Event()

    async def delete_conversations(self, ids, *, rows_per_commit=500):  # type: ignore[no-untyped-def]
        self.started.set()
        await self.gate.wait()
        return await super().delete_conversations(ids, rows_per_commit=rows_per_commit)


async def test_input_to_a_conversation_being_deleted_is_refused() -> None:
    store = _GatedMemory()
    async with durable.open_harness(store, model=_model()) as h:
        assert await (await h.conversation("x").submit("hi")).answer() == "Done."
        async with anyio.create_task_group() as tg:
            tg.start_soon(h.conversation("x").delete)
            await store.started.wait()
            with pytest.raises(durable.ConversationNotEnded) as refused:
                await h.conversation("x").submit("more")
            assert str(refused.value) == ("Conversation 'x' in <memory:gated> is being deleted; the input was not "
                                          "accepted")
            store.gate.set()
        assert await (await h.conversation("x").submit("more")).wait() == Answered("Done.", 2)


async def test_delete_sweeps_the_images_only_it_held_and_a_model_still_reads_the_shared_one(where) -> None:
    shared, own = b"\x89PNG\r\n\x1a\n in both", b"\x89PNG\r\n\x1a\n in a only"
    model = FauxModel([reply("Done.")] * 3, keep_requests=None)
    async with durable.open_harness(where, model=model) as h:
        sha = {data: hashlib.sha256(data).hexdigest() for data in (shared, own)}
        await (await h.conversation("a").submit(["look", durable.Image(shared), durable.Image(own)])).answer()
        await (await h.conversation("b").submit(["look", durable.Image(shared)])).answer()
        report = await h.conversation("a").delete()
        assert (report.conversations, report.attachments) == (("a",), 1)
        assert await h.storage.get_attachments(list(sha.values())) == {sha[shared]: shared}
        assert await (await h.conversation("b").submit("and now?")).answer() == "Done."
        assert dict(model.requests[-1].attachments) == {sha[shared]: shared}  # "b"'s image, read back
        report = await h.conversation("b").delete()
        assert (report.conversations, report.attachments) == (("b",), 1)
        assert await h.storage.get_attachments(list(sha.values())) == {}
    if isinstance(where, str):
        assert check_invariants(where) == []
