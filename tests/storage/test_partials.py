"""Partial texts appended beside the session file (issue 25, item 1; `durable.storage.sqlite.partials`):
a lazy commit that only appends to long texts is one record in `<file>-partials`, no transaction;
a lazy transaction leaves them there (and puts there the texts it starts), the next barrier folds
them into the table and empties the file, so does a clean close; an open takes back what a
killed process left there, up to its last whole record. And a long answer stored once: its
submission refers to its entry (`rows.answers_by_entry`)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys

import anyio
import pytest

import durable
from durable.models import FauxModel, faux
from durable.records import (
    AssistantEntry,
    GenerationLive,
    Live,
    PartialMessage,
    Running,
    StoredEntry,
    SubmissionStatus,
    ToolSlot,
    UserEntry,
)
from durable.storage import Batch, SQLiteStorage
from durable.storage.rows import decode_rows, encode_batch
from durable.storage.sqlite import partials as partials_module
from durable.storage.sqlite.partials import SUFFIX, parse
from durable.storage.sqlite.reader import SessionReader
from durable.storage.sqlite.write import held_texts
from durable.storage.texts import streams_of
from durable.tasks.tool import ToolProgress
from durable.testing.powercut import FileImage

from . import partials_child, tool_output_child
from .builders import task

pytestmark = pytest.mark.anyio

ANSWER = "".join(f"line {i:05d} of a long answer\n" for i in range(2_000))  # 58 kB


def partial(text: str, reasoning: str = "") -> Live:
    return Live(generation=GenerationLive(1, PartialMessage(text, reasoning=reasoning)))


def at(n: int) -> Live:
    """The partial answer of `n` characters, with reasoning of 500 fewer."""
    return partial(ANSWER[:n], ANSWER[:n - 500])


def table_chars(path: str) -> int:
    """Characters of the pieces of long texts in the table."""
    with SessionReader(path) as reader:
        return sum(len(body) for (body,) in reader._all("SELECT body FROM texts"))


def side(path: str) -> int:
    return os.path.getsize(path + SUFFIX) if os.path.exists(path + SUFFIX) else -1


def wal(path: str) -> int:
    return os.path.getsize(path + "-wal")


async def streamed(path: str, *ends: int) -> SQLiteStorage:
    """A store whose partial answer and reasoning started in the table (`at(2000)`, a barrier)
    and grew to `at(n)` for each of `ends` by lazy commits."""
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(live={"root": at(2000)}))
    for n in ends:
        await store.commit(Batch(live={"root": at(n)}, barrier=False))
    return store


async def test_appends_go_beside_the_file_and_the_next_barrier_folds_them_and_empties_it(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(live={"root": at(2000)}))
    frames, commits = wal(path), store.commits
    for n in (3000, 5000, 9000):
        await store.commit(Batch(live={"root": at(n)}, barrier=False))
    assert (wal(path), store.commits, store._writes.appended) == (frames, commits + 3, 3)  # no transaction
    assert side(path) > 0
    assert await store.get_live("root") == at(9000)
    with SessionReader(path) as reader:  # another process reads the table and the appends beside it
        assert reader.live_documents() == {"root": at(9000)}
        assert decode_rows(reader.rows(), path).live == {"root": at(9000)}
        assert table_chars(path) == 2000 + 1500
    kept = side(path)
    await store.commit(Batch(live={"other": Live()}, barrier=False))  # a lazy transaction leaves them there
    assert (side(path), store._writes.appended, store.commits) == (kept, 3, commits + 4)
    with SessionReader(path) as reader:
        assert reader.live_documents() == {"other": Live(), "root": at(9000)}
        assert table_chars(path) == 2000 + 1500
    await store.commit(Batch(live={"third": Live()}))  # a barrier folds them: the side file is never fsynced
    assert side(path) == 0
    with SessionReader(path) as reader:
        assert reader.live_documents() == {"other": Live(), "root": at(9000), "third": Live()}
        assert table_chars(path) == 9000 + 8500
    await store.close()
    assert side(path) == -1  # an empty side file is removed at close


async def test_a_commit_that_writes_anything_else_is_a_transaction(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    store = await streamed(path)
    before = store._writes.appended
    await store.commit(Batch(live={"root": Live(generation=GenerationLive(2, PartialMessage(ANSWER[:3000])))},
                             barrier=False))  # the body changed (another attempt)
    await store.commit(Batch(live={"root": partial("another " + ANSWER[:3000])}, barrier=False))  # not grown
    await store.commit(Batch(live={"root": partial(ANSWER[:4000])}))  # a barrier
    assert (store._writes.appended, side(path)) == (before, 0)
    assert await store.get_live("root") == partial(ANSWER[:4000])
    await store.close()


async def test_an_open_takes_back_the_appends_a_killed_store_left_up_to_its_last_whole_record(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    store = await streamed(path, 3000, 5000)
    whole = side(path)
    await store.commit(Batch(live={"root": at(9000)}, barrier=False))
    torn = side(path) - 3
    store._writes.partials = None  # as if killed: the file is left as it is
    await store.close()
    os.truncate(path + SUFFIX, torn)  # the last record cut short
    again = SQLiteStorage(path)
    opened = await again.open()
    assert opened.conversations["root"].live == at(5000)
    assert side(path) == whole  # cut after the last whole record
    await again.commit(Batch(live={"root": at(6000)}, barrier=False))
    with open(path + SUFFIX, "rb") as f:  # the next record starts a new deflate stream after the cut
        data = f.read()
    await again.close()  # a clean close folds them into the file: no side file is left
    assert side(path) == -1
    records, end = parse(data, again._writes._session)
    assert end == len(data)
    assert [[(n, before, len(text)) for n, before, text in r] for r in records] == [
        [(1, 2000, 1000), (2, 1500, 1000)], [(1, 3000, 2000), (2, 2500, 2000)], [(1, 5000, 1000), (2, 4500, 1000)]]
    third = SQLiteStorage(path)
    assert (await third.open()).conversations["root"].live == at(6000)
    await third.close()


def tool_flush(n: int, barrier: bool = False) -> Batch:
    """A running tool's flush of `ANSWER[:n]`: its task's output and its slot's."""
    running = task(2, kind="tool", state=Running(), checkpoint=ToolProgress(ANSWER[:n]))
    return Batch(tasks=[running], live={"root": Live(tools=(ToolSlot("call_2", "grep", 2, ANSWER[:n]),))},
                 barrier=barrier)


async def test_an_open_takes_back_a_tools_appends_once_for_its_task_and_its_slot(tmp_path):
    """A running tool's output is one stream for its task and its slot: a flush is one append
    beside the file, which an open (after a kill: the file left as it is) applies once, and both
    rows read the output it gives."""
    path = os.fspath(tmp_path / "s.db")
    store = SQLiteStorage(path)
    await store.open()

    await store.commit(tool_flush(2000, barrier=True))
    for n in (3000, 5000, 9000):
        await store.commit(tool_flush(n))
    store._writes.partials = None  # as if killed: the file is left as it is
    await store.close()
    with open(path + SUFFIX, "rb") as f:
        records, end = parse(f.read(), store._writes._session)
    assert [[(n, before, len(text)) for n, before, text in r] for r in records] == [
        [(1, 2000, 1000)], [(1, 3000, 2000)], [(1, 5000, 4000)]]
    os.truncate(path + SUFFIX, end - 3)  # the last record cut short
    again = SQLiteStorage(path)
    opened = await again.open()
    assert [t.checkpoint.output for t in opened.live_tasks] == [ANSWER[:5000]]
    assert [s.output for s in opened.conversations["root"].live.tools] == [ANSWER[:5000]]
    await again.commit(tool_flush(6000))
    await again.commit(tool_flush(7000, barrier=True))  # folds them: the table holds the output once
    with SessionReader(path) as reader:
        assert table_chars(path) == 7000
        assert [t.checkpoint.output for t in reader.tasks(kind="tool")] == [ANSWER[:7000]]
    await again.close()


async def test_a_tools_output_is_one_stream_from_the_length_its_slot_keeps_apart(tmp_path):
    """From `LIVE_LONG` (256) characters, the slot's threshold, not `LONG` (1,024): between the two
    a flush is an append beside the file too, not a transaction writing the task's row again."""
    path = os.fspath(tmp_path / "s.db")
    store = SQLiteStorage(path)
    await store.open()

    await store.commit(tool_flush(300, barrier=True))
    assert streams_of(store._writes.texts.column("task:2")) == {"output": 1}
    commits, appended = store.commits, store._writes.appended
    for n in (400, 700, 1000):
        await store.commit(tool_flush(n))
    assert (store.commits - commits, store._writes.appended - appended) == (3, 3)
    with SessionReader(path) as reader:
        assert [t.checkpoint.output for t in reader.tasks(kind="tool")] == [ANSWER[:1000]]
    await store.close()


async def test_a_damaged_record_ends_what_is_taken_back_and_another_sessions_file_is_ignored(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    store = await streamed(path, 3000, 5000)
    store._writes.partials = None
    await store.close()
    with open(path + SUFFIX, "r+b") as f:
        data = bytearray(f.read())
        data[-2] ^= 0xFF  # the last record fails its CRC
        f.seek(0)
        f.write(data)
    again = SQLiteStorage(path)
    assert (await again.open()).conversations["root"].live == at(3000)
    again._writes.partials = None
    await again.close()
    other = os.fspath(tmp_path / "other.db")
    store = await streamed(other)
    await store.close()
    os.replace(path + SUFFIX, other + SUFFIX)  # records of another session beside this file
    store = SQLiteStorage(other)
    assert (await store.open()).conversations["root"].live == at(2000)
    assert side(other) == 0
    await store.close()


def test_sigkill_mid_stream_keeps_the_last_committed_partial_on_the_aborted_entry(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    child = subprocess.Popen([sys.executable, partials_child.__file__, path], stdout=subprocess.PIPE, text=True,
                             cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        kept = side(path)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert kept > 0  # the partial's appends were beside the file, not in a transaction
    with SessionReader(path) as reader:  # read with the appends the killed process left beside the file
        assert reader.live_documents()["root"].generation.message.text == partials_child.PARTIAL
        [sub] = reader.submissions()

    async def reopen() -> tuple[list[StoredEntry], SubmissionStatus, int]:
        async with durable.open_harness(path, model=FauxModel([faux.reply("Done.")])) as h:
            status = await h.root.submission(sub.id).wait()
            return await h.root.entries(), status, side(path)

    entries, status, after = anyio.run(reopen, backend="trio")
    assert after == 0
    assert [(e.seq, type(e.entry).__name__) for e in entries][:2] == [(1, "UserEntry"), (2, "AssistantEntry")]
    assert isinstance(entries[0].entry, UserEntry) and entries[0].entry.text == "Write a long answer"
    aborted = entries[1].entry
    assert isinstance(aborted, AssistantEntry) and aborted.text == partials_child.PARTIAL
    assert aborted.stop_reason == "aborted"
    assert status == durable.Answered("Done.", entries[-1].seq)


async def test_a_long_answer_is_stored_once_and_read_back_whole(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    text = ANSWER[:30_000]
    model = FauxModel([faux.reply(text)], token_size=1000)
    async with durable.open_harness(path, model=model) as h:
        status = await (await h.root.submit("Write a long answer")).wait()
    assert isinstance(status, durable.Answered) and status.text == text
    with SessionReader(path) as reader:
        body = reader._all("SELECT body FROM submissions")[0][0]
        assert text[:100] not in body and '"text":"","seq":2,"text_is_entry":true' in body
        records = decode_rows(reader.rows(), path)
        [sub] = reader.submissions()
    assert records.problems == [] and sub.status == durable.Answered(text, 2)
    assert records.submissions == {sub.id: sub}
    store = SQLiteStorage(path)
    await store.open()
    assert (await store.get_submission(sub.id)).status == durable.Answered(text, 2)
    await store.close()


async def test_an_answer_stored_by_reference_whose_entry_is_missing_is_corrupt_not_empty(tmp_path):
    """The entry an answer refers to (`text_is_entry`) gone or damaged: every read of the
    submission is `CorruptSession` naming the file, the submission and the entry, never an empty answer."""
    path = os.fspath(tmp_path / "s.db")
    text = ANSWER[:30_000]
    async with durable.open_harness(path, model=FauxModel([faux.reply(text)], token_size=1000)) as h:
        sub = await h.root.submit("Write a long answer", id="long")
        assert await sub.wait() == durable.Answered(text, 2)
    expected = {
        "missing": f"Submission 'long' in {path} cannot be read: its answer is the text of entry 2 of "
                   "conversation 'root', which is missing",
        "damaged": f"Submission 'long' in {path} cannot be read: its answer is the text of entry 2 of "
                   "conversation 'root', which is damaged"}
    for how, change in [("damaged", "UPDATE entries SET body = '{\"kind\":\"assistant\"}' WHERE seq = 2"),
                        ("missing", "DELETE FROM entries WHERE seq = 2")]:
        conn = sqlite3.connect(path)
        with conn:
            conn.execute(change)
        conn.close()
        store = SQLiteStorage(path)
        await store.open()
        try:
            with pytest.raises(durable.CorruptSession) as caught:
                await store.get_submission("long")
            assert (str(caught.value), caught.value.location) == (expected[how], path)
        finally:
            await store.close()
        with SessionReader(path) as reader:
            with pytest.raises(durable.CorruptSession, match=re.escape(expected[how])):
                reader.submissions()
            with pytest.raises(durable.CorruptSession, match=re.escape(expected[how])):
                reader.rows()


class SideWrites:
    """Stands for `os` in `durable.storage.sqlite.partials`: notes every write and truncation of
    the side file (`FileImage.pending`, as `durable.testing.powercut` keeps them)."""

    def __init__(self) -> None:
        self.image = FileImage(bytearray(), None)
        self.fd: int | None = None
        self._at = 0

    def __getattr__(self, name: str):
        return getattr(os, name)

    def open(self, name, *args):
        fd = os.open(name, *args)
        if name.endswith(SUFFIX):
            self.fd = fd
        return fd

    def lseek(self, fd, offset, how):
        self._at = os.lseek(fd, offset, how)
        return self._at

    def write(self, fd, data):
        n = os.write(fd, data)
        if fd == self.fd:
            self.image.pending.append(("write", self._at, bytes(data[:n])))
            self._at += n
        return n

    def ftruncate(self, fd, size):
        os.ftruncate(fd, size)
        if fd == self.fd:
            self.image.pending.append(("truncate", size, b""))


async def test_after_a_power_cut_the_side_file_gives_a_whole_record_or_the_committed_text_never_garbage(
        tmp_path, monkeypatch):
    """The side file is never fsynced: a power cut may keep any of its writes since it was made,
    in any order (holes read as zeros), some torn at a sector boundary, a truncation lost or
    kept. Whatever it kept, an open gives the text as of the last barrier or as of a whole
    record after it: never a text that was not committed."""
    writes = SideWrites()
    monkeypatch.setattr(partials_module, "os", writes)
    path = os.fspath(tmp_path / "s.db")
    store = await streamed(path, 3000, 5000, 9000)
    await store.commit(Batch(live={"root": at(9500)}))  # a barrier: folds them, empties the file
    for n in (12_000, 15_000, 15_500, 20_000):
        await store.commit(Batch(live={"root": at(n)}, barrier=False))
    monkeypatch.setattr(partials_module, "os", os)  # noted: the stores opened below write nothing there
    assert [op for op, _, _ in writes.image.pending].count("truncate") == 1
    committed = {n: at(n) for n in (9500, 12_000, 15_000, 15_500, 20_000)}
    found: dict[int, int] = {}
    for seed in range(150):
        image = writes.image.cut(torn=True, rng=random.Random(seed))
        copy = tmp_path / f"cut{seed}"
        copy.mkdir()
        for name in os.listdir(tmp_path):  # the database files as synced at the barrier
            if name.startswith("s.db") and not name.endswith((SUFFIX, "-shm")):
                shutil.copy(tmp_path / name, copy / name)
        if image is not None:
            (copy / ("s.db" + SUFFIX)).write_bytes(image)
        with SessionReader(os.fspath(copy / "s.db")) as reader:
            read = reader.live_documents()["root"]
        again = SQLiteStorage(os.fspath(copy / "s.db"))
        opened = await again.open()
        await again.close()
        assert opened.conversations["root"].live == read
        (n,) = [n for n, live in committed.items() if live == read]
        found[n] = found.get(n, 0) + 1
    await store.close()
    assert set(found) == set(committed), found  # every outcome met, and only those


async def test_a_text_growing_by_transactions_rewrites_its_last_piece_only(tmp_path):
    """Without the side file (a barrier each time, as an encrypted file or PostgreSQL writes), a
    growing text writes its last stored piece again and the new ones, never the pieces before."""
    store = SQLiteStorage(os.fspath(tmp_path / "s.db"))
    await store.open()
    written: list[list[int]] = []
    held = store._writes.texts
    for n in (2000, 9000, 12_000):
        before = held.stream("live:root", "generation").stored if held.has("live:root") else 0
        await store.commit(Batch(live={"root": partial(ANSWER[:n])}))
        written.append([before, held.stream("live:root", "generation").stored])
    assert written == [[0, 2000], [2000, 9000], [9000, 12_000]]
    assert [n & 0xFFFFF for n, _ in held.stream("live:root", "generation").puts()] == [3]
    await store.close()


# ------------------------------------------------------------------ a tool's output

TOOL_LINES = [f"output line {i:04d} of a tool that writes a lot\n" for i in range(400)]  # 20 kB


async def test_a_tool_output_grows_beside_the_file_while_its_task_row_keeps_its_stamp(tmp_path):
    """A tool's output flush leaves its task row as it was (`updated_at` kept, `OUTPUT_STAMP`):
    past the lengths kept apart it is appended beside the file, no transaction; the reader of
    another process and `durable inspect` see the exact output so far. Once the row's stamp is
    `OUTPUT_STAMP` old, a flush stamps it again (a transaction)."""
    from durable.tasks.tool.kind import OUTPUT_STAMP

    path = os.fspath(tmp_path / "s.db")
    clock = durable.FakeClock(1_000_000.0)
    to_test, from_tool = anyio.create_memory_object_stream[int](1)
    to_tool, from_test = anyio.create_memory_object_stream[None](1)

    async def dump(args, api, ctx):
        for i, line in enumerate(TOOL_LINES):
            await api.output(line)  # committed before it returns (interval 0)
            if i + 1 in (60, 300, 301):
                await to_test.send(i + 1)
                await from_test.receive()
        return "dumped"

    tool = durable.define_tool("dump", "Writes a long output", execute=dump, replay="unsafe")
    model = FauxModel([faux.reply("", tool_calls=[faux.call("dump", {}, id="c1")]), faux.reply("Done.")])
    settings = durable.Settings(progress=durable.Progress(0, 0), check_integrity=False)
    async with durable.open_harness(path, model=model, tools=[tool], settings=settings, clock=clock) as h:
        sub = await h.root.submit("Dump it")
        assert await from_tool.receive() == 60
        frames, commits, appended = wal(path), h.storage.commits, h.storage._writes.appended
        [started] = await h.tasks(kind="tool")
        clock.advance(OUTPUT_STAMP / 2)  # the flushes keep the stamp of the row's last commit
        await to_tool.send(None)
        assert await from_tool.receive() == 300
        assert (wal(path), h.storage.commits - commits, h.storage._writes.appended - appended) == (frames, 240, 240)
        assert side(path) > 0
        so_far = "".join(TOOL_LINES[:300])
        with SessionReader(path) as reader:
            [task] = reader.tasks(kind="tool")
            assert (task.checkpoint.output, task.updated_at) == (so_far, started.updated_at)
            assert [s.output for s in reader.live_documents()["root"].tools] == [so_far]
        done = subprocess.run([sys.executable, "-m", "durable.cli", "inspect", path, "--json"], capture_output=True,
                              text=True, check=True)  # another process
        shown = json.loads(done.stdout)
        conn = sqlite3.connect(path)  # an open remembers the same task rows as the writes did
        try:
            assert held_texts(conn).task_rows == h.storage._writes.texts.task_rows != {}
        finally:
            conn.close()
        assert [s["output"] for s in shown["live"]["root"]["tools"]] == [so_far]
        clock.advance(OUTPUT_STAMP / 2)
        await to_tool.send(None)
        assert await from_tool.receive() == 301
        assert wal(path) > frames and side(path) > 0  # stamped again: a lazy transaction; the appends stay beside
        [task] = await h.tasks(kind="tool")
        assert (task.checkpoint.output, task.updated_at) == (so_far + TOOL_LINES[300], started.updated_at + OUTPUT_STAMP)
        await to_tool.send(None)
        assert await sub.wait() == durable.Answered("Done.", 4)
        [result] = [e.entry for e in await h.root.entries() if e.entry.__class__.__name__ == "ToolResultEntry"]
        assert result.content == "dumped"


def test_sigkill_mid_output_keeps_the_tool_output_up_to_its_last_whole_record(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    child = subprocess.Popen([sys.executable, tool_output_child.__file__, path], stdout=subprocess.PIPE, text=True,
                             cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        assert child.stdout is not None
        first, last, ready = (child.stdout.readline() for _ in range(3))
        kept = side(path)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert ready == "ready\n" and first == last and first.startswith("wal ")  # no WAL frame while it grew
    assert kept > 0
    with SessionReader(path) as reader:  # the task's output and its slot's: one stream, one append a flush
        columns = reader._all("SELECT texts FROM tasks WHERE kind = 'tool' UNION ALL SELECT texts FROM documents")
        (session,) = reader._all("SELECT value FROM meta WHERE key = 'session'")[0]
        lazy = partials_module.lazy_tag(reader._conn, path)
    assert [json.loads(col) for (col,) in columns] == [{"output": 1}, {"tool:2": 1}]
    with open(path + SUFFIX, "rb") as f:
        records = partials_module.committed(parse(f.read(), session)[0], lazy)
    assert {n for record in records for n, _, _ in record} == {1} and {len(r) for r in records} == {1}
    with open(path + SUFFIX, "r+b") as f:  # the last record cut short, as by a kill in its write
        f.truncate(kept - 3)
    cut = tool_output_child.OUTPUT[:-len(tool_output_child.LINES[-1])]
    with SessionReader(path) as reader:  # read with the appends the killed process left beside the file
        [task] = reader.tasks(kind="tool")
        assert task.checkpoint.output == cut
        assert [s.output for s in reader.live_documents()["root"].tools] == [cut]
        [sub] = reader.submissions()
    assert tool_results_after_reopen(path, sub.id) == [
        f"Tool dump was interrupted and may have partially run\nPartial output:\n{cut}"]
    assert side(path) == -1


def tool_results_after_reopen(path: str, submission_id: str) -> list[str]:
    """The tool results of the conversation once a harness reopened the file of a killed one and
    the submission `submission_id` was answered."""
    async def reopen() -> list[StoredEntry]:
        model = FauxModel([faux.reply("It was cut off.")])
        async with durable.open_harness(path, model=model, clock=durable.FakeClock(1_000_100.0)) as h:
            await h.resume()
            await h.root.submission(submission_id).wait()
            return await h.root.entries()

    return [e.entry.content for e in anyio.run(reopen, backend="trio")
            if e.entry.__class__.__name__ == "ToolResultEntry"]


@pytest.mark.parametrize("kill_after", [60, 517, 1234, 2950])
def test_sigkill_while_a_tool_streams_leaves_its_task_and_its_slot_the_same_whole_lines(tmp_path, kill_after):
    """Killed at some point of a long tool output (appends beside the file, a transaction every 50
    flushes): its task and its slot, one stream, read back the same output, whole flushes, at
    least all the child saw committed; the reopened harness ends the call with that output."""
    path = os.fspath(tmp_path / "s.db")
    child = subprocess.Popen([sys.executable, tool_output_child.__file__, path, "mid"], stdout=subprocess.PIPE,
                             text=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        assert child.stdout is not None
        while int(child.stdout.readline()) < kill_after:
            pass
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    with SessionReader(path) as reader:
        [task] = reader.tasks(kind="tool")
        output = task.checkpoint.output
        assert [s.output for s in reader.live_documents()["root"].tools] == [output]
        columns = reader._all("SELECT texts FROM tasks WHERE kind = 'tool' UNION ALL SELECT texts FROM documents")
        [sub] = reader.submissions()
    assert len({n for (col,) in columns for n in json.loads(col).values()}) == 1
    lines = output.count("\n")
    assert lines >= kill_after and output == "".join(tool_output_child.LONGER[:lines])
    assert tool_results_after_reopen(path, sub.id) == [
        f"Tool dump was interrupted and may have partially run\nPartial output:\n{output}"]


async def test_a_lazy_transaction_puts_the_text_it_starts_beside_the_file_and_a_barrier_folds_it(tmp_path):
    """The first flush of a long text (a new stream) in a lazy transaction: the row maps the
    stream, its text goes beside the file, not into the table (a streamed answer's first flush,
    dropped when the answer lands, is never in the WAL); readers and a killed store's next open
    see it; the next barrier folds it in."""
    path = os.fspath(tmp_path / "s.db")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(live={"root": partial("")}))
    commits = store.commits
    await store.commit(Batch(live={"root": at(9000)}, barrier=False))  # a new stream: a transaction
    assert (store.commits, store._writes.appended) == (commits + 1, 0)
    with SessionReader(path) as reader:
        assert reader._all("SELECT id FROM texts") == []  # nothing of it in the table
        assert reader.live_documents() == {"root": at(9000)}
        assert decode_rows(reader.rows(), path).live == {"root": at(9000)}  # what the invariant checks read
    with open(path + SUFFIX, "rb") as f:
        [record] = parse(f.read(), store._writes._session)[0]
    assert sorted((before, len(text)) for _, before, text in record) == [(0, 8500), (0, 9000)]
    await store.commit(Batch(live={"root": at(9500)}, barrier=False))  # grows beside it: no transaction
    assert (store.commits, store._writes.appended) == (commits + 2, 1)
    store._writes.partials = None  # as if killed: the side file is left as it is
    await store.close()
    again = SQLiteStorage(path)
    assert (await again.open()).conversations["root"].live == at(9500)
    await again.commit(Batch(live={"other": Live()}))  # a barrier folds it
    assert side(path) == 0
    with SessionReader(path) as reader:
        assert table_chars(path) == 9500 + 9000
        assert reader.live_documents()["root"] == at(9500)
    await again.close()


async def test_a_text_started_while_the_side_file_refuses_goes_into_the_transaction(tmp_path, monkeypatch):
    path = os.fspath(tmp_path / "s.db")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(live={"root": partial("")}))

    def full(self, appends):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(partials_module.PartialsFile, "append", full)
    await store.commit(Batch(live={"root": at(9000)}, barrier=False))
    with SessionReader(path) as reader:
        assert table_chars(path) == 9000 + 8500
        assert reader.live_documents() == {"root": at(9000)}
    assert side(path) == 0
    store._writes.partials = None  # as if killed
    await store.close()
    again = SQLiteStorage(path)
    assert (await again.open()).conversations["root"].live == at(9000)
    await again.close()


async def test_a_stream_named_beside_the_file_by_a_transaction_rolled_back_is_never_made_again(tmp_path):
    """A lazy transaction puts the text it starts beside the file before it commits; if the
    commit then fails, a later stream never takes that number, so an open never applies the
    orphaned text to another row."""
    path = os.fspath(tmp_path / "s.db")
    store = SQLiteStorage(path)
    await store.open()
    w = store._writes
    w.begin(False)
    w.apply(encode_batch(Batch(live={"a": at(9000)}, barrier=False)))
    made = w.texts.deferred()
    w._set_aside()
    w.rollback(RuntimeError("the COMMIT failed"))
    await store.commit(Batch(live={"b": at(3000)}, barrier=False))
    numbers = set(streams_of(w.texts.column("live:b")).values())
    assert numbers and not numbers & {s.number for s in made}
    store._writes.partials = None  # as if killed
    await store.close()
    again = SQLiteStorage(path)
    opened = await again.open()
    assert (opened.conversations["b"].live, "a" in opened.conversations) == (at(3000), False)
    await again.close()


# ------------------------------------------------------------------ what a lazy transaction grows

def attempt2(n: int) -> Live:
    """`at(n)` as a second attempt: its row's body differs from `at`'s (a transaction)."""
    return Live(generation=GenerationLive(2, PartialMessage(ANSWER[:n], reasoning=ANSWER[:n - 500])))


def records(path: str, store: SQLiteStorage) -> list[list[tuple[int, int, int]]]:
    """The side file's records: (stream, length before, characters gained) each."""
    with open(path + SUFFIX, "rb") as f:
        found = parse(f.read(), store._writes._session)[0]
    return [[(n, before, len(text)) for n, before, text in record] for record in found]


async def test_a_lazy_transaction_puts_what_a_text_grew_beside_the_file_counted_once_it_commits(tmp_path):
    """A lazy transaction that writes a row again (its body changed) whose text grew: the gain
    goes beside the file in a record tagged with the `meta.lazy` it commits, not into the table
    (a tool's once-a-second stamp no longer rewrites its output there); readers, and a killed
    store's next open, see it; the next barrier folds it."""
    path = os.fspath(tmp_path / "s.db")
    store = await streamed(path)
    gen = streams_of(store._writes.texts.column("live:root"))
    commits = store.commits
    await store.commit(Batch(live={"root": attempt2(9000)}, barrier=False))
    assert (store.commits, store._writes.appended, table_chars(path)) == (commits + 1, 0, 2000 + 1500)
    assert records(path, store) == [[(0, 1, 0), (gen["generation"], 2000, 7000), (gen["reasoning"], 1500, 7000)]]
    with SessionReader(path) as reader:
        assert reader.live_documents() == {"root": attempt2(9000)}
        assert partials_module.lazy_tag(reader._conn, path) == 1
    store._writes.partials = None  # as if killed
    await store.close()
    again = SQLiteStorage(path)
    assert (await again.open()).conversations["root"].live == attempt2(9000)
    await again.commit(Batch(live={"other": Live()}))  # a barrier folds it
    assert (side(path), table_chars(path)) == (0, 9000 + 8500)
    await again.close()


async def test_a_grown_text_beside_the_file_is_not_applied_when_its_transaction_never_committed(tmp_path):
    """Killed between the record and the COMMIT: the open skips the tagged record (`meta.lazy`
    is behind it) and, until a barrier empties the side file, grows texts in the table (a tag it
    wrote could be taken for the uncommitted one's)."""
    path = os.fspath(tmp_path / "s.db")
    store = await streamed(path)
    w = store._writes
    w.begin(False)
    w.apply(encode_batch(Batch(live={"root": attempt2(9000), "b": at(3000)}, barrier=False)))  # "b": new streams
    assert w._set_aside() == []
    orphaned = {n for n, _, _ in records(path, store)[0]} - {0}
    store._writes.partials = None  # killed before the COMMIT: the close rolls the transaction back
    await store.close()
    again = SQLiteStorage(path)
    opened = await again.open()
    assert (opened.conversations["root"].live, "b" in opened.conversations, again._writes._tainted) == (
        at(2000), False, True)
    await again.commit(Batch(live={"root": attempt2(4000), "c": at(3000)}, barrier=False))
    c = streams_of(again._writes.texts.column("live:c"))
    assert not orphaned & set(c.values())  # never made again
    assert table_chars(path) == 4000 + 3500  # the gain in the table, the texts "c" starts beside it (untagged)
    assert sorted(records(path, again)[1]) == sorted([(c["generation"], 0, 3000), (c["reasoning"], 0, 2500)])
    await again.commit(Batch(live={"root": at(5000)}))  # a barrier empties the side file
    assert (side(path), again._writes._tainted) == (0, False)
    await again.commit(Batch(live={"root": attempt2(6000)}, barrier=False))
    assert [r[0] for r in records(path, again)] == [(0, 1, 0)]  # tagged again
    again._writes.partials = None
    await again.close()
    third = SQLiteStorage(path)
    assert (await third.open()).conversations["root"].live == attempt2(6000)
    await third.close()


@pytest.mark.parametrize("cut_fails", [False, True])
async def test_a_rolled_back_transaction_cuts_its_record_off_or_grows_in_the_table_until_a_barrier(
        tmp_path, monkeypatch, cut_fails):
    path = os.fspath(tmp_path / "s.db")
    store = await streamed(path)
    w = store._writes
    if cut_fails:
        def refuse(self, size):
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(partials_module.PartialsFile, "cut", refuse)
    g, r = streams_of(w.texts.column("live:root")).values()
    w.begin(False)
    w.apply(encode_batch(Batch(live={"root": attempt2(9000)}, barrier=False)))
    w._set_aside()
    w.rollback(RuntimeError("the COMMIT failed"))
    orphan = [(0, 1, 0), (g, 2000, 7000), (r, 1500, 7000)]
    assert (records(path, store), w._tainted) == (([orphan], True) if cut_fails else ([], False))
    await store.commit(Batch(live={"root": attempt2(3000)}, barrier=False))
    # while the orphan (tag 1) is there, no tag is committed: the gain goes in the table instead
    assert records(path, store) == ([orphan] if cut_fails else [[(0, 2, 0), (g, 2000, 1000), (r, 1500, 1000)]])
    assert table_chars(path) == (3000 + 2500 if cut_fails else 2000 + 1500)
    store._writes.partials = None  # as if killed
    await store.close()
    again = SQLiteStorage(path)
    assert (await again.open()).conversations["root"].live == attempt2(3000)
    await again.close()
