"""SIGKILL a process at random moments while it commits, again and again, on one session file.

A child (`kill_child.py`) commits numbered batches and prints each number once its commit was
awaited. The parent kills it at a random moment: during start-up and open, right after an
acknowledgement, or a few milliseconds into the next commit; with synchronous FULL or NORMAL and
SQLite's checkpoint interval or shorter ones (so that kills also land in the middle of a
checkpoint, see kill_child.py). After every kill it checks the file
read-only: it passes `PRAGMA integrity_check`, every acknowledged batch is there, and every batch
is there whole or not at all (exactly batches 1..N, each row equal to what the child committed).
The next child then continues on the same file from batch N+1.

`DURABLE_KILLS` (default 60) and `DURABLE_KILL_SEED` change the run; a failure names the seed.
"""

from __future__ import annotations

import os
import random
import signal
import shutil
import sqlite3
import subprocess
import sys
import time

import trio

from durable import codec
from durable.records import Entry, Live, StoredEntry, Submission, Task
from durable.storage import SQLiteStorage
from durable.storage.packing import unpack

from . import kill_child
from .kill_child import CONVERSATION, COUNTER_ID, ENTRIES_PER_BATCH

CHILD = os.path.join(os.path.dirname(__file__), "kill_child.py")
KILLS = int(os.environ.get("DURABLE_KILLS", "60"))
SEED = int(os.environ.get("DURABLE_KILL_SEED", "20261130"))


def committed_batches(path: str, probe: str) -> int:
    """Check the file after a kill and return N, the number of batches it holds (all whole).

    The check reads a copy (`probe`) of what the kill left (the file, its WAL, a rollback
    journal): SQLite recovers the copy as it would the file, while the file itself stays exactly
    as the kill left it for the next child's open to deal with."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(probe + suffix):
            os.remove(probe + suffix)
        if suffix != "-shm" and os.path.exists(path + suffix):
            shutil.copyfile(path + suffix, probe + suffix)
    if not os.path.exists(probe):
        return 0
    conn = sqlite3.connect(probe)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "tasks" not in tables:  # killed before the schema was committed
            return 0
        tasks = {tid: codec.loads(unpack(body), Task) for tid, body in conn.execute("SELECT id, body FROM tasks")}
        n = tasks[COUNTER_ID].restarts if COUNTER_ID in tasks else 0
        expected = [kill_child.batch(i) for i in range(1, n + 1)]

        expected_tasks = {t.id: t for b in expected for t in b.tasks if t.id != COUNTER_ID}
        assert tasks == ({COUNTER_ID: kill_child.counter(n), **expected_tasks} if n else {})
        entries = [
            StoredEntry(cid, seq, codec.loads(unpack(body), Entry))  # type: ignore[arg-type]
            for cid, seq, body in conn.execute("SELECT conversation_id, seq, body FROM entries "
                                               "ORDER BY conversation_id, seq")
        ]
        assert entries == [e for b in expected for e in b.entries]
        assert len(entries) == ENTRIES_PER_BATCH * n
        subs = [codec.loads(unpack(body), Submission)
                for (body,) in conn.execute("SELECT body FROM submissions ORDER BY rowid")]
        assert subs == [s for b in expected for s in b.submissions]
        docs = {cid: codec.loads(unpack(body), Live)
                for cid, body in conn.execute("SELECT conversation_id, body FROM documents")}
        assert docs == ({CONVERSATION: kill_child.live(n)} if n else {})
        return n
    finally:
        conn.close()


def run_and_kill(path: str, rng: random.Random) -> tuple[int, list[int]]:
    """Start a child, kill it at a random moment, and return (how, the numbers it acknowledged)."""
    checkpoint_pages = rng.choice([1000, 200, 16])  # SQLite's default, or a checkpoint every few commits
    synchronous = rng.choice(["FULL", "FULL", "NORMAL"])
    proc = subprocess.Popen([sys.executable, CHILD, path, str(checkpoint_pages), synchronous],
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    acks: list[int] = []
    how = rng.randrange(3)
    try:
        if how == 0:  # somewhere in start-up, open (and its schema commit) or the first commits
            time.sleep(rng.uniform(0.0, 0.4))
        else:  # after a number of acknowledged commits; then at once, or a moment into the next
            wanted = rng.choice([1, 2, 3, 5, 8, 13, 30])
            while len(acks) < wanted:
                line = proc.stdout.readline()
                assert line, f"the child ended on its own (exit {proc.poll()})"
                acks.append(int(line))
            if how == 2:
                time.sleep(rng.uniform(0.0, 0.003))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        acks += [int(line) for line in proc.stdout.read().split()]  # printed before it died
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, proc.returncode
    return how, acks


def test_sigkill_at_random_moments_never_loses_an_acknowledged_batch_nor_shows_half_of_one(tmp_path):
    path = os.fspath(tmp_path / "killed.db")
    probe = os.fspath(tmp_path / "probe.db")
    rng = random.Random(SEED)
    held = 0
    kinds = [0, 0, 0]
    for kill in range(1, KILLS + 1):
        how, acks = run_and_kill(path, rng)
        kinds[how] += 1
        context = f"seed {SEED}, kill {kill} (kind {how}), acks {acks[:3]}..{acks[-3:]}"
        assert acks == list(range(held + 1, held + 1 + len(acks))), f"acks do not continue the file: {context}"
        n = committed_batches(path, probe)
        assert n >= (acks[-1] if acks else held), f"an acknowledged batch is missing: {context}"
        assert n <= (acks[-1] if acks else held) + 1, f"more than the one unacknowledged batch landed: {context}"
        held = n

    assert held > KILLS, "the children committed too little for the test to mean much"
    assert all(kinds), kinds

    async def final_open() -> None:
        store = SQLiteStorage(path)
        opened = await store.open()
        assert opened.conversations[CONVERSATION].last_seq == ENTRIES_PER_BATCH * held
        assert opened.live_tasks == [kill_child.counter(held)]
        assert opened.next_task_id == held + 1
        await store.close()

    trio.run(final_open)
