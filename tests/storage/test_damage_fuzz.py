"""Single-page damage fuzz (issue 13, "must show"): a real session with some history, written
through the harness, then one page damaged with seeded random bytes; opening it with
`durable.open_harness`, submitting and waiting must, within a time bound, either work on a file
whose `PRAGMA integrity_check` is ok, or end with a clear `DurableError` naming the file. Never a
hang, never an internal error.

The cases (seeded by `DURABLE_FUZZ_SEED`, default 1; each case its own random generator):

- `page`: one database page (not the header page) overwritten wholly with random bytes;
- `span`: 8 to 256 random bytes at a random offset of any page;
- `header`: page 1 (the SQLite header and the schema table) wholly, its 100-byte header only,
  or the rest of the page;
- `wal`: the same session cut off while it was open (its `-wal` holding the last commits, its
  commit mark beside it), with the WAL header or one frame (its header or its page) damaged.
  SQLite ends a WAL at the first frame that fails its checksum, so the commits in and after the
  damaged frame are gone; when a barrier commit is among them the commit mark refuses the open
  (`durable.storage.sqlite.mark`), naming the file and how many acknowledged commits are missing;
  "works" here means only lazy commits after the last barrier were lost (reported as such).

Outcomes: `works` (answered, integrity ok), `refused` (a `DurableError` naming the file, when
opening, submitting or waiting), `unanswered` (the wait ended `Unanswered` with a detail naming
the file), `reported` (answered, and the harness's integrity check reported the damage naming the
file), and the ones that must not happen: `hang` (the bound passed), `internal` (anything but a
`DurableError`), `unclear` (a `DurableError` not naming the file), `used-damaged` (answered while
integrity_check fails, without a word). `pytest -s` prints the table. Replay cases with
`DURABLE_FUZZ_ONLY=page-3,wal-1`; `DURABLE_FUZZ_KEEP=DIR` keeps the damaged files there.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

import durable
from durable import records as r
from durable.models.faux import FauxModel, call, reply
from durable.testing import FakeClock, load_session

SEED = int(os.environ.get("DURABLE_FUZZ_SEED", "1"))
ONLY = {c for c in os.environ.get("DURABLE_FUZZ_ONLY", "").split(",") if c}
KEEP = os.environ.get("DURABLE_FUZZ_KEEP")
# Seconds for open + submit + wait + close on one damaged file before it counts as a hang: a healthy
# one takes ~0.05 s; generous, so that a loaded machine is never taken for a hang (1.5 s was, once).
BOUND = 20.0
KINDS = {"page": 30, "span": 12, "header": 6, "wal": 8}
BAD = ("hang", "internal", "unclear", "used-damaged")
# A run the damage (or a WAL cut short) left in progress is resumed: no 1 s backoff in the bound.
SETTINGS = durable.Settings(retry=durable.RetryPolicy(base_delay=0.01, max_delay=0.05))


# --------------------------------------------------------------------------- the healthy sessions


def _words(rng: random.Random, n: int) -> str:
    vocabulary = ["durable", "session", "commit", "harness", "answer", "tool", "crash", "page", "file", "the"]
    return " ".join(rng.choice(vocabulary) for _ in range(n))


def _tools() -> list[Any]:
    async def execute(args: Any, api: Any, ctx: Any) -> str:
        await api.output(f"looking up {args.get('q')}")
        return f"result for {args.get('q')}: " + "x" * 200

    return [durable.define_tool("lookup", "Look something up", {"type": "object"}, replay="safe", execute=execute)]


async def _build(base: Path, walbase: Path) -> None:
    """`base`: 16 answered inputs (every other one with a tool round), closed cleanly. `walbase`:
    a copy of it taken while a later harness was open, after 4 more inputs (in its -wal)."""
    rng = random.Random(1234)
    clock = FakeClock()
    settings = durable.Settings(progress=durable.Progress(persist_within=0, output_interval=0))

    def script(start: int, n: int) -> list[Any]:
        steps: list[Any] = []
        for i in range(start, start + n):
            if i % 2:
                steps.append(reply("Let me look.", tool_calls=[call("lookup", {"q": f"q{i}"}, id=f"call_{i}")]))
            steps.append(reply(_words(rng, 40 + 30 * (i % 5))))
        return steps

    async with durable.open_harness(base, model=FauxModel(script(0, 16)), tools=_tools(), settings=settings,
                                    clock=clock) as h:
        for i in range(16):
            assert isinstance(await (await h.root.submit(f"question {i}: {_words(rng, 20)}")).wait(), r.Answered)
    shutil.copy(base, walbase)
    async with durable.open_harness(walbase, model=FauxModel(script(16, 4)), tools=_tools(), settings=settings,
                                    clock=clock) as h:
        for i in range(16, 20):
            assert isinstance(await (await h.root.submit(f"question {i}: {_words(rng, 20)}")).wait(), r.Answered)
        # Cut off while open: the file and its -wal as a kill would leave them (not checkpointed).
        snapshot = walbase.with_name("wal-snapshot.sqlite")
        for suffix in ("", "-wal", "-mark"):
            shutil.copy(f"{walbase}{suffix}", f"{snapshot}{suffix}")
    for suffix in ("", "-wal", "-mark"):
        os.replace(f"{snapshot}{suffix}", f"{walbase}{suffix}")
    assert os.path.getsize(f"{walbase}-wal") > 32


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("healthy")
    base, walbase = folder / "base.sqlite", folder / "walbase.sqlite"
    anyio.run(_build, base, walbase, backend="trio")
    probe = folder / "probe.sqlite"  # checked on a copy: a connection to walbase would checkpoint its -wal
    for path in (base, walbase):
        shutil.copy(path, probe)
        if os.path.exists(f"{path}-wal"):
            shutil.copy(f"{path}-wal", f"{probe}-wal")
        assert _integrity(probe) == "ok"
        for name in (probe, Path(f"{probe}-wal"), Path(f"{probe}-shm")):
            name.unlink(missing_ok=True)
    return base, walbase


# --------------------------------------------------------------------------- damage


def _page_size(path: Path) -> int:
    size = int.from_bytes(path.read_bytes()[16:18], "big")
    return 65536 if size == 1 else size


def _damage(case: str, healthy: tuple[Path, Path], folder: Path) -> tuple[Path, str]:
    """A damaged copy for `case` ("page-3"), and what was damaged."""
    kind, number = case.rsplit("-", 1)
    rng = random.Random(f"{SEED}/{kind}/{number}")
    source = healthy[1] if kind == "wal" else healthy[0]
    path = folder / f"{case}.sqlite"
    shutil.copy(source, path)
    if kind == "wal":
        shutil.copy(f"{source}-wal", f"{path}-wal")
        shutil.copy(f"{source}-mark", f"{path}-mark")
    size = _page_size(source)
    pages = os.path.getsize(source) // size
    if kind == "page":
        page = rng.randrange(2, pages + 1)
        offset, length, what = (page - 1) * size, size, f"page {page} of {pages}"
    elif kind == "span":
        page = rng.randrange(1, pages + 1)
        length = rng.randint(8, 256)
        at = rng.randrange(0, size - length)
        offset, what = (page - 1) * size + at, f"{length} bytes at {at} of page {page} of {pages}"
    elif kind == "header":
        part = int(number) % 3
        if part == 0:
            offset, length, what = 0, size, "page 1 wholly"
        elif part == 1:
            at = rng.randrange(0, 92)
            length = rng.randint(4, 100 - at)
            offset, what = at, f"{length} bytes at {at} of the 100-byte header"
        else:
            at = rng.randrange(100, size - 64)
            length = rng.randint(8, 64)
            offset, what = at, f"{length} bytes at {at} of page 1 (the schema table)"
    else:
        wal = Path(f"{path}-wal")
        frames = (wal.stat().st_size - 32) // (24 + size)
        frame = rng.randrange(0, frames)
        if int(number) == 0:
            offset, length, what = 0, 32, f"the WAL header ({frames} frames)"
        elif int(number) % 3 == 1:
            offset, length, what = 32 + frame * (24 + size), 24, f"the header of WAL frame {frame + 1} of {frames}"
        else:
            offset, length = 32 + frame * (24 + size) + 24, size
            what = f"the page of WAL frame {frame + 1} of {frames}"
        with open(wal, "r+b") as f:
            f.seek(offset)
            f.write(rng.randbytes(length))
        return path, what
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(rng.randbytes(length))
    return path, what


def _integrity(path: Path) -> str:
    """`PRAGMA integrity_check` as one line ("ok"), or the error that stopped it."""
    try:
        conn = sqlite3.connect(path)
        try:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "; ".join(str(row[0]) for row in rows)[:300]


# --------------------------------------------------------------------------- one open


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


async def _attempt(path: Path) -> tuple[str, str]:
    """(outcome, detail) of opening the damaged file, submitting and waiting, within `BOUND`."""
    reports: list[Any] = []
    outcome: Any = None
    problems: list[str] = []
    try:
        with anyio.fail_after(BOUND):
            async with durable.open_harness(path, model=FauxModel([reply("Fine.")] * 8), settings=SETTINGS,
                                            report=reports.append) as h:
                outcome = await (await h.root.submit("Are you still there?")).wait()
                problems = await h.check_integrity()  # the check a resumed harness runs by itself
    except TimeoutError:
        last = f"; last report: {reports[-1].message}" if reports else ""
        return "hang", f"not done within {BOUND:g} s{last}"
    except Exception as group:  # noqa: BLE001 - the outcome is what we measure
        exc = _unwrap(group)
        text = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, durable.DurableError):
            return "internal", text
        return ("refused" if str(path) in str(exc) else "unclear"), text
    if isinstance(outcome, r.Unanswered):
        named = str(path) in (outcome.detail or "")
        return ("unanswered" if named else "unclear"), f"{outcome.reason}: {outcome.detail}"
    integrity = _integrity(path)
    damage_reported = bool(problems) and any(
        getattr(x, "message", "").startswith(f"Session file {path} is damaged: ") for x in reports)
    if integrity != "ok":
        if damage_reported:
            return "reported", f"answered elsewhere; the damage was reported: {problems[0]}"
        return "used-damaged", f"answered; integrity_check: {integrity}"
    image = load_session(path)
    undecodable = [p for p in image.problems if "integrity" not in p]
    kept = len(image.submissions) - 1  # the earlier inputs still in the file (the new one aside)
    return "works", (f"answered; integrity_check: ok; {kept} earlier inputs in the file"
                     + (f"; but {undecodable[0]}" if undecodable else ""))


def _cases() -> list[str]:
    cases = [f"{kind}-{i}" for kind, n in KINDS.items() for i in range(n)]
    return [c for c in cases if not ONLY or c in ONLY]


# --------------------------------------------------------------------------- the test


def test_one_damaged_page_opens_cleanly_or_is_a_clear_error_within_a_bound(healthy, tmp_path):
    folder = Path(KEEP) if KEEP else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    results: list[tuple[str, str, str, str, float]] = []
    started = time.monotonic()
    for case in _cases():
        path, what = _damage(case, healthy, folder)
        began = time.monotonic()
        outcome, detail = anyio.run(_attempt, path, backend="trio")
        results.append((case, what, outcome, detail, time.monotonic() - began))
        if os.environ.get("DURABLE_FUZZ_VERBOSE"):
            print(f"  {case:10} {outcome:13} {results[-1][4]:5.2f} s  {what}: {detail[:240]}", flush=True)
    elapsed = time.monotonic() - started

    counts = Counter(outcome for _, _, outcome, _, _ in results)
    print(f"\n{len(results)} damaged session files (seed {SEED}) in {elapsed:.1f} s: "
          + ", ".join(f"{n} {outcome}" for outcome, n in counts.most_common()))
    hidden = sum(1 for _, _, o, d, _ in results if o == "works" and "; but " in d)
    if hidden:
        print(f"  of the {counts['works']} that work, {hidden} hold a row durable cannot decode "
              "(never read by this open; integrity_check cannot see it)")
    lost = [int(d.split("; ")[2].split()[0]) for c, _, o, d, _ in results if c.startswith("wal-") and o == "works"]
    if lost:
        print(f"  the WAL cases that work kept {min(lost)} to {max(lost)} of the 20 earlier inputs: SQLite ends a "
              "WAL at its first bad frame; what was lost from there on had no barrier")
    walled = [c for c, _, o, d, _ in results if c.startswith("wal-") and o == "refused"]
    if walled:
        print(f"  {len(walled)} WAL cases refused by the commit mark: acknowledged commits were missing")
    for kind in KINDS:
        mine = Counter(o for c, _, o, _, _ in results if c.startswith(kind + "-"))
        if mine:
            print(f"  {kind:7} " + ", ".join(f"{n} {o}" for o, n in mine.most_common()))
    for case, what, outcome, detail, seconds in results:
        if outcome in BAD and not os.environ.get("DURABLE_FUZZ_VERBOSE"):
            print(f"  {case:10} {outcome:13} {seconds:5.2f} s  {what}: {detail[:240]}")

    assert len(results) >= (50 if not ONLY else len(ONLY))
    wrong = [(c, o, d) for c, _, o, d, _ in results if o in BAD]
    assert not wrong, (f"hangs, internal or unclear errors, or damage used without a word: {wrong}; replay: "
                       f"DURABLE_FUZZ_ONLY={','.join(c for c, _, _ in wrong)} pytest -s tests/storage/test_damage_fuzz.py")
