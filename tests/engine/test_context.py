"""The model context kept in memory (durable.engine.context) and the `tokens` column (schema 3):
a request's messages are a view equal to the entries; a version-2 file with history opens,
migrates and sends exactly the messages it sent before; damage is still refused by name."""

from __future__ import annotations

import sqlite3

import anyio
import pytest

import durable
from durable import codec, records as r
from durable.engine.context import Context
from durable.models import FauxModel, faux
from durable.storage import rows as _rows
from durable.storage.sqlite.reader import SessionReader
from durable.storage.sqlite.schema import SCHEMA_VERSION
from durable.tokens import NOT_SENT, entry_tokens, in_context, stored_tokens

pytestmark = pytest.mark.anyio


def stored(seq, entry):
    return r.StoredEntry("root", seq, entry)


ENTRIES = [
    stored(1, r.UserEntry("hello there", "sub_1")),
    stored(2, r.AssistantEntry("", "tool_use", (r.ToolCall("c1", "lookup", '{"q": "x"}'),))),
    stored(3, r.ToolResultEntry("c1", "lookup", "found x")),
    stored(4, r.AssistantEntry("done", "stop")),
]


def test_the_messages_view_equals_the_entries_and_does_not_change_when_the_context_grows():
    ctx = Context(ENTRIES[:3])
    summary = r.CompactionEntry("earlier", 1)
    view = ctx.messages(len(ctx), (summary,), (ENTRIES[3].entry,))
    expected = (summary, *(e.entry for e in ENTRIES))
    assert view == expected and expected == view and list(expected) == view
    assert tuple(view) == expected and len(view) == 5
    assert view[0] is summary and view[-1] == ENTRIES[3].entry and view[1:3] == expected[1:3]
    with pytest.raises(IndexError):
        view[5]
    ctx.append(stored(5, r.UserEntry("more")))
    assert len(ctx) == 4 and view == expected  # a view is of the context as it was
    assert ctx.messages(len(ctx)) == tuple(e.entry for e in [*ENTRIES[:3], stored(5, r.UserEntry("more"))])
    assert view != expected[:-1]


def test_the_token_count_is_kept_by_appends_and_matches_a_recount():
    ctx = Context()
    for e in ENTRIES:
        ctx.append(e)
    assert ctx.tokens == sum(entry_tokens(e.entry) for e in ENTRIES) == Context(ENTRIES).tokens


def test_a_stored_context_decodes_an_entry_only_when_it_is_read():
    decoded = []

    def decode(seq, body):
        decoded.append(seq)
        return stored(seq, codec.loads(body, r.Entry))

    raw = _rows.raw_context([e.seq for e in ENTRIES], [stored_tokens(e.entry) for e in ENTRIES],
                            [codec.dumps(e.entry, r.Entry) for e in ENTRIES])
    assert raw.tokens == sum(entry_tokens(e.entry) for e in ENTRIES)  # every row counted and framed: the total
    ctx = Context.stored(raw, decode)
    assert decoded == [] and len(ctx) == 4 and ctx.seq_at(2) == 3
    assert ctx.tokens == sum(entry_tokens(e.entry) for e in ENTRIES)
    assert ctx[1] == ENTRIES[1] and decoded == [2]
    assert list(ctx) == ENTRIES and decoded == [2, 1, 3, 4]
    assert list(ctx) == ENTRIES and decoded == [2, 1, 3, 4]  # kept decoded


def test_unknown_tags_are_still_refused_naming_the_tag():
    with pytest.raises(codec.CodecError, match="unknown tag 'nope' \\(expected one of user, assistant, tool_result, "
                                              "compaction\\)"):
        codec.loads('{"type":"nope","text":"x"}', r.Entry)


def _downgrade_to_version_2(path):
    """The file as version 2 wrote it: no `tokens` column (version 3), nor what came after it."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE conversations")  # version 9
        conn.execute("DROP TABLE attachments")  # version 8
        conn.execute("DROP TABLE texts")  # version 7
        conn.execute("ALTER TABLE tasks DROP COLUMN texts")
        conn.execute("ALTER TABLE documents DROP COLUMN texts")
        conn.execute("DELETE FROM meta WHERE key IN ('session', 'barriers')")  # version 6
        conn.execute("ALTER TABLE entries DROP COLUMN tokens")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.close()


async def test_a_version_2_file_with_history_migrates_and_sends_the_same_messages(tmp_path):
    path = str(tmp_path / "s.sqlite")
    lookup = durable.define_tool("lookup", "Look up", {"type": "object", "properties": {"q": {"type": "string"}}},
                                 replay="safe", execute=lambda args, api, ctx: "found")
    script = []
    for i in range(3):
        call = faux.call("lookup", {"q": str(i)}, id=f"c{i}")
        script += [faux.reply("", tool_calls=[call]), faux.reply(f"answer {i}")]
    async with durable.open_harness(path, model=FauxModel(script), tools=[lookup]) as h:
        for i in range(3):
            assert isinstance(await (await h.root.submit(f"question {i}")).wait(), r.Answered)
    with SessionReader(path) as reader:
        history = reader.entries("root")
    # An aborted partial (never sent again) in the middle, as a crash leaves one.
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE entries SET body = ?, tokens = ? WHERE seq = 4",
                     (codec.dumps(r.AssistantEntry("half an ans", "aborted"), r.Entry), NOT_SENT))
    conn.close()
    history[3] = r.StoredEntry("root", 4, r.AssistantEntry("half an ans", "aborted"))
    _downgrade_to_version_2(path)
    with SessionReader(path) as reader:  # the reader reads the old file as it is
        assert reader.schema_version == 2 and reader.entries("root") == history

    model = FauxModel([faux.reply("fine")])
    async with durable.open_harness(path, model=model, tools=[lookup]) as h:
        assert await (await h.root.submit("next")).wait() == r.Answered("fine", len(history) + 2)
    asked = model.requests[0].messages[-1].submission_id
    expected = (*(e.entry for e in history if in_context(e.entry)), r.UserEntry("next", asked))
    assert model.requests[0].messages == expected
    assert tuple(model.requests[0].messages) == expected
    with SessionReader(path) as reader:
        assert reader.schema_version == SCHEMA_VERSION
    conn = sqlite3.connect(path)
    tokens = dict(conn.execute("SELECT seq, tokens FROM entries"))
    conn.close()
    assert tokens[4] == NOT_SENT
    assert {e.seq: stored_tokens(e.entry) for e in history} == {s: t for s, t in tokens.items() if s <= len(history)}


async def test_a_damaged_entry_inside_is_refused_when_a_model_reads_it_and_nothing_is_answered(tmp_path):
    path = str(tmp_path / "s.sqlite")
    async with durable.open_harness(path, model=FauxModel([faux.reply("first")])) as h:
        assert await (await h.root.submit("first")).wait() == r.Answered("first", 2)
    conn = sqlite3.connect(path)
    with conn:  # framed as the codec writes it, damaged inside
        conn.execute("""UPDATE entries SET body = '{"type":"assistant","text":5,"bogus":1}' WHERE seq = 2""")
    conn.close()

    await _refused_when_read(path, "second", seq=2)


async def _refused_when_read(path: str, text: str, *, seq: int) -> None:
    """The next input on `path` ends unanswered (storage_error) naming damaged entry `seq`, and
    no request reaches a model that reads its messages."""
    model = Reading([faux.reply("never")])
    async with durable.open_harness(path, model=model) as h:
        with anyio.fail_after(10):
            result = await (await h.root.submit(text)).wait()
        assert result.reason == "storage_error"
        assert f"Entry {seq} of conversation 'root' in {path} cannot be read" in result.detail
    assert model.requests == []


class Reading(FauxModel):
    """A model that reads its messages, as every provider does to send them."""

    def stream(self, request):
        list(request.messages)
        return super().stream(request)


async def _history(path, turns):
    """A session whose root conversation holds `turns` answered inputs (2 entries each)."""
    model = FauxModel([faux.reply(f"answer {i}") for i in range(turns)])
    async with durable.open_harness(path, model=model) as h:
        for i in range(turns):
            assert await (await h.root.submit(f"input {i}")).wait() == r.Answered(f"answer {i}", 2 * i + 2)


def _sql(path, statement, *args):
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(statement, args)
    conn.close()


async def test_the_sqlite_store_reads_a_context_with_odd_or_damaged_rows_row_by_row(tmp_path):
    # The store reads a context as one joined text; a row that would not split back out of it
    # (a raw record separator) or was never counted makes it read the context again row by row:
    # every other row is still given as stored, with its tokens. A row damaged inside (not even an
    # entry's framing) is given as stored: the engine finds it when it decodes it.
    from durable.storage import SQLiteStorage
    from durable.storage.protocol import RawContext

    path = str(tmp_path / "s.sqlite")
    await _history(path, 4)
    with SessionReader(path) as reader:
        history = reader.entries("root")
    bodies = [codec.dumps(e.entry, r.Entry) for e in history]
    tokens = [stored_tokens(e.entry) for e in history]
    seqs = list(range(1, 9))

    async def context(longest=None):
        store = SQLiteStorage(path)
        await store.open()
        try:
            if longest is not None:  # SQLite's longest string or blob, in bytes
                await store.call_in_writer(lambda c: c.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, longest))
            raw = await store.get_context("root", 1, 8)
        finally:
            await store.close()
        counted = raw.tokens if isinstance(raw.tokens, int) else list(raw.tokens)
        return RawContext(list(raw.seqs), list(raw.bodies), counted)

    assert await context() == RawContext(seqs, bodies, sum(tokens))
    assert sum(map(len, bodies)) > 200 > max(map(len, bodies))
    assert await context(longest=200) == RawContext(seqs, bodies, sum(tokens))  # too long to join: row by row
    separated = '{"type":"assistant","text":"a\x1eb","stop_reason":"stop"}'  # a raw control character: damaged
    _sql(path, "UPDATE entries SET body = ? WHERE seq = 4", separated)
    assert await context() == RawContext(seqs, [*bodies[:3], separated, *bodies[4:]], sum(tokens))
    _sql(path, """UPDATE entries SET body = '{"type":"nope"}' WHERE seq = 6""")  # given as stored
    assert await context() == RawContext(seqs, [*bodies[:3], separated, bodies[4], '{"type":"nope"}', *bodies[6:]],
                                         sum(tokens))
    _sql(path, "UPDATE entries SET tokens = NULL WHERE seq = 7")
    assert await context() == RawContext(seqs, [*bodies[:3], separated, bodies[4], '{"type":"nope"}', *bodies[6:]],
                                         [*tokens[:6], None, tokens[7]])


async def test_a_damaged_entry_that_would_not_split_out_of_the_joined_context_is_refused_naming_it(tmp_path):
    path = str(tmp_path / "s.sqlite")
    await _history(path, 4)
    separated = '{"type":"assistant","text":"a\x1eb","stop_reason":"stop"}'  # a raw control character
    _sql(path, "UPDATE entries SET body = ? WHERE seq = 4", separated)
    await _refused_when_read(path, "next", seq=4)


async def test_an_entry_cut_short_is_loaded_unread_and_found_when_a_model_reads_it_naming_it(tmp_path):
    # No longer even framed as an entry: the context is loaded without looking into it (the store
    # gives it with the stored total, nothing is decoded up front); the model reading its messages
    # meets it: the run ends storage_error naming the entry, its conversation and the file.
    from durable.storage import SQLiteStorage

    path = str(tmp_path / "s.sqlite")
    await _history(path, 3)
    _sql(path, """UPDATE entries SET body = '{"type":"assistant","text":"ans' WHERE seq = 4""")
    store = SQLiteStorage(path)
    await store.open()
    raw = await store.get_context("root", 1, 6)
    await store.close()
    decoded = []
    ctx = Context.stored(raw, lambda seq, body: decoded.append(seq) or _rows.entry("root", seq, body, path))
    assert isinstance(raw.tokens, int) and len(ctx) == 6 and decoded == []
    await _refused_when_read(path, "next", seq=4)


async def test_the_sqlite_store_reads_a_long_context_in_parts_and_one_damaged_part_makes_it_read_row_by_row(tmp_path):
    # A context longer than a part (512 seqs), too short to stream, is read a part at a time; a
    # row in any part that would not split back out, or was never counted, makes the whole
    # context read again row by row, exactly as a short one.
    from durable.storage import Batch, SQLiteStorage
    from durable.storage.protocol import RawContext
    from durable.storage.sqlite.context import STREAM_FROM

    path = str(tmp_path / "s.sqlite")
    n = STREAM_FROM - 24
    history = [stored(s, r.UserEntry(f"input {s}") if s % 2 else r.AssistantEntry(f"answer {s}", "stop"))
               for s in range(1, n + 1)]
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(entries=history))
    await store.close()
    bodies = [codec.dumps(e.entry, r.Entry) for e in history]
    tokens = [stored_tokens(e.entry) for e in history]
    seqs = list(range(1, n + 1))

    async def context():
        store = SQLiteStorage(path)
        await store.open()
        try:
            raw = await store.get_context("root", 1, n)
            assert await store.call_in_writer(lambda c: c.execute("PRAGMA cache_size").fetchone()[0]) == -2000
        finally:
            await store.close()
        counted = raw.tokens if isinstance(raw.tokens, int) else list(raw.tokens)
        return RawContext(list(raw.seqs), list(raw.bodies), counted)

    assert await context() == RawContext(seqs, bodies, sum(tokens))
    separated = '{"type":"assistant","text":"a\x1eb","stop_reason":"stop"}'  # a raw control character: damaged
    _sql(path, "UPDATE entries SET body = ? WHERE seq = 700", separated)
    bodies[699] = separated
    assert await context() == RawContext(seqs, bodies, sum(tokens))
    _sql(path, """UPDATE entries SET body = '{"type":"nope"}' WHERE seq = 900""")
    bodies[899] = '{"type":"nope"}'  # damaged inside: given as stored (found when it is decoded)
    assert await context() == RawContext(seqs, bodies, sum(tokens))
    _sql(path, "UPDATE entries SET body = ? WHERE seq = 900", codec.dumps(history[899].entry, r.Entry))
    _sql(path, "UPDATE entries SET tokens = NULL WHERE seq = 800")
    bodies[899] = codec.dumps(history[899].entry, r.Entry)
    tokens[799] = None
    assert await context() == RawContext(seqs, bodies, tokens)


async def test_a_long_context_streams_in_behind_the_commits_made_meanwhile_and_a_close_ends_it_by_name(tmp_path):
    # From STREAM_FROM seqs (a plain file, counted, no attachment) the store returns at once with
    # the stored count and total; the rows come a part (512 seqs) a job, each queued behind the
    # commits made meanwhile. A part that would not split back out is read row by row; damage
    # inside an entry is given as stored. Reading a text that has not come waits for it; one that
    # never comes (the store closed, rows that disagree with the stored count) raises, naming it.
    from durable.errors import CorruptSession, StorageClosed
    from durable.storage import Batch, SQLiteStorage
    from durable.storage.joined import StreamedTexts
    from durable.storage.sqlite.context import STREAM_FROM

    path = str(tmp_path / "s.sqlite")
    n = STREAM_FROM + 300
    history = [stored(s, r.UserEntry(f"input {s}") if s % 2 else r.AssistantEntry(f"answer {s}", "stop"))
               for s in range(1, n + 1)]
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(entries=history))
    await store.close()
    bodies = [codec.dumps(e.entry, r.Entry) for e in history]
    separated = '{"type":"assistant","text":"a\x1eb","stop_reason":"stop"}'
    _sql(path, "UPDATE entries SET body = ? WHERE seq = 700", separated)
    bodies[699] = separated
    _sql(path, """UPDATE entries SET body = '{"type":"nope"}' WHERE seq = 900""")
    bodies[899] = '{"type":"nope"}'

    store = SQLiteStorage(path)
    await store.open()
    held = []  # while holding: the parts held back (a commit made meanwhile is not behind the read)

    def hold(part, texts):
        if held and held[0] == "hold" and part is not None:
            store._streams.add(texts)
            held.append((part, texts))
        else:
            SQLiteStorage._stream_part(store, part, texts)

    store._stream_part = hold
    held.append("hold")
    raw = await store.get_context("root", 1, n)
    assert isinstance(raw.bodies, StreamedTexts) and raw.attachments == 0
    assert len(raw.bodies) == n and raw.tokens == sum(stored_tokens(e.entry) for e in history)
    await store.commit(Batch(entries=[stored(n + 1, r.UserEntry("later"))]))
    assert raw.bodies.given == 0 and len(held) == 2
    part = held.pop()
    held.clear()
    await store.call_in_writer(lambda _: hold(*part))  # then the parts, one job each (on the writer thread)
    assert list(raw.bodies) == bodies and list(raw.seqs) == list(range(1, n + 1))
    assert await store.call_in_writer(lambda c: c.execute("PRAGMA cache_size").fetchone()[0]) == -2000
    held.append("hold")  # the store closes before the first part is read: its readers learn it, by name
    raw = await store.get_context("root", 1, n + 1)
    await store.close()
    assert isinstance(raw.bodies, StreamedTexts) and raw.bodies.given == 0 and len(held) == 2
    with pytest.raises(StorageClosed, match=f"Session file {path} is closed"):
        raw.bodies[0]

    _sql(path, "DELETE FROM entries WHERE seq = 1000")  # the stored count says one more
    store = SQLiteStorage(path)
    await store.open()
    raw = await store.get_context("root", 1, n + 1)
    assert raw.bodies[0] == bodies[0]
    with pytest.raises(CorruptSession, match=f"Conversation 'root' in {path} holds {n} entries of its model "
                                             f"context, but its stored count says {n + 1}"):
        raw.bodies[n]
    await store.close()


def test_joined_texts_split_a_part_only_when_one_of_its_texts_is_read():
    from durable.storage.joined import SEP, JoinedTexts

    texts = [f"text {i}" + (" mark" if i in (1, 5) else "") for i in range(7)]
    joined = JoinedTexts([SEP.join(texts[:3]), SEP.join(texts[3:4]), SEP.join(texts[4:])], [3, 1, 3])
    assert len(joined) == 7 and joined._split == [None, None, None]
    assert joined[4] == texts[4] and joined._split[:2] == [None, None]  # only the part read is split
    assert joined[-1] == texts[6] and joined[2:5] == texts[2:5] and list(joined) == texts
    with pytest.raises(IndexError):
        joined[7]
    fresh = JoinedTexts([SEP.join(texts[:3]), SEP.join(texts[3:4]), SEP.join(texts[4:])], [3, 1, 3])
    assert fresh.containing(" mark") == [1, 5] and fresh._split[1] is None  # a part without it stays joined
    assert fresh.containing(" mark", 2) == [5]
    fresh.forget(5)
    assert fresh[5] == "" and fresh.containing(" mark") == [1]


def test_a_context_of_joined_texts_decodes_an_entry_when_read_and_finds_attachments_without_decoding_others():
    from durable.storage.joined import SEP, JoinedTexts
    from durable.storage.protocol import RawContext

    picture = r.Attachment("image", "ab" * 32, "image/png", 9)
    entries = [r.UserEntry("hello", "s1"), r.AssistantEntry("hi", "stop"), r.UserEntry("look", "s2", (picture,)),
               r.AssistantEntry("seen", "stop"), r.UserEntry("bye", "s3")]
    bodies = [codec.dumps(e, r.Entry) for e in entries]
    decoded = []

    def decode(seq, body):
        decoded.append(seq)
        return stored(seq, codec.loads(body, r.Entry))

    raw = RawContext([1, 2, 3, 4, 5], JoinedTexts([SEP.join(bodies[:2]), SEP.join(bodies[2:])], [2, 3]), 30)
    ctx = Context.stored(raw, decode)
    assert len(ctx) == 5 and ctx.tokens == 30 and decoded == []
    assert ctx[3] == stored(4, entries[3]) and decoded == [4]
    assert ctx.attachments(5) == [picture] and decoded == [4, 3]
    assert list(ctx) == [stored(s, e) for s, e in enumerate(entries, 1)] and decoded == [4, 3, 1, 2, 5]
    assert ctx.attachments(5) == [picture] and decoded == [4, 3, 1, 2, 5]  # each entry looked at once


async def test_a_long_conversation_reopened_sends_its_whole_context_streamed_in_and_a_damaged_entry_ends_it(tmp_path):
    # The first request after the open is built while the context streams in: a model that reads
    # its messages (as every provider does) gets exactly the stored entries, then the input; an
    # entry cut short in the middle ends the next run storage_error naming it, nothing sent.
    from durable.storage import Batch, SQLiteStorage
    from durable.storage.sqlite.context import STREAM_FROM

    path = str(tmp_path / "s.sqlite")
    n = STREAM_FROM + 300
    history = [stored(s, r.UserEntry(f"input {s}") if s % 2 else r.AssistantEntry(f"answer {s}", "stop"))
               for s in range(1, n + 1)]
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(entries=history, live={"root": r.Live()}))
    await store.close()

    model = Reading([faux.reply("fine")])
    async with durable.open_harness(path, model=model) as h:
        assert await (await h.root.submit("next")).wait() == r.Answered("fine", n + 2)
    asked = model.requests[0].messages[-1].submission_id
    assert model.requests[0].messages == (*(e.entry for e in history), r.UserEntry("next", asked))

    _sql(path, """UPDATE entries SET body = '{"type":"assistant","text":"ans' WHERE seq = 700""")
    await _refused_when_read(path, "again", seq=700)
