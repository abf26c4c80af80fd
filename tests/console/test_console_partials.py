"""The standalone console follows a streamed answer that grows only in `<file>-partials` (the
appends SQLite sessions keep beside the file, with no transaction: the file and its WAL do not
change), as it follows any other commit."""

from __future__ import annotations

import os

import anyio
import pytest

import durable
from durable.console import sources
from durable.models import FauxModel
from durable.models.protocol import TextDelta

pytestmark = pytest.mark.anyio

FIRST, MORE = "a" * 300, "b" * 100


class Gated(FauxModel):
    """Streams FIRST, then MORE once `go` is set, then hangs."""

    def __init__(self) -> None:
        super().__init__([])
        self.go = anyio.Event()

    async def stream(self, request):  # type: ignore[override]
        yield TextDelta(FIRST)
        await self.go.wait()
        yield TextDelta(MORE)
        await anyio.sleep_forever()


def stat(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size)


def partial_text(state: dict) -> str:
    return state["live"]["root"]["generation"]["message"]["text"]


async def test_a_partial_growing_beside_the_file_is_a_new_version_of_the_session(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "_RECENT_NS", 0)  # only what the files say, not the time of the look
    path = str(tmp_path / "s.sqlite")
    model = Gated()
    settings = durable.Settings(progress=durable.Progress(persist_within=0))
    async with durable.open_harness(path, model=model, settings=settings) as h:
        sub = await h.root.submit("write")
        async for live in h.root.follow():
            if live.generation and live.generation.message and live.generation.message.text == FIRST:
                break
        console = sources.FileSource(path)
        before = await console.version()
        assert partial_text(await console.state()) == FIRST
        wal = stat(path + "-wal")
        model.go.set()
        async for live in h.root.follow():
            if live.generation and live.generation.message and live.generation.message.text == FIRST + MORE:
                break
        assert stat(path + "-wal") == wal  # the growth went beside the file only
        assert os.path.getsize(path + "-partials") > 0
        assert await console.version() != before
        assert partial_text(await console.state()) == FIRST + MORE
        await h.root.abort()
        assert (await sub.wait()).reason == "aborted"


def touch(path: str) -> None:
    """Another time for the file at `path`, as a write gives it (a second before its own: not in
    the future, which would be a change still recent)."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 1_000_000_000))


async def test_the_lock_is_looked_at_again_only_once_the_files_changed(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "_RECENT_NS", 0)
    looked: list[bool | None] = []

    def wal_write_locked(path: str) -> bool | None:
        looked.append(held)
        return held

    monkeypatch.setattr(sources, "wal_write_locked", wal_write_locked)
    path = str(tmp_path / "s.sqlite")
    async with durable.open_harness(path, model=FauxModel([])):
        console = sources.FileSource(path)
        held: bool | None = False
        first = await console.version()
        assert await console.version() == first and looked == [False]  # settled, the files as they were
        held = True
        touch(path + "-wal")
        during = await console.version()
        assert await console.version() != during and looked == [False, True, True]  # held: looked at each time
        held = False
        after = await console.version()
        assert await console.version() == after and looked == [False, True, True, False]
        held = None  # where /proc/locks cannot be read: settled, looked at each time
        touch(path + "-wal")
        unseen = await console.version()
        assert await console.version() == unseen and looked == [False, True, True, False, None, None]


async def test_a_commit_being_written_is_looked_at_again_once_visible(tmp_path, monkeypatch):
    # A commit's frames change the WAL's time and size before the commit is fsynced and visible
    # (an owner's barrier commit is at FULL): a look that reads while a write transaction holds
    # the WAL lock may miss the commit the WAL shows, so the next look reads again.
    import sqlite3

    monkeypatch.setattr(sources, "_RECENT_NS", 0)  # only what the files say, not the time of the look
    path = str(tmp_path / "s.sqlite")
    async with durable.open_harness(path, model=FauxModel([])):
        console = sources.FileSource(path)
        assert await console.version() == await console.version()  # settled: nothing being written
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # the WAL write lock, as a commit holds it
            touch(path + "-wal")  # and its frames written (the WAL changed), not visible yet
            during = await console.version()
            assert during != await console.version()  # each look while it is held reads again
            other.execute("ROLLBACK")
            after = await console.version()
            assert after != during and after == await console.version()
        finally:
            other.close()
