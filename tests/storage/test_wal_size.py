"""The WAL stays small whatever the load (issue 25, item 2): after a barrier that leaves it past
`WAL_LIMIT` a passive checkpoint copies it into the database, and the file is cut back to the
limit when it starts again."""

from __future__ import annotations

import os

import pytest

from durable.records import GenerationLive, Live, PartialMessage
from durable.storage import Batch, SQLiteStorage
from durable.storage.sqlite.opening import WAL_LIMIT

pytestmark = pytest.mark.anyio

PAGE = 4096


def wal_size(path: str) -> int:
    try:
        return os.path.getsize(path + "-wal")
    except FileNotFoundError:
        return 0


def partial(text: str) -> Batch:
    return Batch(live={"root": Live(generation=GenerationLive(1, PartialMessage(text)))})


async def test_barrier_commits_keep_the_wal_within_its_limit_plus_one_transaction(tmp_path):
    path = os.fspath(tmp_path / "session.db")
    store = SQLiteStorage(path)
    await store.open()
    sizes = []
    try:
        for i in range(120):  # 120 commits of ~60 kB: 7 MB through the WAL
            await store.commit(partial(chr(ord("a") + i % 26) * 60_000))
            sizes.append(wal_size(path))
        checkpoints = store._writes.checkpoints
    finally:
        await store.close()
    one_commit = 60_000 + 4 * PAGE  # the document's pages and the pages above them
    assert max(sizes) <= WAL_LIMIT + 2 * one_commit, max(sizes)
    assert checkpoints >= 120 * 60_000 // (WAL_LIMIT + 2 * one_commit)


async def test_a_wal_grown_by_one_large_transaction_is_cut_back_to_the_limit_after_the_next_checkpoint(tmp_path):
    path = os.fspath(tmp_path / "session.db")
    store = SQLiteStorage(path)
    await store.open()
    try:
        await store.commit(partial("x" * 3_000_000))  # one transaction: a WAL of ~3 MB
        assert wal_size(path) > 3_000_000
        # Replacing it frees its ~730 pages, each written once more: a large transaction too.
        await store.commit(partial("small"))
        await store.commit(partial("smaller"))  # starts the checkpointed WAL again, cut back
        assert wal_size(path) <= WAL_LIMIT
        await store.commit(partial("smallest"))
        assert wal_size(path) <= WAL_LIMIT
    finally:
        await store.close()


async def test_lazy_commits_alone_keep_the_wal_within_sqlites_own_checkpoint_interval(tmp_path):
    path = os.fspath(tmp_path / "session.db")
    store = SQLiteStorage(path)
    await store.open()
    sizes = []
    try:
        for i in range(200):  # lazy: no barrier, so only SQLite's checkpoint every 1,000 pages runs
            batch = partial(chr(ord("a") + i % 26) * 60_000)
            batch.barrier = False
            await store.commit(batch)
            sizes.append(wal_size(path))
    finally:
        await store.close()
    assert max(sizes) <= 1000 * (PAGE + 24) + 2 * (60_000 + 4 * PAGE), max(sizes)
    assert min(sizes[100:]) <= WAL_LIMIT  # and cut back after each of those checkpoints
