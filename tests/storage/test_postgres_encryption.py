"""Encryption at rest in a PostgreSQL space (`PostgresStorage(..., encryption_key=)`, docs/spec.md
§8): bodies and attachments sealed as in a session file (attachments under keyed ids), nothing of
the text or the image readable in the server's rows; a wrong or missing key is `WrongKey` and
changes nothing; a plain space that holds rows is refused with a key; a prune sweeps by keyed id."""

from __future__ import annotations

import hashlib
import uuid

import pytest

import durable
from durable.models import faux
from durable.records import Answered
from durable.settings import Settings
from durable.storage import PostgresStorage, sealing
from durable.storage.rows import decode_rows

pytestmark = pytest.mark.anyio

SECRET = "zebra-mango-quartz"
IMAGE = b"\x89PNG\r\n\x1a\n" + SECRET.encode() * 40
SETTINGS = Settings(check_integrity=True)


def _rows(dsn: str, space: str) -> tuple[list[str], list[tuple[str, int, bytes]], str | None]:
    """The space's bodies, its attachments (key, size, stored bytes) and its key row, as stored."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        bodies = [b for t in ("tasks", "entries", "submissions", "documents", "texts")
                  for (b,) in conn.execute(f"SELECT body FROM durable.{t} WHERE space = %s", (space,))]
        attachments = [(k, n, bytes(d)) for k, n, d in conn.execute(
            "SELECT sha256, size, data FROM durable.attachments WHERE space = %s", (space,))]
        meta = conn.execute("SELECT value FROM durable.meta WHERE key = %s", (f"encryption:{len(space)}:{space}",))
        row = meta.fetchone()
    return bodies, attachments, None if row is None else row[0]


def _model(n: int = 1) -> faux.FauxModel:
    return faux.FauxModel([faux.reply(f"It is {SECRET}-answer")] * n)


async def test_a_space_made_with_a_key_stores_nothing_readable_and_reads_back(postgres_dsn) -> None:
    space = f"sealed-{uuid.uuid4().hex[:10]}"
    store = PostgresStorage(postgres_dsn, space, encryption_key="k1")
    async with durable.open_harness(store, model=_model(), settings=SETTINGS) as h:
        sub = await h.root.submit([f"what is {SECRET}?", durable.Image(IMAGE)])
        assert await sub.wait() == Answered(f"It is {SECRET}-answer", 2)
        assert decode_rows(store.stored_rows(), store.location).problems == []
    bodies, attachments, meta = _rows(postgres_dsn, space)
    assert meta is not None and len(bodies) == 5 and all(b.startswith("enc1:") for b in bodies)
    assert not any(SECRET in b for b in bodies)
    sealer = sealing.unlock(meta, "k1", store.location)
    assert sealer is not None
    sha = hashlib.sha256(IMAGE).hexdigest()
    [(key, size, data)] = attachments
    assert (key, size, len(data)) == (sealer.attachment_id(sha), len(IMAGE), len(IMAGE) + sealing.OVERHEAD)
    assert SECRET.encode() not in data

    again = PostgresStorage(postgres_dsn, space, encryption_key="k1")
    async with durable.open_harness(again, model=_model(), settings=SETTINGS) as h:
        entries = await h.root.entries()
        assert [e.entry.text for e in entries] == [f"what is {SECRET}?", f"It is {SECRET}-answer"]  # type: ignore[union-attr]
        assert await again.get_attachments([sha]) == {sha: IMAGE}
        context = await again.get_context("root", 1, 2)  # what a request reads back: the bodies opened
        assert [c[:9] for c in context.bodies] == ['{"type":"', '{"type":"']
        assert await (await h.root.submit("and again?")).answer() == f"It is {SECRET}-answer"  # a second turn


async def test_a_wrong_or_missing_key_is_refused_and_changes_nothing(postgres_dsn) -> None:
    space = f"sealed-{uuid.uuid4().hex[:10]}"
    async with durable.open_harness(PostgresStorage(postgres_dsn, space, encryption_key="right"), model=_model()) as h:
        await (await h.root.submit("hi")).answer()
    before = _rows(postgres_dsn, space)
    location = PostgresStorage(postgres_dsn, space).location
    key_id = sealing.unlock(before[2], "right", location).current  # type: ignore[union-attr]
    with pytest.raises(durable.WrongKey) as wrong:
        async with durable.open_harness(PostgresStorage(postgres_dsn, space, encryption_key="wrong"), model=_model()):
            pass
    import json

    wrong_id = sealing.derive("wrong", bytes.fromhex(json.loads(before[2])["salt"]))[1]  # type: ignore[arg-type]
    assert str(wrong.value) == (f"Session file {location} is encrypted with another key (key id {key_id}, this "
                                f"key's is {wrong_id}); nothing was changed")
    with pytest.raises(durable.WrongKey) as missing:
        async with durable.open_harness(PostgresStorage(postgres_dsn, space), model=_model()):
            pass
    assert str(missing.value) == (f"Session file {location} is encrypted: open it with its key (encryption_key=..., "
                                  f"or --key-file); nothing was changed")
    assert _rows(postgres_dsn, space) == before

    plain = f"plain-{uuid.uuid4().hex[:10]}"
    async with durable.open_harness(PostgresStorage(postgres_dsn, plain), model=_model()) as h:
        await (await h.root.submit("hi")).answer()
    with pytest.raises(durable.WrongKey) as refused:
        async with durable.open_harness(PostgresStorage(postgres_dsn, plain, encryption_key="k"), model=_model()):
            pass
    plain_location = PostgresStorage(postgres_dsn, plain).location
    assert str(refused.value) == (f"The session {plain_location} is not encrypted, and a space that holds rows cannot "
                                  f"be encrypted afterwards: open it without a key; nothing was changed")
    assert _rows(postgres_dsn, plain)[2] is None
    with pytest.raises(durable.EncryptionUnsupported) as given:
        async with durable.open_harness(PostgresStorage(postgres_dsn, plain), model=_model(), encryption_key="k"):
            pass
    assert str(given.value) == (f"encryption_key is for a session file path: PostgresStorage {plain_location} takes "
                                f"its key itself: PostgresStorage(dsn, space, encryption_key=...); nothing was opened")


async def test_a_prune_of_an_encrypted_space_sweeps_by_keyed_id(postgres_dsn) -> None:
    space = f"sealed-{uuid.uuid4().hex[:10]}"
    own = b"\x89PNG\r\n\x1a\n only in c1"
    store = PostgresStorage(postgres_dsn, space, encryption_key="k")
    async with durable.open_harness(store, model=_model(2)) as h:
        await (await h.conversation("c0").submit(["look", durable.Image(IMAGE)])).answer()
        await (await h.conversation("c1").submit(["look", durable.Image(IMAGE), durable.Image(own)])).answer()
        report = await h.prune(ended_before=None, keep_last=1)  # c1 ended last: kept
        assert (report.conversations, report.attachments) == (("c0",), 0)  # both images in c1 still
        report = await h.prune(ended_before=None)
        assert (report.conversations, report.attachments) == (("c1",), 2)
        assert await store.get_attachments([hashlib.sha256(IMAGE).hexdigest()]) == {}
    assert _rows(postgres_dsn, space)[1] == []
