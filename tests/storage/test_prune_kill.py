"""A prune killed at random points (a real child process, SIGKILL): after every kill the file is
consistent (the invariant checker passes, every conversation is whole or gone, every attachment
a remaining row references is stored), and a prune started again finishes the deletion and the
sweep of the attachments (docs/spec.md §6)."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys

import anyio
import pytest

import durable
from durable.models.faux import Hang, reply
from durable.storage.sqlite.reader import SessionReader
from durable.testing.invariants import check_invariants
from durable.testing.scripts import by_input

CHILD = os.path.join(os.path.dirname(__file__), "prune_child.py")
ENDED = 40
BUSY = ("busy-0", "busy-1")
ROWS_PER_COMMIT = 7


SHARED = b"\x89PNG\r\n\x1a\n shared by every third ended conversation and the busy ones"


def _own(i: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + f"the image of conversation {i}".encode()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def _build(path: str) -> None:
    model = by_input({"keep working": [Hang()]}, default=reply("All done here."))
    async with durable.open_harness(path, model=model, synchronous="NORMAL") as h:
        for i in range(ENDED):  # an image of its own each, every third one the shared image too
            images = [durable.Image(_own(i))] + ([durable.Image(SHARED)] if i % 3 == 0 else [])
            sub = await h.conversation(f"c{i:02d}").submit([f"question {i}", *images])
            assert await sub.answer() == "All done here."
        for cid in BUSY:  # a run that never ends: written back pending at close
            await h.conversation(cid).submit(["keep working", durable.Image(SHARED)])


def _stored_attachments(path: str) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {sha for (sha,) in conn.execute("SELECT sha256 FROM attachments")}
    finally:
        conn.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = os.fspath(tmp_path_factory.mktemp("prune") / "template.sqlite")
    anyio.run(_build, path, backend="trio")
    return path


def _shape(path: str) -> dict[str, tuple[int, int, int, bool]]:
    """Per conversation as a reader sees it: (entries, tasks, submissions, has a live document)."""
    with SessionReader(path) as reader:
        stored = reader.rows()
    shape: dict[str, list[int]] = {}
    for cid, *_ in stored.entries:
        shape.setdefault(cid, [0, 0, 0, 0])[0] += 1
    for _, cid, *_ in stored.tasks:
        shape.setdefault(cid, [0, 0, 0, 0])[1] += 1
    for _, cid, *_ in stored.submissions:
        shape.setdefault(cid, [0, 0, 0, 0])[2] += 1
    for cid, _ in stored.documents:
        shape.setdefault(cid, [0, 0, 0, 0])[3] = 1
    return {cid: (e, t, s, bool(d)) for cid, (e, t, s, d) in shape.items()}


def _run_child(path: str, kill_after: int | None) -> list[str]:
    """Run the child; SIGKILL it right after its `kill_after`-th commit (None: let it finish)."""
    child = subprocess.Popen([sys.executable, CHILD, path, str(ROWS_PER_COMMIT)], stdout=subprocess.PIPE)
    assert child.stdout is not None
    lines: list[str] = []
    commits = 0
    for raw in child.stdout:
        lines.append(raw.decode().strip())
        commits += lines[-1] in ("commit", "sweep")
        if kill_after is not None and commits == kill_after:
            child.send_signal(signal.SIGKILL)
            break
    child.stdout.close()
    child.wait()
    return lines


@pytest.mark.parametrize("seed", [1, 2])
def test_prune_killed_at_random_points_then_finished(template: str, tmp_path, seed: int) -> None:
    before = _shape(template)
    assert len(before) == ENDED + len(BUSY)
    assert _stored_attachments(template) == {_sha(SHARED), *(_sha(_own(i)) for i in range(ENDED))}
    path = os.fspath(tmp_path / "session.sqlite")
    shutil.copy(template, path)
    rng = random.Random(seed)
    kills = 0
    while True:
        lines = _run_child(path, kill_after=rng.randint(1, 20))
        if lines and lines[-1].startswith("done"):
            break
        kills += 1
        assert check_invariants(path) == [], f"after kill {kills}"
        now = _shape(path)
        for cid, shape in now.items():  # every conversation whole or gone, never half deleted
            assert shape == before[cid], f"conversation {cid} after kill {kills}"
        assert set(BUSY) <= set(now)
        assert _sha(SHARED) in _stored_attachments(path)  # the busy ones reference it: never swept
    assert kills >= 2
    # Done: the ended ones are gone, the live ones whole, nothing left behind in the raw tables.
    assert _shape(path) == {cid: before[cid] for cid in BUSY}
    assert check_invariants(path) == []
    conn = sqlite3.connect(path)
    try:
        for table in ("entries", "tasks", "submissions", "documents"):
            left = {cid for (cid,) in conn.execute(f"SELECT DISTINCT conversation_id FROM {table}")}
            assert left == set(BUSY), table
        assert conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'deleting:%'").fetchone() == (0,)
    finally:
        conn.close()
    assert _stored_attachments(path) == {_sha(SHARED)}  # each ended conversation's own image swept
    # Prune again: nothing more to do.
    assert _run_child(path, kill_after=None) == ["ended 0", "done 0"]


def test_prune_killed_between_two_sweep_commits_is_swept_by_the_next_prune(template: str, tmp_path) -> None:
    path = os.fspath(tmp_path / "session.sqlite")
    shutil.copy(template, path)
    # Step by step: SIGKILLed right after the first commit of the sweep, the conversations gone.
    child = subprocess.Popen([sys.executable, CHILD, path, str(ROWS_PER_COMMIT), "step"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdin is not None
    for raw in child.stdout:
        line = raw.decode().strip()
        if line == "sweep":
            child.send_signal(signal.SIGKILL)
            break
        if line == "commit":
            child.stdin.write(b"\n")
            child.stdin.flush()
    child.stdout.close()
    child.stdin.close()
    child.wait()
    assert check_invariants(path) == []
    assert set(_shape(path)) == set(BUSY)
    stored = _stored_attachments(path)
    everything = {_sha(SHARED), *(_sha(_own(i)) for i in range(ENDED))}
    assert _sha(SHARED) in stored and len(stored) == len(everything) - ROWS_PER_COMMIT  # one commit's worth swept
    # The next prune has no conversation to delete, and sweeps the rest.
    assert _run_child(path, kill_after=None) == ["ended 0", *["sweep"] * -(-(len(stored) - 1) // ROWS_PER_COMMIT),
                                                 "done 0"]
    assert _stored_attachments(path) == {_sha(SHARED)}
    assert check_invariants(path) == []
