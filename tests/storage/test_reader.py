"""`durable.storage.sqlite.reader`: the one read-only reader of session files. Records come back through
the codec; refused files are named and left as they were; nothing is written next to a closed
file; rows that do not decode are reported, not raised, by `decode_rows`; the memory store's rows
decode the same way."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from durable.errors import CorruptSession, NotASession, SchemaTooNew, StorageError
from durable.records import Answered, Done, Terminal
from durable.storage import Batch, MemoryStorage, SQLiteStorage
from durable.storage.sqlite.schema import SCHEMA_VERSION
from durable.storage.rows import decode_rows
from durable.storage.sqlite.reader import SessionReader
from durable.testing import load_session

from .builders import busy, submission, task, user
from .test_sqlite_file import files_next_to

pytestmark = pytest.mark.anyio

DONE = Terminal(Done())


def history() -> list[Batch]:
    """Three runs on "root" (two ended, one live) and one entry on "side"."""
    return [
        Batch(tasks=[task(1, state=DONE)], entries=[user(1), user(2)],
              submissions=[submission("s1", status=Answered(), seq=1)], live={"root": busy(3, "s3")}),
        Batch(tasks=[task(2, state=DONE), task(3)], entries=[user(3), user(4, conversation_id="side")],
              submissions=[submission("s2", status=Answered()), submission("s3")]),
    ]


async def write(store, batches: list[Batch]) -> None:
    await store.open()
    for batch in batches:
        await store.commit(batch)
    await store.close()


@pytest.fixture
async def session(tmp_path) -> str:
    path = os.fspath(tmp_path / "a ?b#c%20d.sqlite")  # URI characters in the name: quoted
    await write(SQLiteStorage(path), history())
    return path


async def test_records_come_back_through_the_codec_with_ranges_and_filters(session):
    before = files_next_to(session)
    with SessionReader(session) as reader, reader.snapshot():
        assert reader.schema_version == SCHEMA_VERSION
        assert reader.conversation_ids() == ["root", "side"]
        assert reader.entry_span("root") == (3, 3)
        assert reader.entries("root") == [user(1), user(2), user(3)]
        assert reader.entries("root", 2) == [user(2), user(3)]
        assert reader.entries("root", 1, 2, last=1) == [user(2)]
        assert reader.entries("root", last=2) == [user(2), user(3)]
        assert [t.id for t in reader.tasks()] == [1, 2, 3]
        assert [t.id for t in reader.tasks(live=True)] == [3]
        assert [t.id for t in reader.tasks(state="terminal", kind="generation")] == [1, 2]
        assert [t.id for t in reader.tasks(ended_last=1)] == [2, 3]
        assert reader.tasks(conversation_id="side") == []
        assert [s.id for s in reader.submissions()] == ["s1", "s2", "s3"]
        assert [s.id for s in reader.submissions(settled_last=1)] == ["s2", "s3"]
        assert reader.live_documents() == {"root": busy(3, "s3")}
        assert reader.integrity_check() == ["ok"]
        facts = reader.file_facts()
        assert (facts.tasks, facts.live_tasks, facts.entries, facts.submissions) == (3, 1, 4, 3)
        assert facts.journal_mode == "wal" and facts.path == os.path.abspath(session)
    assert files_next_to(session) == before  # no byte, mtime, -wal or -shm changed or made
    image = load_session(session)  # the invariant checker reads through the same reader
    assert (image.readable, image.problems, sorted(image.tasks)) == (True, [], [1, 2, 3])
    assert files_next_to(session) == before


async def test_the_memory_stores_rows_decode_as_the_files_rows(session):
    memory = MemoryStorage()
    await write(memory, history())
    with SessionReader(session) as reader:
        from_file = decode_rows(reader.rows(), "x")
    from_memory = decode_rows(memory.stored_rows(), "x")
    assert from_memory == from_file
    assert from_file.problems == [] and sorted(from_file.tasks) == [1, 2, 3]


async def test_rows_that_do_not_decode_are_reported_by_name_not_raised(session, tmp_path):
    copy = os.fspath(tmp_path / "bad.sqlite")
    shutil.copyfile(session, copy)
    conn = sqlite3.connect(copy)
    conn.execute("""UPDATE tasks SET body = '{"id": 2}' WHERE id = 2""")
    conn.execute("UPDATE entries SET kind = 'assistant' WHERE seq = 2 AND conversation_id = 'root'")
    conn.commit()
    conn.close()
    with SessionReader(copy) as reader:
        records = decode_rows(reader.rows(), copy)
        with pytest.raises(CorruptSession, match=f"Task 2 in {copy} cannot be read"):
            reader.tasks()
    assert sorted(records.tasks) == [1, 3]
    assert records.problems[0].startswith(f"Task 2 in {copy} does not load with the current schema: ")
    assert records.problems[1:] == ["Entry 2 of conversation 'root' is stored as assistant but is a user"]


def newer(path: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()


def foreign(path: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE things (x)")
    conn.commit()
    conn.close()


def empty_sqlite(path: str) -> None:
    sqlite3.connect(path).execute("PRAGMA user_version = 1").connection.close()


@pytest.mark.parametrize("make, error, words", [
    (None, StorageError, "No session file at {path}"),
    (lambda p: os.mkdir(p), NotASession, "{path} is a directory, not a durable session file"),
    (lambda p: Path(p).write_text(""), NotASession, "{path} is empty, not a durable session file"),
    (lambda p: Path(p).write_text("notes"), NotASession, "{path} is not a durable session file (not an SQLite"),
    (foreign, NotASession, "{path} is an SQLite database of another program, not a durable session file"),
    (empty_sqlite, NotASession, "{path} is an empty SQLite database, not yet a durable session file"),
], ids=["missing", "folder", "empty", "text", "foreign", "empty-sqlite"])
def test_what_is_not_a_session_is_refused_by_name_and_left_alone(tmp_path, make, error, words):
    path = os.fspath(tmp_path / "x.sqlite")
    if make is not None:
        make(path)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(error) as refused:
        SessionReader(path)
    assert type(refused.value) is error and str(refused.value).startswith(words.format(path=path))
    assert refused.value.location == path
    assert sorted(os.listdir(tmp_path)) == before


async def test_a_newer_schema_is_refused_naming_both_versions(session):
    newer(session)
    before = files_next_to(session)
    with pytest.raises(SchemaTooNew, match=f"has schema version 10; this version of durable reads up to version {SCHEMA_VERSION}"):
        SessionReader(session)
    assert files_next_to(session) == before


def test_the_reader_imports_no_event_loop_library():
    probe = textwrap.dedent("""
        import sys
        import durable.storage.sqlite.reader
        print(sorted(m for m in ("anyio", "trio", "openai", "anthropic", "httpx") if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True, text=True,
                          timeout=30)
    assert done.stdout.strip() == "[]", done.stderr
