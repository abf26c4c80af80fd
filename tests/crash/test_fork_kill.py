"""SIGKILL during fork commits: a fork is in the file whole (every entry of its source, its live
document) or not at all, every acknowledged fork is there, and the invariants hold after each kill."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import trio

from durable.storage import SQLiteStorage
from durable.testing import check_invariants

from . import fork_child

CHILD = os.path.join(os.path.dirname(__file__), "fork_child.py")
KILLS = int(os.environ.get("DURABLE_KILLS", "6"))
SEED = int(os.environ.get("DURABLE_KILL_SEED", "20261202"))


def run_and_kill(path: str, rng: random.Random) -> tuple[list[int], int | None]:
    """Start a child, kill it a random time after it is ready; the forks it acknowledged, and the
    one it was making when killed (None if it was between forks)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, CHILD, path], stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None
    assert child.stdout.readline() == "ready\n"
    time.sleep(rng.uniform(0.0, 0.2))
    os.kill(child.pid, signal.SIGKILL)
    out, _ = child.communicate()
    lines = out.splitlines()
    acked = [int(x.split()[1]) for x in lines if x.startswith("forked ")]
    started = [int(x.split()[1]) for x in lines if x.startswith("forking ")]
    in_flight = started[-1] if started and (not acked or started[-1] != acked[-1]) else None
    return acked, in_flight


async def forks_in(path: str) -> tuple[list, dict[str, int]]:
    store = SQLiteStorage(path)
    opened = await store.open()
    try:
        source = await store.get_entries("src")
        found = {}
        for cid in opened.conversations:
            if cid != "src":
                copied = await store.get_entries(cid)
                assert [(e.seq, e.entry) for e in copied] == [(e.seq, e.entry) for e in source], cid
                found[cid] = len(copied)
        return source, found
    finally:
        await store.close()


def test_a_fork_cut_off_by_sigkill_is_whole_or_absent(tmp_path):
    rng = random.Random(SEED)
    path = str(tmp_path / "forks.sqlite")
    acknowledged: list[int] = []
    before: set[str] = set()  # the forks the file held before this child
    mid_fork = 0
    for kill in range(KILLS):
        acked, in_flight = run_and_kill(path, rng)
        acknowledged += acked
        source, found = trio.run(forks_in, path)
        assert len(source) == 2 * fork_child.PAIRS
        assert set(found) >= {f"f{k}" for k in acknowledged}, f"kill {kill} (seed {SEED})"
        new = set(found) - before - {f"f{k}" for k in acked}
        assert new <= ({f"f{in_flight}"} if in_flight is not None else set()), f"kill {kill} (seed {SEED})"
        mid_fork += in_flight is not None
        before = set(found)
        assert check_invariants(path) == [], f"kill {kill} (seed {SEED})"
    print(f"{mid_fork} of {KILLS} kills during a fork, {len(acknowledged)} forks acknowledged")
    assert mid_fork >= KILLS // 2  # most kills landed while a fork was being made
