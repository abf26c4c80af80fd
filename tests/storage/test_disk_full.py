"""A nearly full disk ends visibly, and the way out exists (issue 25, item 3): commits refused by a
full disk are tried again for `disk_full_patience` seconds, reported as it goes; then the harness
stops starting work, every wait ends with `DiskFull` naming the file and the space left, and
`close()` returns; once space is back the session resumes and the invariants hold. An open with
little room left is reported.

Without root, a full disk is the process's file size limit (`RLIMIT_FSIZE`) in a child process
(`disk_full_child.py`, on trio's MockClock: the default 60 s of patience pass in virtual time);
as root, also a 2 MB tmpfs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio
import trio.testing

import durable
from durable.models import FauxModel, faux
from durable.storage import SQLiteStorage
from durable.storage.sqlite.write import SQLiteWrites
from durable.testing import FakeClock, check_invariants
from durable.testing.quiesce import Settled, settle

from .builders import noise

pytestmark = pytest.mark.anyio

CHILD = Path(__file__).with_name("disk_full_child.py")
LIMIT = 256 * 1024  # below the answer's 300 kB: the answer can never be written under it
ANSWER = noise(300_000)  # does not compress: a long body of it is stored as it is, filling the disk


@pytest.fixture
def anyio_backend():
    return "trio"


def run_child(path: str) -> list[dict]:
    done = subprocess.run([sys.executable, str(CHILD), path, str(LIMIT)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_full_disk_that_lasts_stops_the_harness_after_its_patience_and_the_session_resumes_with_space(tmp_path):
    path = os.fspath(tmp_path / "session.sqlite")
    events = run_child(path)
    reports = [e for e in events if "report" in e]
    limit = "the process's file size limit (RLIMIT_FSIZE) is 256.0 kB"
    assert re.fullmatch(rf"Session file {re.escape(path)} has little room to grow \(.* free on the disk of "
                        rf"{re.escape(str(tmp_path))}; {re.escape(limit)}, .* left\): when it fills, commits are "
                        r"refused \(DiskFull\) and tried again for settings.disk_full_patience seconds, then the "
                        r"harness stops", reports[0]["report"])
    assert reports[0]["topic"] == "disk"
    full = f"A commit to {path} was rolled back: the disk or the file's size limit is full (disk I/O error; "
    refusals = [e for e in reports if e["topic"] == "commit"]
    assert refusals and all(full in e["report"] and limit in e["report"] for e in refusals)
    # The commit that gives up is the last one reported (commits land in order: one sent after a
    # refused one waits behind it): usually the answer's (task 1's); under load a partial answer's
    # flush may be refused first and give up itself. Each commit's patience runs from its own first
    # refusal; a partial's flush refused before the answer's may also have landed since.
    owners = [e["report"].split(" could not commit and will try again: ")[0] for e in refusals]
    assert all(re.fullmatch(r"Task 1 \(generation\)|The commit of conversation '[^']+''s live document", o)
               for o in owners), owners
    giving_up = owners[-1]
    refusals = [e for e, o in zip(refusals, owners, strict=True) if o == giving_up]
    patience_left = [int(m) for e in refusals for m in re.findall(r"tried again for (\d+) s more", e["report"])]
    assert len(patience_left) == len(refusals) and patience_left[0] == 60, refusals
    assert patience_left == sorted(patience_left, reverse=True)

    (first,) = [e for e in events if e.get("outcome") in ("answered", "DiskFull")]
    assert first["outcome"] == "DiskFull"
    assert first["message"].startswith(full) and first["message"].endswith(
        "). The disk stayed full for 60 s (disk_full_patience): durable stops starting work; nothing acknowledged is "
        "lost: free some space and open the session again")
    assert 60 <= first["at"] - refusals[0]["at"] < 61  # virtual time: the patience, and one last attempt
    assert [e for e in events if "then" in e] == [{"then": "DiskFull", "same": True}]  # no new work either
    (closed,) = [e for e in events if "closed" in e]
    assert closed["at"] == first["at"] and closed["requests"] == 1  # close returned at once; nothing else sent

    (again,) = [e for e in events if e.get("outcome") == "again"]
    assert again["settled"].startswith("Settled(quiescent=True"), again
    assert (again["status"], again["text_length"]) == ("Answered", 300_000)
    assert events[-1] == {"violations": []}


def test_settle_waits_for_the_writer_thread_on_a_mock_clock_instead_of_finding_the_harness_stuck(tmp_path,
                                                                                                  monkeypatch):
    """The cause of the hang this child once had under load: `settle` measured "stuck" (10 s
    without a commit) in the loop's time, and on trio's MockClock (autojump) a task waiting for
    the writer thread counts as blocked, so the clock jumped from one of settle's polls to the
    next while a slow commit was written: settle gave up as "stuck" with a retry due on the
    FakeClock, and the child's wait for the answer, with nothing left to move either clock,
    spun the loop at 100% CPU. Here one commit is held until 20 s of virtual time passed."""
    TEXT = "Hello, world. " * 20
    gate = threading.Event()
    held = [False]
    write = SQLiteWrites.write

    def slow_write(self, rows):
        if held[0] and not rows.barrier:  # a partial answer's: the task is still running
            held[0] = False
            gate.wait()  # released by the loop, in virtual time: no real-time sleep
        return write(self, rows)

    monkeypatch.setattr(SQLiteWrites, "write", slow_write)

    async def main() -> tuple[Settled, object]:
        model = FauxModel([faux.reply(TEXT)], tokens_per_second=100, token_size=10)
        clock = FakeClock()
        settings = durable.Settings(progress=durable.Progress(persist_within=0), check_integrity=False)
        storage = SQLiteStorage(os.fspath(tmp_path / "session.sqlite"), inbox_poll_seconds=None)
        async with durable.open_harness(storage, model=model, settings=settings, clock=clock) as h:
            await h.root.submit("hi", id="s")
            held[0] = True  # the first partial answer is written 20 virtual seconds late

            async def release() -> None:
                await trio.sleep(20)
                gate.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(release)
                settled = await settle(h, clock)
            return settled, await h.root.submission("s").wait()

    settled, status = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert settled.quiescent, settled
    assert status == durable.Answered(TEXT, 2)


@pytest.fixture
def small_disk(tmp_path):
    """A folder on a 2 MB tmpfs (root only), and a way to give it more room."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a small tmpfs needs root and mount(8)")
    folder = tmp_path / "disk"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", folder], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")

    def grow() -> None:
        subprocess.run(["mount", "-o", "remount,size=64m", folder], check=True)

    try:
        yield folder, grow
    finally:
        subprocess.run(["umount", folder], check=True)


async def test_a_300_kb_answer_on_a_2_mb_disk_is_answered_or_ends_disk_full_and_resumes_once_space_is_back(
        small_disk):
    folder, grow = small_disk
    path = os.fspath(folder / "session.sqlite")
    model = FauxModel([faux.reply(ANSWER), faux.reply(ANSWER)], tokens_per_second=20_000, token_size=1000)
    clock = FakeClock()
    reports: list = []
    settings = durable.Settings(progress=durable.Progress(persist_within=0.02), disk_full_patience=2.0,
                                check_integrity=False, retry=durable.RetryPolicy(base_delay=1.0))
    async with durable.open_harness(path, model=model, settings=settings, clock=clock, report=reports.append) as h:
        assert [r.topic for r in reports] == ["disk"]  # 2 MB free: reported at open
        assert reports[0].message.startswith(f"Session file {path} has little room to grow (")
        sub = await h.root.submit("Write a long answer", id="long")
        try:
            outcome = await sub.wait()
        except durable.DiskFull as exc:
            outcome = exc
    if isinstance(outcome, durable.DiskFull):  # ended visibly, and close() returned
        assert str(outcome).startswith(f"A commit to {path} was rolled back: the disk or the file's size limit is "
                                       f"full (")
        assert "The disk stayed full for 2 s (disk_full_patience)" in str(outcome)
    else:
        assert outcome == durable.Answered(ANSWER, 2)
    grow()
    async with durable.open_harness(path, model=model, settings=settings, clock=clock) as h:
        await settle(h, clock)
        assert isinstance(await h.root.submission("long").wait(), durable.Answered)
    assert check_invariants(path, acknowledged=["long"], clean_close=True) == []
