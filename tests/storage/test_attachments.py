"""The bytes of images and files: stored once per session by sha256, in the commit that first
references them, read back by hash, on every store (memory, SQLite, SQLite reopened after every
commit, PostgreSQL on trio and asyncio); and on disk, 100 requests carrying the same 1 MB image
grow a session file by about 1 MB, not 100."""

from __future__ import annotations

import hashlib
import os
import random

import pytest

import durable
from durable.errors import CommitFailed
from durable.models.faux import FauxModel, reply
from durable.records import Attachment, StoredEntry, Submission, TextPart, UserEntry
from durable.storage import Batch

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
PNG_SHA = hashlib.sha256(PNG).hexdigest()
PDF = b"%PDF-1.7\n\x00\xff binary"
PDF_SHA = hashlib.sha256(PDF).hexdigest()
REF = Attachment("image", PNG_SHA, "image/png", len(PNG))


async def test_attachments_are_stored_once_by_hash_and_read_back_only_as_asked(backend):
    store = backend.store()
    await store.open()
    sub = Submission("s1", "root", "look", parts=(TextPart("look"), REF))
    await store.commit(Batch(submissions=[sub], attachments={PNG_SHA: ("image/png", PNG)}))
    # The same bytes again (the same screenshot), with another file: the first write of a hash is kept.
    await store.commit(Batch(entries=[StoredEntry("root", 1, UserEntry("look", "s1", sub.parts))],
                             attachments={PNG_SHA: ("image/png", PNG), PDF_SHA: ("application/pdf", PDF)}))
    assert await store.get_attachments([PNG_SHA, PDF_SHA, "0" * 64]) == {PNG_SHA: PNG, PDF_SHA: PDF}
    assert await store.get_attachments([]) == {}
    assert (await store.get_submission("s1")).parts == (TextPart("look"), REF)
    await store.close()
    again = backend.store()
    await again.open()
    assert await again.get_attachments([PDF_SHA, PNG_SHA]) == {PNG_SHA: PNG, PDF_SHA: PDF}
    assert [e.entry.parts for e in await again.get_entries("root")] == [(TextPart("look"), REF)]
    await again.close()


async def test_a_refused_commit_stores_none_of_its_attachments(backend):
    store = backend.store()
    await store.open()
    await store.commit(Batch(entries=[StoredEntry("root", 1, UserEntry("hi"))]))
    with pytest.raises(CommitFailed):  # seq 1 again: the whole batch is refused
        await store.commit(Batch(entries=[StoredEntry("root", 1, UserEntry("again"))],
                                 attachments={PDF_SHA: ("application/pdf", PDF)}))
    assert await store.get_attachments([PDF_SHA]) == {}
    await store.close()


def session_bytes(path: str) -> int:
    return sum(os.path.getsize(path + end) for end in ("", "-wal") if os.path.exists(path + end))


async def test_100_requests_carrying_the_same_1_mb_image_grow_the_file_by_about_1_mb(tmp_path):
    path = str(tmp_path / "session.sqlite")
    picture = b"\x89PNG\r\n\x1a\n" + random.Random(7).randbytes(1_000_000)  # incompressible, as a real one
    model = FauxModel([reply("ok")] * 100, keep_requests=1)
    settings = durable.Settings(compaction=durable.Compaction(enabled=False))  # every request carries all 100
    async with durable.open_harness(path, model=model, settings=settings) as h:
        before = session_bytes(path)
        for n in range(100):
            sub = await h.root.submit([f"Screenshot {n}", durable.Image(picture)])
            await sub.answer()
        last = model.requests[-1]
        assert model.calls == 100
        assert sum(isinstance(p, Attachment) for e in last.messages for p in getattr(e, "parts", ())) == 100
        assert dict(last.attachments) == {hashlib.sha256(picture).hexdigest(): picture}
    grown = session_bytes(path) - before
    print(f"\n100 requests with the same 1 MB image grew the session by {grown:,} bytes")
    assert 1_000_000 < grown < 3_000_000
