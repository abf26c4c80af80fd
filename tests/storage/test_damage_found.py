"""Damage found wherever it is (issue 25, item 4): the background check covers the indexes (a
row missing from an index was never reported by `quick_check`), and a read that meets damage is
`CorruptSession` naming the file and the table, never `CommitFailed`."""

from __future__ import annotations

import os
import sqlite3

import anyio
import pytest

import durable
from durable.errors import CommitFailed, CorruptSession
from durable.models import FauxModel, faux
from durable.storage import SQLiteStorage

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "trio"


async def two_answered(path: str) -> None:
    async with durable.open_harness(path, model=FauxModel([faux.reply("one"), faux.reply("two")])) as h:
        assert await (await h.root.submit("first", id="sub-a")).wait() == durable.Answered("one", 2)
        assert await (await h.root.submit("second", id="sub-b")).wait() == durable.Answered("two", 4)


def rename_in_index(path: str, index: str, old: bytes, new: bytes) -> None:
    """Damage an index as a torn write could: its entry for `old` now says `new` (same length), so
    the table's row is missing from the index. The file was closed cleanly: no WAL."""
    conn = sqlite3.connect(path)
    root, size = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = ?", (index,)).fetchone()[0], \
        conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    assert not os.path.exists(path + "-wal")
    with open(path, "r+b") as f:
        f.seek((root - 1) * size)
        page = f.read(size)
        assert page.count(old) == 1
        f.seek((root - 1) * size)
        f.write(page.replace(old, new))


async def test_a_row_missing_from_an_index_is_reported_by_the_background_check_naming_the_file(tmp_path):
    path = os.fspath(tmp_path / "session.sqlite")
    await two_answered(path)
    rename_in_index(path, "sqlite_autoindex_submissions_1", b"sub-a", b"sub-0")
    assert sqlite3.connect(path).execute("PRAGMA quick_check").fetchall() == [("ok",)]  # what was run before

    reports = []
    reported = anyio.Event()

    def report(event):
        reports.append(event)
        if event.type == "error" and event.topic == "storage":
            reported.set()

    async with durable.open_harness(path, model=FauxModel([]), report=report) as h:
        await h.resume()  # the check starts by itself a second later
        with anyio.fail_after(30):  # a bound, not a pace: the report comes a second after resume
            await reported.wait()
        assert await h.check_integrity() == ["row 1 missing from index sqlite_autoindex_submissions_1"]
    assert [r.message for r in reports] == [
        f"Session file {path} is damaged: row 1 missing from index sqlite_autoindex_submissions_1. Runs that read "
        "the damaged records end unanswered (storage_error); copy what you need and start a new session file."]


NOT_UTF8 = "CAST(X'7B22FF227D' AS TEXT)"  # {"\xff"}: bytes that are not UTF-8, as a damaged page can hold


@pytest.mark.parametrize("table, damage, read", [
    ("tasks", "UPDATE tasks SET body = {} WHERE id = 1", lambda s: s.get_task(1)),
    ("tasks", "UPDATE tasks SET body = {} WHERE id = 1", lambda s: s.find_tasks(kind="generation")),
    ("entries", "UPDATE entries SET body = {} WHERE seq = 2", lambda s: s.get_entries("root")),
    ("entries", "UPDATE entries SET body = {} WHERE seq = 2", lambda s: s.get_context("root", 1, 4)),
    ("submissions", "UPDATE submissions SET body = {} WHERE id = 'sub-a'", lambda s: s.get_submission("sub-a")),
    ("documents", "UPDATE documents SET body = {} WHERE conversation_id = 'root'", lambda s: s.get_live("root")),
], ids=["task", "tasks", "entries", "context", "submission", "live"])
async def test_a_read_that_meets_damage_is_corrupt_session_naming_the_file_and_the_table(tmp_path, table, damage,
                                                                                         read):
    path = os.fspath(tmp_path / "session.sqlite")
    await two_answered(path)
    store = SQLiteStorage(path)
    await store.open()
    try:
        await store.call_in_writer(lambda c: c.execute(damage.format(NOT_UTF8)))
        with pytest.raises(CorruptSession) as refused:
            await read(store)
        assert not isinstance(refused.value, CommitFailed)
        assert str(refused.value).startswith(f"Session file {path} is damaged: its {table} table cannot be read "
                                             "(Could not decode to UTF-8 column")
        assert refused.value.location == path
        assert await store.get_submission("sub-b") is not None  # the store keeps working
    finally:
        await store.close()
