"""Long bodies of a session file stored packed (SQLite schema 10, `durable.storage.packing`): a
JSON body of 2,048 characters or more is stored deflated (`z1:` + base64) when that is a tenth
smaller or more and it holds none of the texts SQL looks for in stored bodies; every read gives
the JSON back (rows, contexts joined, streamed and row by row, another process's reader), a packed
body that does not unpack is damage named by the run that reads it, an encrypted file
seals without packing, a rekey keeps packed bodies packed, and a version-9 file keeps its plain
rows."""

from __future__ import annotations

import base64
import hashlib
import os
import sqlite3
import zlib

import anyio
import pytest
from hypothesis import given, strategies as st

import durable
from durable import codec
from durable.models import FauxModel, faux
from durable.records import (
    AssistantEntry,
    Attachment,
    Done,
    Entry,
    GenerationLive,
    Live,
    PartialMessage,
    StoredEntry,
    Terminal,
    TextPart,
    ToolResultEntry,
    UserEntry,
)
from durable.storage import Batch, SQLiteStorage, sealing
from durable.storage.joined import JoinedTexts, StreamedTexts
from durable.storage.packing import MARKS, PACK_FROM, PACKED, pack, unpack, unpack_all, unpack_joined
from durable.storage.rows import decode_rows
from durable.storage.sqlite.context import STREAM_FROM
from durable.storage.sqlite.reader import SessionReader
from durable.storage.sqlite.schema import SCHEMA_VERSION
from durable.storage.sweep import MARK as REFERENCE_MARK

from .builders import noise, task

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "trio"

LONG = "".join(f"line {i:05d} of a long streamed answer, as a model writes it\n" for i in range(2_000))
ANSWER = AssistantEntry(LONG, "stop")


def sql(path: str, statement: str, *args: object) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        with conn:
            return conn.execute(statement, args).fetchall()
    finally:
        conn.close()


# --------------------------------------------------------------------------- the format


@given(st.text(min_size=PACK_FROM // 4, max_size=4 * PACK_FROM))
def test_any_text_packed_unpacks_to_itself(text):
    body = codec.dumps(AssistantEntry(text * 4, "stop"), Entry)
    assert unpack(pack(body)) == body
    assert unpack(body) == body  # a JSON body is never taken for a packed one


def test_a_body_is_packed_from_2048_characters_when_it_gains_a_tenth():
    short, long = '"' + "a" * (PACK_FROM - 3) + '"', '"' + "a" * (PACK_FROM - 2) + '"'
    assert (len(short), len(long)) == (PACK_FROM - 1, PACK_FROM)
    assert pack(short) == short
    packed = pack(long)
    assert packed.startswith(PACKED) and len(packed) < 100 and unpack(packed) == long
    assert zlib.decompress(base64.b64decode(packed[len(PACKED):])) == long.encode()  # the format, spelled out
    body = codec.dumps(UserEntry("ünïcödé " * 400), Entry)
    assert unpack(pack(body)) == body and pack(body).startswith(PACKED)


def test_a_body_that_does_not_pack_smaller_is_kept_as_it_is():
    body = codec.dumps(UserEntry(noise(10_000)), Entry)
    assert pack(body) == body  # base64 of deflated random text: longer than the text
    # Under a tenth smaller does not pay for a decompression at every read; a tenth does.
    for pad, gains_a_tenth in ((1_000, False), (1_300, True)):
        padded = codec.dumps(UserEntry(noise(9_000) + "x" * pad), Entry)
        gained = 1 - len(PACKED + base64.b64encode(zlib.compress(padded.encode(), 1)).decode()) / len(padded)
        assert (0.05 < gained < 0.1, 0.1 <= gained < 0.15)[gains_a_tenth]
        assert (pack(padded) != padded) == gains_a_tenth and unpack(pack(padded)) == padded


@pytest.mark.parametrize("mark", MARKS)
def test_a_body_holding_a_text_sql_looks_for_is_never_packed(mark):
    assert set(MARKS) == {'{"type":"attachment"', REFERENCE_MARK}
    body = '{"type":"user","text":"' + "a" * 5000 + '","parts":[' + mark + "]}"
    assert pack(body) == body
    assert pack(body.replace(mark, "")).startswith(PACKED)


def test_a_packed_body_that_does_not_unpack_is_given_as_it_is():
    for damaged in (PACKED + "not base64!", PACKED + base64.b64encode(b"not deflate").decode(),
                    PACKED + base64.b64encode(zlib.compress(b"\xff\xfe not UTF-8")).decode(), PACKED):
        assert unpack(damaged) == damaged
        assert unpack_joined(f"{{}}\x1e{damaged}\x1e{{}}") == f"{{}}\x1e{damaged}\x1e{{}}"
    body = codec.dumps(ANSWER, Entry)
    held_sep = PACKED + base64.b64encode(zlib.compress(b'{"a":"\x1e"}')).decode()  # would split in two
    assert unpack_joined(f"{pack(body)}\x1e{held_sep}\x1e{{}}") == f"{body}\x1e{held_sep}\x1e{{}}"
    assert unpack_joined("{}\x1e{}") == "{}\x1e{}"
    plain = ["{}", "[]"]
    assert unpack_all(plain) is plain and unpack_all([pack(body), "{}"]) == [body, "{}"]


# --------------------------------------------------------------------------- a session file


async def test_every_long_row_is_stored_packed_and_every_read_gives_it_back(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    gen = task(1, state=Terminal(Done({"text": LONG})))
    live = Live(generation=GenerationLive(1, PartialMessage("short")), run=None)
    entries = [StoredEntry("root", 1, UserEntry("write it")), StoredEntry("root", 2, ANSWER),
               StoredEntry("root", 3, ToolResultEntry("c1", "grep", LONG)), StoredEntry("root", 4, UserEntry("ok"))]
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(tasks=[gen], entries=entries, live={"root": live}))
    stored = dict(sql(path, "SELECT seq, body FROM entries"))
    assert [stored[s].startswith(PACKED) for s in (1, 2, 3, 4)] == [False, True, True, False]
    assert len(stored[2]) < len(LONG) / 4
    assert sql(path, "SELECT body FROM tasks")[0][0].startswith(PACKED)
    assert await store.get_entries("root") == entries
    assert await store.get_task(1) == gen and await store.find_tasks(kind="generation") == [gen]
    raw = await store.get_context("root", 1, 4)
    assert list(raw.bodies) == [codec.dumps(e.entry, Entry) for e in entries]
    await store.close()
    with SessionReader(path) as reader:
        assert reader.entries("root") == entries and reader.tasks() == [gen]
        records = decode_rows(reader.rows(), path)
        assert records.problems == [] and records.entries["root"] == entries and records.tasks[1] == gen
    store = SQLiteStorage(path)
    opened = await store.open()
    assert opened.conversations["root"].live == live
    assert await store.get_entries("root") == entries
    await store.close()


@pytest.mark.parametrize("entries", [600, 1100], ids=["joined", "streamed"])
async def test_a_long_context_is_given_unpacked_joined_streamed_or_row_by_row(tmp_path, entries):
    path = os.fspath(tmp_path / "s.db")
    history = [StoredEntry("root", s, AssistantEntry(f"{s}: " + LONG[:3000], "stop") if s % 50 == 0
                           else UserEntry(f"input {s}")) for s in range(1, entries + 1)]
    expected = [codec.dumps(e.entry, Entry) for e in history]
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(entries=history))
    assert sum(b.startswith(PACKED) for (b,) in sql(path, "SELECT body FROM entries")) == entries // 50
    raw = await store.get_context("root", 1, entries)
    assert type(raw.bodies) is (StreamedTexts if entries > STREAM_FROM else JoinedTexts)
    assert list(raw.bodies) == expected
    await store.call_in_writer(lambda c: c.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 2_000))  # row by row
    assert list((await store.get_context("root", 1, entries)).bodies) == expected
    await store.close()


async def test_a_long_row_that_references_an_attachment_stays_plain_where_sql_finds_it(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    png = b"\x89PNG" + bytes(range(256))
    ref = Attachment("image", hashlib.sha256(png).hexdigest(), "image/png", len(png))
    entry = StoredEntry("root", 1, UserEntry(LONG, parts=(TextPart(LONG), ref)))
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(entries=[entry, StoredEntry("root", 2, ANSWER)],
                             attachments={ref.sha256: ("image/png", png)}))
    await store.close()
    bodies = dict(sql(path, "SELECT seq, body FROM entries"))
    assert not bodies[1].startswith(PACKED) and all(mark in bodies[1] for mark in MARKS)
    assert bodies[2].startswith(PACKED)
    assert sql(path, "SELECT entries, attachments FROM conversations") == [(2, 1)]  # counted by SQL too
    store = SQLiteStorage(path)
    await store.open()
    assert await store.get_entries("root") == [entry, StoredEntry("root", 2, ANSWER)]
    assert await store.get_attachments([ref.sha256]) == {ref.sha256: png}
    await store.close()


class Reading(FauxModel):
    """A model that reads its messages, as every provider does to send them."""

    def stream(self, request):
        list(request.messages)
        return super().stream(request)


@pytest.mark.parametrize("damage", ["not base64!", base64.b64encode(b"not deflate").decode()],
                         ids=["base64", "deflate"])
async def test_a_packed_entry_that_does_not_unpack_ends_the_run_that_reads_it_naming_it(tmp_path, damage):
    path = os.fspath(tmp_path / "s.db")
    async with durable.open_harness(path, model=FauxModel([faux.reply(LONG)])) as h:
        assert await (await h.root.submit("write it")).wait() == durable.Answered(LONG, 2)
    assert sql(path, "SELECT body FROM entries WHERE seq = 2")[0][0].startswith(PACKED)
    sql(path, "UPDATE entries SET body = ? WHERE seq = 2", PACKED + damage)
    model = Reading([faux.reply("never")])
    async with durable.open_harness(path, model=model) as h:
        with anyio.fail_after(10):
            result = await (await h.root.submit("again")).wait()
    assert result.reason == "storage_error"
    assert f"Entry 2 of conversation 'root' in {path} cannot be read" in result.detail
    assert model.requests == []


# --------------------------------------------------------------------------- encrypted files

TURN = [StoredEntry("root", 1, UserEntry("write it")), StoredEntry("root", 2, ANSWER)]


async def committed(path: str, batch: Batch, key: str | None = None) -> None:
    store = SQLiteStorage(path, encryption_key=key)
    await store.open()
    await store.commit(batch)
    await store.close()


async def entries_read(path: str, key: str | None = None) -> list[StoredEntry]:
    store = SQLiteStorage(path, encryption_key=key)
    await store.open()
    try:
        return await store.get_entries("root")
    finally:
        await store.close()


def opened_bodies(path: str, key: str) -> list[str]:
    """Every entry's body of the encrypted file at `path` opened, still packed if it is."""
    sealer = sealing.unlock(sql(path, "SELECT value FROM meta WHERE key = 'encryption'")[0][0], key, path)
    assert sealer is not None
    return [sealer.open(b, path) for (b,) in sql(path, "SELECT body FROM entries ORDER BY seq")]


async def test_an_encrypted_file_seals_long_bodies_unpacked_and_a_rekey_keeps_them_so(tmp_path):
    """Compressed then sealed, a row's length would say how well its text compressed (a CRIME-like
    guess at a secret beside text one controls): an encrypted file does not pack."""
    path = os.fspath(tmp_path / "s.db")
    await committed(path, Batch(entries=TURN), key="old")
    assert all(b.startswith(sealing.PREFIX) for (b,) in sql(path, "SELECT body FROM entries"))
    before = opened_bodies(path, "old")
    assert before == [codec.dumps(e.entry, Entry) for e in TURN]
    store = SQLiteStorage(path, encryption_key="old")
    await store.open()
    assert await store.get_entries("root") == TURN
    assert list((await store.get_context("root", 1, 2)).bodies) == [codec.dumps(e.entry, Entry) for e in TURN]
    assert await store.rekey("new", rows_per_commit=1) > 0
    await store.close()
    assert opened_bodies(path, "new") == before  # sealed again as they were
    assert await entries_read(path, "new") == TURN


async def test_a_plain_file_encrypted_by_a_rekey_keeps_its_packed_bodies_packed(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    await committed(path, Batch(entries=TURN))
    packed = sql(path, "SELECT body FROM entries WHERE seq = 2")[0][0]
    assert packed.startswith(PACKED)
    store = SQLiteStorage(path)
    await store.open()
    assert await store.rekey("key", rows_per_commit=1) > 0
    await store.close()
    assert opened_bodies(path, "key")[1] == packed
    assert await entries_read(path, "key") == TURN


# --------------------------------------------------------------------------- schema 10


async def test_a_version_9_file_keeps_its_plain_rows_and_packs_what_it_writes_from_then_on(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    await committed(path, Batch(entries=TURN))
    plain = codec.dumps(ANSWER, Entry)
    sql(path, "UPDATE entries SET body = ? WHERE seq = 2", plain)  # as version 9 wrote it
    sql(path, "UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    with SessionReader(path) as reader:
        assert reader.schema_version == 9 and reader.entries("root") == TURN
    new = [StoredEntry("root", 3, UserEntry("again")), StoredEntry("root", 4, AssistantEntry(LONG + "!", "stop"))]
    assert await entries_read(path) == TURN  # migrated as it opens
    await committed(path, Batch(entries=new))
    bodies = dict(sql(path, "SELECT seq, body FROM entries"))
    assert bodies[2] == plain and bodies[4].startswith(PACKED)
    with SessionReader(path) as reader:
        assert reader.schema_version == SCHEMA_VERSION == 10
        assert reader.entries("root") == TURN + new
