"""Power cuts and failing disks, through a recording apsw VFS: every write that was not fsynced is
lost (or, `torn`, only some of it reached the disk, some cut at a sector). This exercises
SQLite's durability under durable's pragmas and transaction shape on durable's schema, not the
store's writer thread (see `durable.testing.powercut`)."""

from __future__ import annotations

import os
import shutil
import uuid

import pytest

apsw = pytest.importorskip("apsw")

from durable.testing.powercut import (  # noqa: E402
    PowerCutVFS,
    commit_batch,
    open_session,
    power_cut_test,
    run_batch,
    survivors,
)

SEEDS = range(int(os.environ.get("DURABLE_POWERCUT_SEEDS", "30")))


@pytest.fixture
def vfs():
    v = PowerCutVFS(f"durable-powercut-{uuid.uuid4().hex[:8]}")
    yield v
    v.close()


@pytest.mark.parametrize("torn", [False, True], ids=["synced-only", "torn"])
@pytest.mark.parametrize("during", [False, True], ids=["between-commits", "during-a-commit"])
def test_with_synchronous_full_a_power_cut_loses_no_acknowledged_commit(tmp_path, torn, during):
    for seed in SEEDS:
        result = power_cut_test(str(tmp_path / f"s{seed}"), synchronous="FULL", commits=25, seed=seed,
                                torn=torn, during=during)
        assert result.violations == [], (seed, result)
        assert result.survived >= result.acknowledged


@pytest.mark.parametrize("torn", [False, True], ids=["synced-only", "torn"])
@pytest.mark.parametrize("during", [False, True], ids=["between-commits", "during-a-commit"])
def test_with_synchronous_normal_a_power_cut_may_lose_the_newest_commits_but_never_half_of_one(tmp_path, torn,
                                                                                            during):
    lost = 0
    for seed in SEEDS:
        result = power_cut_test(str(tmp_path / f"s{seed}"), synchronous="NORMAL", commits=25, seed=seed,
                                torn=torn, during=during)
        assert result.violations == [], (seed, result)  # whole runs 1..k, a valid session
        lost += result.acknowledged - min(result.survived, result.acknowledged)
    print(f"\nsynchronous=NORMAL: {lost} acknowledged commits lost over {len(SEEDS)} power cuts")
    assert lost > 0  # the simulation does lose what was not synced: NORMAL is a real trade


@pytest.mark.parametrize("torn", [False, True], ids=["synced-only", "torn"])
@pytest.mark.parametrize("during", [False, True], ids=["between-commits", "during-a-commit"])
def test_with_external_synchrony_a_power_cut_keeps_every_commit_up_to_the_last_barrier(tmp_path, torn, during):
    # Every third commit is a barrier (FULL), the others lazy (NORMAL), as the store writes them.
    lost_lazy = 0
    for seed in SEEDS:
        result = power_cut_test(str(tmp_path / f"s{seed}"), synchronous="EXTERNAL", commits=25, seed=seed,
                                torn=torn, during=during, barrier_every=3)
        assert result.violations == [], (seed, result)  # a prefix of whole runs, nothing lost up to the barrier
        assert result.survived >= result.last_barrier
        assert result.last_barrier == result.acknowledged - result.acknowledged % 3
        lost_lazy += result.acknowledged - min(result.survived, result.acknowledged)
    print(f"\nexternal synchrony: {lost_lazy} lazy commits after the last barrier lost over {len(SEEDS)} power cuts")
    assert lost_lazy > 0  # lazy commits really are not synced: the barrier is what holds them


def _three_runs(tmp_path, vfs, synchronous="FULL"):
    path = str(tmp_path / "session.sqlite")
    conn = open_session(path, vfs, synchronous=synchronous)
    for k in (1, 2, 3):
        commit_batch(conn, run_batch(k))
    return path, conn


def _present(conn, k):
    return conn.execute("SELECT count(*) FROM tasks WHERE id = ?", (k,)).fetchall()[0][0] == 1


@pytest.mark.parametrize("failure", ["fsync", "write"])
def test_a_commit_whose_fsync_or_write_fails_is_rolled_back_whole_and_the_next_ones_succeed(tmp_path, vfs, failure):
    path, conn = _three_runs(tmp_path, vfs)
    if failure == "fsync":
        vfs.fail_sync = lambda p: apsw.IOError("injected fsync failure") if p.endswith("-wal") else None
        expected = apsw.IOError
    else:
        vfs.fail_write = lambda p, offset, size: apsw.FullError("injected: disk full") if p.endswith("-wal") else None
        expected = apsw.FullError
    with pytest.raises(expected):
        commit_batch(conn, run_batch(4))
    vfs.fail_sync = vfs.fail_write = None
    assert not conn.in_transaction
    assert not _present(conn, 4)  # nothing of the failed batch is visible
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    cut = survivors(vfs.cut(path, str(tmp_path / "cut-now")), expect=3)
    assert (cut.runs, cut.violations) == (3, [])
    torn = survivors(vfs.cut(path, str(tmp_path / "cut-torn"), torn=True))
    assert torn.runs in (3, 4) and torn.violations == []  # never half of it
    # Once the disk is back, commits succeed and are durable.
    commit_batch(conn, run_batch(4))
    commit_batch(conn, run_batch(5))
    after = survivors(vfs.cut(path, str(tmp_path / "cut-after")), expect=5)
    assert (after.runs, after.violations) == (5, [])
    conn.close()


def test_a_commit_whose_fsync_failed_stays_absent_after_the_process_dies(tmp_path, vfs):
    """A refused commit's frames stay in the WAL with a valid commit record; WAL recovery after
    the death of the process would bring the refused commit back, unless the store drops them
    (it checkpoints and truncates the WAL after an I/O error, as `commit_batch` does too)."""
    path, conn = _three_runs(tmp_path, vfs)
    failures = iter([apsw.IOError("injected fsync failure")])  # one transient failure
    vfs.fail_sync = lambda p: next(failures, None) if p.endswith("-wal") else None
    with pytest.raises(apsw.IOError):
        commit_batch(conn, run_batch(4))
    vfs.fail_sync = None
    # The process dies now (no power cut: every write it made is in the OS cache, so on disk).
    dead = tmp_path / "after-the-kill"
    dead.mkdir()
    for name in os.listdir(tmp_path):
        if name.startswith("session.sqlite") and not name.endswith("-shm"):
            shutil.copy(tmp_path / name, dead / name)
    found = survivors(str(dead / "session.sqlite"))
    conn.close()
    assert found.violations == []
    assert found.runs == 3, "the commit reported failed is in the file after the process died"
