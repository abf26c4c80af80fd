"""Retention on every store (docs/spec.md §6): the ended conversations, and their deletion in
bounded commits that never touch anything live."""

from __future__ import annotations

import pytest

from durable.records import Answered, Done, Live, Terminal
from durable.storage import Batch
from durable.storage.retention import Ended, PruneReport, choose

from .builders import assistant, busy, submission, task, user

pytestmark = pytest.mark.anyio


def _ended_conversation(cid: str, tid: int, at: float) -> Batch:
    return Batch(
        tasks=[task(tid, state=Terminal(Done()), conversation_id=cid, updated_at=at)],
        entries=[user(1, f"question of {cid}", cid), assistant(2, f"answer of {cid}", cid)],
        submissions=[submission(f"s{tid}", conversation_id=cid, status=Answered("answer", 2))],
        live={cid: Live()},
    )


async def test_delete_ended_conversations_in_bounded_commits(store, backend) -> None:
    await store.commit(_ended_conversation("a", 1, 10.0))
    await store.commit(_ended_conversation("c", 3, 30.0))
    await store.commit(Batch(tasks=[task(2, conversation_id="b", updated_at=20.0)], entries=[user(1, "hi", "b")],
                             submissions=[submission("s2", conversation_id="b")], live={"b": busy(2, "s2")}))
    assert await store.ended() == [Ended("a", 10.0), Ended("c", 30.0)]

    report = await store.delete_conversations(["a", "b"], rows_per_commit=2)
    # a: its live document (with its tombstone), then 4 rows two by two, then the tombstone goes;
    # b is live: left alone.
    assert report == PruneReport(("a",), 5, 4)
    assert await store.get_entries("a") == []
    assert await store.get_live("a") is None
    assert await store.get_submission("s1") is None
    assert await store.find_tasks(conversation_id="a") == []
    assert [e.entry.text for e in await store.get_entries("b")] == ["hi"]  # type: ignore[union-attr]
    assert await store.get_live("b") == busy(2, "s2")
    assert await store.ended() == [Ended("c", 30.0)]

    await store.close()
    again = backend.store()
    opened = await again.open()
    try:
        assert sorted(opened.conversations) == ["b", "c"]
        assert [t.id for t in opened.live_tasks] == [2]
        assert await again.get_entries("a") == []
    finally:
        await again.close()
    await store.open()


def test_choose_keeps_the_newest_and_the_recent() -> None:
    ended = [Ended("old", 1.0), Ended("older", 0.5), Ended("new", 9.0), Ended("mid", 5.0)]
    assert choose(ended, ended_before=6.0) == ["mid", "old", "older"]
    assert choose(ended, ended_before=6.0, keep_last=2) == ["old", "older"]
    assert choose(ended, ended_before=None, keep_last=1) == ["mid", "old", "older"]
    with pytest.raises(ValueError, match="keep_last must be 0 or more, not -1"):
        choose(ended, ended_before=None, keep_last=-1)
