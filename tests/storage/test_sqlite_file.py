"""The session file on disk: durability settings, ownership across processes, faults, group
commit, cancellation, and files that must be refused without being touched."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import stat
import struct
import subprocess
import sys
from contextlib import asynccontextmanager

import anyio
import pytest

from durable.errors import (
    CommitFailed,
    CorruptSession,
    DiskFull,
    LockLost,
    NotASession,
    SchemaTooNew,
    SessionLocked,
)
from durable.records import Answered, Done, Live, Running, Terminal
from durable.storage.sqlite.schema import SCHEMA_VERSION
from durable.storage import Batch, SQLiteStorage

from .builders import busy, compaction, noise, submission, task, user
from .held_writer import commit_behind_held_writer, writer_held

pytestmark = pytest.mark.anyio


@pytest.fixture
def path(tmp_path) -> str:
    return os.fspath(tmp_path / "session.db")


@asynccontextmanager
async def opened(path: str, **options):
    store = SQLiteStorage(path, **options)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def pragma(store: SQLiteStorage, name: str):
    return await store.call_in_writer(lambda c: c.execute(f"PRAGMA {name}").fetchone()[0])


def files_next_to(path: str) -> dict[str, tuple[str, int]]:
    """Content hash and mtime of the file and of any -wal/-shm next to it."""
    out = {}
    for name in (path, path + "-wal", path + "-shm"):
        if os.path.exists(name):
            with open(name, "rb") as f:
                out[name] = (hashlib.sha256(f.read()).hexdigest(), os.stat(name).st_mtime_ns)
    return out


# ----------------------------------------------------------------------------- durability settings


async def test_a_session_file_uses_wal_with_external_synchrony_by_default(path):
    async with opened(path) as store:
        assert await pragma(store, "journal_mode") == "wal"
        assert await pragma(store, "synchronous") == 2  # FULL until a lazy commit is written
        assert store.synchronous == "EXTERNAL"


async def test_synchronous_normal_is_an_explicit_opt_in(path):
    async with opened(path, synchronous="NORMAL") as store:
        assert await pragma(store, "journal_mode") == "wal"
        assert await pragma(store, "synchronous") == 1  # NORMAL
    async with opened(path) as store:  # the setting belongs to the opener, not to the file
        assert await pragma(store, "synchronous") == 2


@pytest.mark.parametrize("value", ["OFF", "EXTRA", "full", "", None])
def test_any_other_synchronous_value_is_refused(path, value):
    with pytest.raises(ValueError, match=f"synchronous must be 'EXTERNAL', 'FULL' or 'NORMAL', not {value!r}"):
        SQLiteStorage(path, synchronous=value)
    assert not os.path.exists(path)


async def test_a_new_session_file_is_readable_and_writable_by_its_owner_only(path):
    old_umask = os.umask(0o022)  # a common umask: it must not widen what the store asks for
    try:
        async with opened(path) as store:
            await store.commit(Batch(entries=[user(1)]))
            for name in (path, path + "-wal", path + "-shm"):
                assert stat.S_IMODE(os.stat(name).st_mode) == 0o600, name
    finally:
        os.umask(old_umask)


async def test_an_empty_file_becomes_a_session(path):
    open(path, "wb").close()
    async with opened(path) as store:
        await store.commit(Batch(entries=[user(1)], live={"root": Live()}))
    async with opened(path) as store:
        assert await store.get_entries("root") == [user(1)]


async def test_a_path_with_uri_characters_opens_and_reopens(tmp_path):
    path = os.fspath(tmp_path / "my session #1?mode=ro%20.db")
    async with opened(path) as store:
        await store.commit(Batch(entries=[user(1)], live={"root": Live()}))
    async with opened(path) as store:  # the second open reads the existing file through a URI
        assert await store.get_entries("root") == [user(1)]
    # No lock file (the lock is on the file); its commit mark (durable.storage.sqlite.mark) stays.
    assert sorted(os.listdir(tmp_path)) == [os.path.basename(path), os.path.basename(path) + "-mark"]


# ----------------------------------------------------------------------------- ownership


OPENER = """
import sys, trio
from durable.errors import SessionLocked
from durable.storage import SQLiteStorage

async def main():
    try:
        store = SQLiteStorage(sys.argv[1])
        await store.open()
    except SessionLocked as exc:
        print("SessionLocked", exc.pid, exc, sep="|", flush=True)
    else:
        print("opened", flush=True)
        await store.close()

trio.run(main)
"""

OWNER = """
import sys, trio
from durable.records import StoredEntry, UserEntry
from durable.storage import Batch, SQLiteStorage

async def main():
    store = SQLiteStorage(sys.argv[1])
    await store.open()
    await store.commit(Batch(entries=[StoredEntry("root", 1, UserEntry("from the child"))]))
    print("ready", flush=True)
    await trio.to_thread.run_sync(sys.stdin.readline)  # holds the file until killed

trio.run(main)
"""


async def test_a_second_store_in_this_process_is_refused_naming_this_process(path):
    async with opened(path) as owner:
        with pytest.raises(SessionLocked) as refused:
            await SQLiteStorage(path).open()
        assert refused.value.pid == os.getpid()
        assert str(refused.value) == f"Session file {path} is already open in process {os.getpid()}"
        await owner.commit(Batch(entries=[user(1)]))
        assert await owner.get_entries("root") == [user(1)]


async def test_a_second_process_is_refused_naming_the_owner_which_keeps_working(path):
    async with opened(path) as owner:
        await owner.commit(Batch(entries=[user(1)]))
        child = await anyio.run_process([sys.executable, "-c", OPENER, path], check=True)
        kind, pid, message = child.stdout.decode().strip().split("|")
        assert (kind, int(pid)) == ("SessionLocked", os.getpid())
        assert path in message and str(os.getpid()) in message

        await owner.commit(Batch(entries=[user(2)]))
        assert await owner.get_entries("root") == [user(1), user(2)]
    child = await anyio.run_process([sys.executable, "-c", OPENER, path], check=True)
    assert child.stdout.decode().strip() == "opened"  # once closed, anyone may open it


async def test_the_file_of_a_killed_owner_opens_at_once(path):
    proc = subprocess.Popen([sys.executable, "-c", OWNER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert await anyio.to_thread.run_sync(proc.stdout.readline) == "ready\n"
        with pytest.raises(SessionLocked) as refused:
            await SQLiteStorage(path).open()
        assert refused.value.pid == proc.pid and f"process {proc.pid}" in str(refused.value)
    finally:
        proc.send_signal(signal.SIGKILL)
        await anyio.to_thread.run_sync(proc.wait)
        proc.stdout.close()
        proc.stdin.close()
    assert proc.returncode == -signal.SIGKILL

    async with opened(path) as store:  # the kernel dropped the dead owner's lock: no lock to wait for
        assert await store.get_entries("root") == [user(1, "from the child")]
        await store.commit(Batch(entries=[user(2)]))


async def test_a_store_whose_file_was_renamed_away_refuses_to_commit(path):
    async with opened(path) as store:
        await store.commit(Batch(entries=[user(1)]))
        for suffix in ("", "-wal", "-shm"):
            os.rename(path + suffix, path + ".moved" + suffix)
        with pytest.raises(LockLost) as lost:
            await store.commit(Batch(entries=[user(2)]))
        assert str(lost.value) == (f"Session file {path} is no longer owned by this process (the file was removed, "
                                   f"renamed or replaced since it was opened); the commit was refused")
        assert await store.get_entries("root") == [user(1)]


async def test_a_store_whose_file_was_replaced_by_a_new_owner_refuses_to_commit_and_leaves_its_journal(path):
    async with opened(path) as old:
        await old.commit(Batch(entries=[user(1)]))
        for suffix in ("", "-wal", "-shm"):  # someone deleted the file, and a second opener came
            os.remove(path + suffix)
        async with opened(path) as new:
            with pytest.raises(LockLost):
                await old.commit(Batch(entries=[user(2, "from the old owner")]))
            await new.commit(Batch(entries=[user(1, "from the new owner")]))
            with pytest.raises(LockLost):
                await old.commit(Batch(entries=[user(3)]))
            await old.close()  # SQLite leaves alone the -wal/-shm now at the path: they are the new owner's
            assert os.path.getsize(path + "-wal") > 0
            await new.commit(Batch(entries=[user(2, "from the new owner")]))
    async with opened(path) as store:
        assert await store.get_entries("root") == [user(1, "from the new owner"), user(2, "from the new owner")]


# ----------------------------------------------------------------------------- disk full


async def limit_growth(store: SQLiteStorage, spare_pages: int) -> None:
    pages = await pragma(store, "page_count")
    await store.call_in_writer(lambda c: c.execute(f"PRAGMA max_page_count = {pages + spare_pages}").fetchone())


async def lift_limit(store: SQLiteStorage) -> None:
    await store.call_in_writer(lambda c: c.execute("PRAGMA max_page_count = 1073741823").fetchone())


def big_batch() -> Batch:
    return Batch(
        tasks=[task(2, state=Terminal(Done(noise(10_000))))],
        entries=[user(seq, noise(20_000, seq)) for seq in range(2, 7)],
        live={"root": busy(2), "side": Live()},
    )


async def test_a_full_disk_rolls_the_commit_back_and_commits_work_again_once_there_is_room(path):
    async with opened(path) as store:
        await store.commit(Batch(tasks=[task(1)], entries=[user(1)], live={"root": busy(1)}))
        await limit_growth(store, spare_pages=0)
        with pytest.raises(DiskFull) as full:
            await store.commit(big_batch())
        assert isinstance(full.value, CommitFailed)
        assert path in str(full.value) and "full" in str(full.value)
        assert await store.find_tasks() == [task(1)]
        assert await store.get_entries("root") == [user(1)]
        assert await store.get_live("root") == busy(1) and await store.get_live("side") is None

        await lift_limit(store)
        await store.commit(big_batch())
        assert await store.get_entries("root") == [user(1)] + big_batch().entries
    async with opened(path) as store:
        assert await store.find_tasks() == [task(1)] + big_batch().tasks


async def test_a_full_disk_in_a_group_fails_only_the_batch_that_does_not_fit(path):
    async with opened(path) as store:
        await store.commit(Batch(tasks=[task(1)], entries=[user(1)], live={"root": busy(1)}))
        await limit_growth(store, spare_pages=4)
        small = [Batch(tasks=[task(10 + i)], entries=[user(1, conversation_id=f"c{i}")]) for i in range(4)]
        before = store.commits
        outcome = await commit_behind_held_writer(store, small[:2] + [big_batch()] + small[2:])
        assert [type(exc).__name__ for exc in outcome] == ["NoneType", "NoneType", "DiskFull", "NoneType", "NoneType"]
        assert store.commits - before == 4  # the group failed as a whole, then one transaction each
        assert await store.find_tasks() == [task(1)] + [b.tasks[0] for b in small]
        assert await store.get_entries("root") == [user(1)]


# ----------------------------------------------------------------------------- group commit


async def test_64_concurrent_commits_share_transactions_and_a_bad_one_fails_alone(path):
    async with opened(path) as store:
        await store.commit(Batch(entries=[user(1)], live={"root": Live()}))
        good = {i: Batch(tasks=[task(100 + i)], entries=[user(1, f"c{i}", conversation_id=f"c{i}")],
                         live={f"c{i}": busy(100 + i)}) for i in range(64) if i != 40}
        bad = Batch(tasks=[task(999)], entries=[user(2, conversation_id="root"), user(1)], live={"bad": Live()})
        batches = {**good, 40: bad}
        before = store.commits
        # All 64 queue up behind one job, as under load.
        outcome = await commit_behind_held_writer(store, [batches[i] for i in range(64)])

        assert [i for i, exc in enumerate(outcome) if exc is not None] == [40]
        assert "UNIQUE" in str(outcome[40])
        assert store.commits - before == 1  # 63 batches, one transaction, one fsync
        assert await store.find_tasks() == [task(100 + i) for i in good]
        for i in good:
            assert await store.get_entries(f"c{i}") == [user(1, f"c{i}", conversation_id=f"c{i}")]
            assert await store.get_live(f"c{i}") == busy(100 + i)
        assert await store.get_entries("root") == [user(1)]
        assert await store.get_live("bad") is None


async def test_a_group_applies_its_batches_in_the_order_they_were_committed(path):
    async with opened(path) as store:
        states = [task(1), task(1, state=Running()), task(1, state=Terminal(Done(3))), task(1, state=Running())]
        batches = [Batch(tasks=[t], live={"root": busy(i)}) for i, t in enumerate(states)]
        batches += [Batch(entries=[user(1, "first")]), Batch(entries=[user(1, "second")], live={"root": Live()})]
        before = store.commits
        outcome = await commit_behind_held_writer(store, batches, in_order=True)
        assert [exc is None for exc in outcome] == [True, True, True, True, True, False]
        assert store.commits - before == 1
        assert await store.get_task(1) == states[-1]  # the last upsert wins, as one by one
        assert await store.get_live("root") == busy(3)  # the refused batch's live is not applied
        assert await store.get_entries("root") == [user(1, "first")]


async def test_external_synchrony_fsyncs_barriers_only_and_a_group_holding_one_as_a_whole(path):
    # SQLite's `synchronous` level of the transaction just written: 2 = FULL (the WAL fsynced at
    # commit, with every commit before it), 1 = NORMAL (no fsync).
    async with opened(path) as store:  # the default: external synchrony
        seen = []
        for group in ([False], [True], [False, False], [False, True, False]):
            before, barriers = store.commits, store.barriers
            outcome = await commit_behind_held_writer(
                store, [Batch(tasks=[task(len(seen) * 10 + i + 1)], barrier=b) for i, b in enumerate(group)])
            assert outcome == [None] * len(group) and store.commits - before == 1
            seen.append((await pragma(store, "synchronous"), store.barriers - barriers))
        assert seen == [(1, 0), (2, 1), (1, 0), (2, 1)]
        assert len(await store.find_tasks()) == 7


@pytest.mark.parametrize(("mode", "level"), [("FULL", 2), ("NORMAL", 1)])
async def test_with_a_fixed_level_every_commit_is_written_at_it_barrier_or_not(path, mode, level):
    async with opened(path, synchronous=mode) as store:
        for i, barrier in enumerate([False, True, False]):
            await store.commit(Batch(tasks=[task(i + 1)], barrier=barrier))
            assert await pragma(store, "synchronous") == level
        assert store.barriers == (3 if mode == "FULL" else 0)


async def test_64_commits_racing_freely_all_land(path):
    async with opened(path) as store:
        before = store.commits
        async with anyio.create_task_group() as tg:
            for i in range(64):
                tg.start_soon(store.commit, Batch(tasks=[task(i + 1)], entries=[user(i + 1)]))
        assert await store.find_tasks() == [task(i + 1) for i in range(64)]
        assert await store.get_entries("root") == [user(i + 1) for i in range(64)]
        assert store.commits - before <= 64


# ----------------------------------------------------------------------------- cancellation


async def test_a_commit_whose_caller_is_cancelled_while_waiting_still_lands(path):
    async with opened(path) as store:
        scope = anyio.CancelScope()
        seen = []

        async def caller() -> None:
            with scope:
                await store.commit(Batch(tasks=[task(5)], entries=[user(1)], live={"root": busy(5)}))
                seen.append("commit returned")
                await anyio.sleep_forever()
            seen.append("cancelled" if scope.cancelled_caught else "not cancelled")

        async with anyio.create_task_group() as tg:
            async with writer_held(store):
                tg.start_soon(caller)
                await anyio.wait_all_tasks_blocked()  # the commit is queued, its caller waits
                scope.cancel()
                await anyio.wait_all_tasks_blocked()
                assert seen == []  # cancelled, it still waits for the outcome of its commit
        assert seen == ["commit returned", "cancelled"]
        assert await store.get_task(5) == task(5)
        assert await store.get_entries("root") == [user(1)]
        assert await store.get_live("root") == busy(5)
    async with opened(path) as store:
        assert await store.get_task(5) == task(5)


async def test_a_caller_cancelled_before_it_commits_writes_nothing(path):
    async with opened(path) as store:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await anyio.sleep(0)  # a checkpoint: the cancellation lands here, before the commit
            await store.commit(Batch(tasks=[task(5)]))
        assert await store.get_task(5) is None


# ----------------------------------------------------------------------------- refused files


async def a_session(path: str, entries: int = 40) -> None:
    async with opened(path) as store:
        await store.commit(Batch(entries=[user(seq, "x" * 2000) for seq in range(1, entries + 1)], live={"root": Live()}))


def foreign_sqlite(journal_mode: str):
    def make(path: str) -> None:
        conn = sqlite3.connect(path)
        conn.execute(f"PRAGMA journal_mode = {journal_mode}")
        with conn:
            conn.execute("CREATE TABLE notes (text TEXT)")
            conn.execute("INSERT INTO notes VALUES ('not a session')")
        conn.close()
    return make


def not_sqlite(path: str) -> None:
    with open(path, "wb") as f:
        f.write(b"# my notes\n" * 500)


async def newer_schema(path: str) -> None:
    await a_session(path)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.close()


async def truncated(path: str) -> None:
    await a_session(path)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


async def damaged_pages(path: str) -> None:
    await a_session(path)
    with open(path, "r+b") as f:
        f.seek(4096 * 3)
        f.write(bytes(range(256)) * 16 * 4)


async def damaged_first_page(path: str) -> None:
    await a_session(path)
    with open(path, "r+b") as f:
        f.seek(100)
        f.write(b"\xff" * 200)


def short_header(path: str) -> None:
    with open(path, "wb") as f:
        f.write(b"SQLite format 3\x00" + b"\x10\x00")


@pytest.mark.parametrize(
    "make, error, words",
    [
        (not_sqlite, NotASession, "is not a durable session file (not an SQLite database)"),
        (foreign_sqlite("delete"), NotASession, "is an SQLite database of another program"),
        (foreign_sqlite("wal"), NotASession, "is an SQLite database of another program"),
        (newer_schema, SchemaTooNew, f"has schema version {SCHEMA_VERSION + 1}; this version of durable reads up to "
                                     f"version {SCHEMA_VERSION}"),
        (truncated, CorruptSession, "is truncated"),
        (short_header, CorruptSession, "is truncated (18 bytes)"),
        (damaged_pages, CorruptSession, "is damaged"),
        (damaged_first_page, CorruptSession, "is damaged"),
    ],
    ids=["not-sqlite", "foreign-sqlite", "foreign-sqlite-wal", "newer-schema", "truncated", "short-header",
         "damaged-pages", "damaged-first-page"],
)
async def test_a_file_that_is_not_a_readable_session_is_refused_by_name_and_left_untouched(path, make, error, words):
    result = make(path)
    if result is not None:
        await result
    before = files_next_to(path)
    assert list(before) == [path]  # nothing next to it: it was closed cleanly

    for _ in range(2):  # a refused open released the file: a second try is refused the same way
        with pytest.raises(error) as refused:
            await SQLiteStorage(path).open()
        assert path in str(refused.value) and words in str(refused.value)
        assert refused.value.location == path
        assert files_next_to(path) == before  # same bytes, same mtime, no -wal or -shm left


async def test_a_newer_file_reports_both_versions(path):
    await newer_schema(path)
    with pytest.raises(SchemaTooNew) as refused:
        await SQLiteStorage(path).open()
    assert (refused.value.found, refused.value.supported) == (SCHEMA_VERSION + 1, SCHEMA_VERSION)
    assert "Upgrade durable to open it" in str(refused.value)


# ----------------------------------------------------------------------------- a kill mid-checkpoint


def last_page_one_in_wal(wal: bytes) -> bytes:
    """The newest copy of page 1 among the WAL's valid frames (format: sqlite.org/fileformat)."""
    page_size = int.from_bytes(wal[8:12], "big")
    salts = wal[16:24]
    found, offset = None, 32
    while offset + 24 + page_size <= len(wal):
        header = wal[offset:offset + 24]
        if header[8:16] != salts:
            break
        if int.from_bytes(header[0:4], "big") == 1:
            found = wal[offset + 24:offset + 24 + page_size]
        offset += 24 + page_size
    assert found is not None, "page 1 is not in the WAL"
    return found


async def test_a_file_killed_in_the_middle_of_a_checkpoint_opens_with_everything(tmp_path, path):
    # A checkpoint copies WAL pages into the file in page order: page 1 (with the new database
    # size) first. A kill right after it leaves a file shorter than its header says, with the
    # WAL still holding every page. That is a recoverable file, not a truncated one.
    await a_session(path, entries=5)
    entries = [user(seq, noise(3000, seq)) for seq in range(6, 60)]  # long, and stored long (not packed)
    crashed = os.fspath(tmp_path / "crashed.db")
    async with opened(path) as store:
        await store.commit(Batch(entries=entries, live={"root": busy(1)}))
        for suffix in ("", "-wal"):  # what a kill leaves on disk: the file and its WAL
            with open(path + suffix, "rb") as src, open(crashed + suffix, "wb") as dst:
                dst.write(src.read())
    with open(crashed + "-wal", "rb") as f:
        page_one = last_page_one_in_wal(f.read())
    with open(crashed, "r+b") as f:
        f.write(page_one)
    assert int.from_bytes(page_one[28:32], "big") * len(page_one) > os.path.getsize(crashed)

    async with opened(crashed) as store:
        assert (await store.get_entries("root"))[5:] == entries
        assert await store.get_live("root") == busy(1)
        assert await store.call_in_writer(lambda c: c.execute("PRAGMA integrity_check").fetchone()[0]) == "ok"


async def test_a_file_killed_while_its_first_open_switched_it_to_wal_opens_as_a_new_session(path):
    # The first open turns a new, empty file into a WAL database: SQLite writes page 1 under a
    # rollback journal. A kill before the journal is deleted leaves it hot (original size: 0
    # pages). A read-only look cannot roll it back; the file is not damaged, only unfinished.
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")  # page 1 as the switch wrote it
    conn.close()
    header = bytes.fromhex("d9d505f920a163d7") + struct.pack(">IIIII", 0, 0x5EED, 0, 512, 4096)
    with open(path + "-journal", "wb") as journal:  # nRec 0, nonce, 0 pages originally
        journal.write(header.ljust(512, b"\0"))

    async with opened(path) as store:
        assert await store.call_in_writer(lambda c: c.execute("PRAGMA application_id").fetchone()[0]) != 0
        await store.commit(Batch(entries=[user(1)], live={"root": Live()}))
    assert not os.path.exists(path + "-journal")
    async with opened(path) as store:
        assert await store.get_entries("root") == [user(1)]



async def work_of_open(path: str, history: int) -> int:
    """SQLite VM instructions open() runs on a session with `history` entries (and history in
    proportion: terminal tasks, settled submissions, one compaction far back), 2 live tasks."""
    async with opened(path) as store:
        await store.commit(
            Batch(
                tasks=[task(i, state=Terminal(Done())) for i in range(1, history // 4)],
                entries=[user(1), compaction(2, 2)] + [user(seq) for seq in range(3, history + 1)],
                submissions=[submission(f"s{i}", status=Answered()) for i in range(history // 10)],
                live={"root": Live()},
            )
        )
        await store.commit(Batch(tasks=[task(history), task(history + 1)], submissions=[submission("q")],
                                 live={"child": Live()}))

        def count(conn: sqlite3.Connection) -> int:
            steps = [0]

            def tick() -> int:
                steps[0] += 1
                return 0

            conn.set_progress_handler(tick, 1)
            try:
                opened_now = store._read_opened(conn)
            finally:
                conn.set_progress_handler(None, 1)
            assert opened_now.conversations["root"].last_seq == history
            assert opened_now.conversations["root"].last_compaction == compaction(2, 2)
            assert [t.id for t in opened_now.live_tasks] == [history, history + 1]
            assert [s.id for s in opened_now.unsettled] == ["q"]
            return steps[0]

        return await store.call_in_writer(count)


async def test_opening_costs_the_same_for_a_short_and_a_twenty_times_longer_history(tmp_path):
    # What open() reads must not grow with history: no walk over the entries (to find the last
    # compaction), the terminal tasks or the settled submissions.
    short = await work_of_open(os.fspath(tmp_path / "short.db"), 200)
    long = await work_of_open(os.fspath(tmp_path / "long.db"), 4000)
    assert long <= short * 1.2, (short, long)
