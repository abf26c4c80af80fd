"""Retention on every store (docs/spec.md §6): the ended conversations, and their deletion in
bounded commits that never touch anything live."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest

from durable.records import (
    Answered,
    Attachment,
    Done,
    GenerationLive,
    Live,
    Part,
    PartialMessage,
    StoredEntry,
    Submission,
    Terminal,
    TextPart,
    UserEntry,
)
from durable.storage import Batch, SQLiteStorage
from durable.storage.retention import TOMBSTONE, Ended, PruneReport, choose

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


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
PNG_SHA = hashlib.sha256(PNG).hexdigest()
PDF = b"%PDF-1.7\n\x00\xff only in a"
PDF_SHA = hashlib.sha256(PDF).hexdigest()
PNG_REF = Attachment("image", PNG_SHA, "image/png", len(PNG))
PDF_REF = Attachment("file", PDF_SHA, "application/pdf", len(PDF), "report.pdf")


def _with_attachments(cid: str, tid: int, parts: tuple[Part, ...], blobs: dict[str, tuple[str, bytes]]) -> Batch:
    """An ended conversation whose input and first entry hold `parts`, their bytes in `blobs`."""
    answered = Answered("answer", 2)
    return Batch(
        tasks=[task(tid, state=Terminal(Done()), conversation_id=cid, updated_at=float(tid))],
        entries=[StoredEntry(cid, 1, UserEntry("look", f"s{tid}", parts)), assistant(2, f"answer of {cid}", cid)],
        submissions=[Submission(f"s{tid}", cid, "look", parts=parts, seq=1, status=answered)],
        live={cid: Live()},
        attachments=blobs,
    )


async def test_a_prune_sweeps_the_attachments_no_kept_row_references(store, backend) -> None:
    # "a" holds the image and the file; "c" holds the same image (stored once, shared).
    both = {PNG_SHA: ("image/png", PNG), PDF_SHA: ("application/pdf", PDF)}
    await store.commit(_with_attachments("a", 1, (TextPart("look"), PNG_REF, PDF_REF), both))
    await store.commit(_with_attachments("c", 3, (PNG_REF,), {PNG_SHA: ("image/png", PNG)}))
    assert await store.get_attachments([PNG_SHA, PDF_SHA]) == {PNG_SHA: PNG, PDF_SHA: PDF}

    report = await store.delete_conversations(["a"], rows_per_commit=2)
    # a's 5 rows in 4 commits as before, then one commit deletes the file only "a" referenced;
    # the image "c" still references stays.
    assert (report.conversations, report.rows, report.commits, report.attachments) == (("a",), 6, 5, 1)
    assert await store.get_attachments([PNG_SHA, PDF_SHA]) == {PNG_SHA: PNG}
    assert [getattr(e.entry, "parts", None) for e in await store.get_entries("c")] == [(PNG_REF,), None]

    report = await store.delete_conversations(["c"], rows_per_commit=2)
    assert (report.conversations, report.rows, report.commits, report.attachments) == (("c",), 6, 5, 1)
    assert await store.get_attachments([PNG_SHA, PDF_SHA]) == {}
    report = await store.delete_conversations([], rows_per_commit=2)  # nothing left to sweep: no commit
    assert report == PruneReport()


async def test_an_attachment_written_again_by_a_kept_conversation_is_never_swept(store, backend) -> None:
    # The file arrives in "b" (kept) after "a" (pruned) first stored it: its bytes are not written
    # again (the first write of a hash is kept), but "b"'s reference keeps them.
    await store.commit(_with_attachments("a", 1, (PDF_REF,), {PDF_SHA: ("application/pdf", PDF)}))
    await store.commit(_with_attachments("b", 3, (PDF_REF,), {PDF_SHA: ("application/pdf", PDF)}))
    report = await store.delete_conversations(["a"], rows_per_commit=500)
    assert (report.conversations, report.rows, report.commits, report.attachments) == (("a",), 5, 3, 0)
    assert await store.get_attachments([PDF_SHA]) == {PDF_SHA: PDF}


SEALED_LOOKING = "enc1:" + "x" * 5000  # a partial answer quoting a sealed row, say: kept apart in pieces


async def test_a_prune_sweeps_past_a_plain_piece_that_starts_like_a_sealed_body(store, backend) -> None:
    """The sweep reads every row that may reference an attachment; a piece of a long text is any
    text, so one starting "enc1:" in a plain store is plain (it raised WrongKey: "encrypted: open
    it with its key", and the prune failed)."""
    await store.commit(_with_attachments("a", 1, (PNG_REF,), {PNG_SHA: ("image/png", PNG)}))
    live = Live(generation=GenerationLive(1, PartialMessage(SEALED_LOOKING)))
    await store.commit(Batch(live={"b": live}))
    report = await store.delete_conversations(["a"])
    assert (report.conversations, report.attachments) == (("a",), 1)
    assert await store.get_live("b") == live


async def test_a_prune_cut_off_by_a_crash_is_finished_at_the_next_open_past_such_a_piece(tmp_path) -> None:
    """The same sweep runs when an open finishes a prune a crash cut off: the file never opened."""
    path = os.fspath(tmp_path / "session.db")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(_with_attachments("a", 1, (PNG_REF,), {PNG_SHA: ("image/png", PNG)}))
    live = Live(generation=GenerationLive(1, PartialMessage(SEALED_LOOKING)))
    await store.commit(Batch(live={"b": live}))
    await store.close()
    conn = sqlite3.connect(path)  # as the prune's first commit leaves the file when the process dies
    with conn:
        conn.execute("INSERT INTO meta (key, value) VALUES (?, '')", (TOMBSTONE + "a",))
        conn.execute("DELETE FROM documents WHERE conversation_id = 'a'")
    conn.close()
    store = SQLiteStorage(path)
    opened = await store.open()  # finishes the prune: its sweep included
    assert opened.conversations["b"].live == live
    assert await store.get_attachments([PNG_SHA]) == {}
    await store.close()
