"""No silent rollback (issue 25, item 5): SQLite opens a file whose WAL was removed, cut short or
damaged in its header or first frame as of its last checkpoint, without a word. The commit mark
(`durable.storage.sqlite.mark`) records how many barrier commits the file acknowledged; an open
that finds the file behind it is refused with `CorruptSession` naming the file and the number of
missing commits, and changes nothing. The sessions here are cut off by SIGKILL, their commits in
the WAL (never checkpointed: small)."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys

import pytest

import durable
from durable.errors import CorruptSession
from durable.models import FauxModel, faux
from durable.records import Live
from durable.storage import Batch, SQLiteStorage
from durable.storage.sqlite import mark

pytestmark = pytest.mark.anyio

# A harness at argv[1] answers three inputs, prints "ready" and waits to be killed.
KILLED_OWNER = """
import sys, trio, durable
from durable.models import FauxModel, faux

async def main():
    model = FauxModel([faux.reply(f"answer {i}") for i in range(3)])
    async with durable.open_harness(sys.argv[1], model=model) as h:
        for i in range(3):
            await (await h.root.submit(f"question {i}")).wait()
        print("ready", flush=True)
        await trio.sleep_forever()

trio.run(main)
"""
BARRIERS = 6  # what KILLED_OWNER acknowledged: per input, its submit (with the first request) and its answer


@pytest.fixture
def anyio_backend():
    return "trio"


@pytest.fixture
def killed(tmp_path) -> str:
    """A session cut off by SIGKILL after three answered inputs, all of it in its WAL."""
    path = os.fspath(tmp_path / "session.sqlite")
    proc = subprocess.Popen([sys.executable, "-c", KILLED_OWNER, path], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert mark.read(path) is not None and mark.read(path)[1] == BARRIERS  # type: ignore[index]
    assert os.path.getsize(path) == 4096 and os.path.getsize(path + "-wal") > 4096  # never checkpointed
    return path


def digests(path: str) -> dict[str, str]:
    out = {}
    for name in (path, path + "-wal", path + "-mark"):
        if os.path.exists(name):
            with open(name, "rb") as f:
                out[name] = hashlib.sha256(f.read()).hexdigest()
    return out


def missing(path: str, held: int) -> str:
    commits = "1 acknowledged commit is" if BARRIERS - held == 1 else f"{BARRIERS - held} acknowledged commits are"
    return (f"Session file {path}: the WAL was damaged or removed: {commits} "
            f"missing (the file holds {held} of the {BARRIERS} barrier commits recorded in {path}-mark). Nothing "
            f"was changed; restore the file and its -wal from a copy, or, to go on without those commits, delete "
            f"{path}-mark and open it again")


async def refused(path: str) -> str:
    with pytest.raises(CorruptSession) as caught:
        async with durable.open_harness(path, model=FauxModel([])):
            pass
    assert caught.value.location == path
    return str(caught.value)


def damage(name: str, offset: int, length: int) -> None:
    with open(name, "r+b") as f:
        f.seek(offset)
        f.write(random.Random(f"{offset}/{length}").randbytes(length))


async def test_a_killed_session_with_its_wal_intact_opens_with_every_answer(killed):
    async with durable.open_harness(killed, model=FauxModel([])) as h:
        assert [e.entry.text for e in await h.root.entries()][-1] == "answer 2"


@pytest.mark.parametrize("how", ["removed", "header", "first-frame", "emptied"])
async def test_a_wal_removed_or_damaged_at_its_start_is_refused_naming_the_missing_commits_and_nothing_changes(
        killed, how):
    wal = killed + "-wal"
    if how == "removed":
        os.remove(wal)
    elif how == "header":
        damage(wal, 0, 32)
    elif how == "first-frame":
        damage(wal, 32, 24)
    else:
        os.truncate(wal, 0)
    before = digests(killed)
    for _ in range(2):  # the refused open changed nothing: refused the same way again
        assert await refused(killed) == missing(killed, 0)
        assert digests(killed) == before


async def test_a_wal_cut_short_is_refused_with_the_commits_after_the_cut(killed):
    wal = killed + "-wal"
    os.truncate(wal, os.path.getsize(wal) // 2)
    before = digests(killed)
    message = await refused(killed)
    held = int(message.split("(the file holds ")[1].split(" ")[0])
    assert 0 < held < BARRIERS and message == missing(killed, held)
    assert digests(killed) == before


async def test_a_session_file_emptied_where_a_session_was_recorded_is_refused(killed):
    os.remove(killed + "-wal")
    os.truncate(killed, 0)
    assert await refused(killed) == (
        f"Session file {killed} is empty, but {BARRIERS} acknowledged commits were recorded for it in {killed}-mark: "
        f"it was truncated or replaced. durable will not start a new session over it; restore the file from a copy, "
        f"or delete {killed}-mark to start a new session here")
    assert os.path.getsize(killed) == 0


async def test_deleting_the_mark_accepts_the_loss_and_the_session_goes_on_from_what_the_file_holds(killed):
    damage(killed + "-wal", 0, 32)
    await refused(killed)
    os.remove(killed + "-mark")
    async with durable.open_harness(killed, model=FauxModel([faux.reply("again")])) as h:
        assert await h.root.entries() == []  # the session as of its last checkpoint: before anything
        assert await (await h.root.submit("hello")).wait() == durable.Answered("again", 2)


async def test_another_session_moved_to_the_path_opens_and_takes_over_the_mark(killed, tmp_path):
    other = os.fspath(tmp_path / "other.sqlite")
    async with durable.open_harness(other, model=FauxModel([faux.reply("other")])) as h:
        await (await h.root.submit("hi")).wait()
    os.remove(killed + "-wal")
    shutil.copy(other, killed)  # the mark beside it is the killed session's, with more barriers
    async with durable.open_harness(killed, model=FauxModel([])) as h:
        assert [e.entry.text for e in await h.root.entries()] == ["hi", "other"]
    assert mark.read(killed) == mark.read(other)


async def test_a_deleted_session_file_starts_a_new_session_over_its_stale_mark(killed):
    os.remove(killed)
    os.remove(killed + "-wal")
    store = SQLiteStorage(killed)
    await store.open()
    await store.close()
    recorded = mark.read(killed)
    assert recorded is not None and recorded[1] == 0
    async with durable.open_harness(killed, model=FauxModel([])) as h:
        assert await h.root.entries() == []


async def test_a_barrier_counts_itself_in_the_file_and_the_mark_follows_it(tmp_path):
    path = os.fspath(tmp_path / "session.sqlite")
    store = SQLiteStorage(path)
    await store.open()
    try:
        session = mark.read(path)[0]  # type: ignore[index]
        await store.commit(Batch(live={"root": Live()}))  # a barrier
        lazy = Batch(live={"root": Live()})
        lazy.barrier = False
        await store.commit(lazy)  # lazy: not counted
        await store.commit(Batch(live={"root": Live()}))
        in_file = await store.call_in_writer(
            lambda c: c.execute("SELECT value FROM meta WHERE key = 'barriers'").fetchone()[0])
        assert (in_file, mark.read(path)) == ("2", (session, 2))
    finally:
        await store.close()
