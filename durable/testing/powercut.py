"""Power cuts: lose every write that was not fsynced, then open what is left.

A process kill loses nothing SQLite handed to the OS; a power cut (or a kernel panic) loses what
the OS had not written to the disk yet, and the disk may have written the rest in any order,
some of it torn. `PowerCutVFS` is an `apsw` VFS that records, for every file of a database, what
it holds now and what it held at its last successful `xSync`, plus the writes made since.
`vfs.cut(directory)` writes the files as a power cut would leave them: with `torn=False` exactly
the image of each file at its last sync (every unsynced write lost); with `torn=True` that image
plus a random subset of the writes made since, some cut short at a 512-byte sector boundary. It
can also fail a write (`fail_write`, e.g. a full disk) or a sync (`fail_sync`, an I/O error) on
demand, to show that a commit that fails does so cleanly.

This exercises SQLite's durability and atomicity under durable's pragmas (WAL; `synchronous`
FULL, NORMAL, or switched per commit under external synchrony) with durable's transactions
(`commit_batch`) on its schema, through `apsw` (the store's stdlib `sqlite3` cannot take a
Python VFS): not the store's writer thread or group commit, which process kills cover.
`power_cut_test(directory, ...)` runs the experiment once: commit whole runs, cut the power, and
report which acknowledged commits survived and what `check_invariants` says of the copy.
"""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from typing import Any

import attrs

try:  # apsw is an optional test dependency
    import apsw
except ImportError:  # pragma: no cover - the tests skip without it
    apsw = None  # type: ignore[assignment]  # the module is optional: None when it is absent

from ..records import (
    Answered,
    AssistantEntry,
    Done,
    Live,
    StoredEntry,
    Submission,
    Task,
    Terminal,
    UserEntry,
)
from ..storage.protocol import Batch
from ..storage.rows import encode_batch
from ..storage.sqlite.opening import commit_level
from ..storage.sqlite.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from ..storage.sqlite.write import apply_rows, drop_failed_frames
from ..tasks.generation.records import GenerationInput, Request
from .invariants import check_invariants

SECTOR = 512


def _require_apsw() -> None:
    if apsw is None:
        raise RuntimeError("durable.testing.powercut needs apsw (pip install apsw)")


@attrs.define
class FileImage:
    """One file as the disk may hold it: `current` (what reads see), `durable` (as of the last
    successful sync; None: never synced, so absent after a power cut), and the writes since."""

    current: bytearray
    durable: bytes | None
    # ("write", offset, data) / ("truncate", size, b"")
    pending: list[tuple[str, int, bytes]] = attrs.field(factory=list)

    def cut(self, *, torn: bool = False, rng: random.Random | None = None) -> bytes | None:
        """What the disk holds after a power cut (None: nothing, the file was never synced):
        with `torn=False` the image at the last sync; with `torn=True` that image plus a random
        subset of the writes made since, in order, some cut short at a sector boundary (a hole
        left by a write lost before a later one reads as zeros)."""
        rng = rng or random.Random(0)
        data = bytearray(self.durable) if self.durable is not None else None
        if torn:
            for op, where, payload in self.pending:
                if rng.random() < 0.5:
                    continue  # this write never reached the disk
                if data is None:
                    data = bytearray()
                if op == "truncate":
                    del data[where:]
                    continue
                if rng.random() < 0.3 and len(payload) > SECTOR:  # torn at a sector boundary
                    payload = payload[: SECTOR * rng.randint(1, len(payload) // SECTOR)]
                if len(data) < where:
                    data.extend(b"\0" * (where - len(data)))
                data[where:where + len(payload)] = payload
        return None if data is None else bytes(data)


class PowerCutVFS(apsw.VFS if apsw is not None else object):  # type: ignore[misc]  # base picked at import
    """An apsw VFS over the default one that keeps a `FileImage` of every file it opens.

    `fail_write(path, offset, size)` and `fail_sync(path)` may return an exception to raise
    instead of doing the write or the sync (e.g. `apsw.FullError()`, `apsw.IOError()`)."""

    def __init__(self, name: str = "durable-powercut") -> None:
        _require_apsw()
        self.name = name
        self.files: dict[str, FileImage] = {}
        self.fail_write: Callable[[str, int, int], BaseException | None] | None = None
        self.fail_sync: Callable[[str], BaseException | None] | None = None
        self.on_io: Callable[[str, str], None] | None = None  # ("write" | "sync", path), before the call
        self.syncs = 0
        super().__init__(name, "")

    def xOpen(self, name: Any, flags: Any) -> Any:
        return _RecordingFile(self, name, flags)

    def xDelete(self, filename: str, syncdir: bool) -> None:
        super().xDelete(filename, syncdir)
        self.files.pop(os.path.abspath(filename), None)

    def image(self, path: str) -> FileImage:
        path = os.path.abspath(path)
        image = self.files.get(path)
        if image is None:
            data = b""
            if os.path.exists(path):
                with open(path, "rb") as f:
                    data = f.read()
            image = self.files[path] = FileImage(bytearray(data), data if data else None)
        return image

    def cut(self, database: str, directory: str, *, torn: bool = False, rng: random.Random | None = None) -> str:
        """Write the files of `database` (the db, its -wal and -journal) into `directory` as a
        power cut leaves them; return the path of the database copy there."""
        rng = rng or random.Random(0)
        database = os.path.abspath(database)
        os.makedirs(directory, exist_ok=True)
        for path, image in self.files.items():
            if path != database and not path.startswith(database + "-"):
                continue
            data = image.cut(torn=torn, rng=rng)
            if data is None:
                continue  # never synced, nothing of it reached the disk
            with open(os.path.join(directory, os.path.basename(path)), "wb") as f:
                f.write(data)
        return os.path.join(directory, os.path.basename(database))

    def close(self) -> None:
        self.unregister()


class _RecordingFile(apsw.VFSFile if apsw is not None else object):  # type: ignore[misc]  # base picked at import
    def __init__(self, vfs: PowerCutVFS, name: Any, flags: Any) -> None:
        self.vfs = vfs
        filename = name.filename() if isinstance(name, apsw.URIFilename) else name
        self.path = os.path.abspath(filename) if filename else None
        super().__init__("", name, flags)
        if self.path is not None:
            vfs.image(self.path)

    def xWrite(self, data: bytes, offset: int) -> None:
        if self.path is not None and self.vfs.on_io is not None:
            self.vfs.on_io("write", self.path)
        if self.path is not None and self.vfs.fail_write is not None:
            exc = self.vfs.fail_write(self.path, offset, len(data))
            if exc is not None:
                raise exc
        super().xWrite(data, offset)
        if self.path is not None:
            image = self.vfs.image(self.path)
            data = bytes(data)
            if len(image.current) < offset:
                image.current.extend(b"\0" * (offset - len(image.current)))
            image.current[offset:offset + len(data)] = data
            image.pending.append(("write", offset, data))

    def xTruncate(self, newsize: int) -> None:
        super().xTruncate(newsize)
        if self.path is not None:
            image = self.vfs.image(self.path)
            del image.current[newsize:]
            image.pending.append(("truncate", newsize, b""))

    def xSync(self, flags: int) -> None:
        if self.path is not None and self.vfs.on_io is not None:
            self.vfs.on_io("sync", self.path)
        if self.path is not None and self.vfs.fail_sync is not None:
            exc = self.vfs.fail_sync(self.path)
            if exc is not None:
                raise exc
        super().xSync(flags)
        if self.path is not None:
            image = self.vfs.image(self.path)
            image.durable = bytes(image.current)
            image.pending.clear()
            self.vfs.syncs += 1


# --------------------------------------------------------------------------- the experiment


def open_session(path: str, vfs: PowerCutVFS, *, synchronous: str = "FULL", autocheckpoint: int = 32) -> Any:
    """An apsw connection on a new session file with durable's schema and pragmas."""
    conn = apsw.Connection(path, vfs=vfs.name)
    conn.execute("PRAGMA busy_timeout = 5000")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
    assert isinstance(mode, str) and mode.lower() == "wal", mode
    conn.execute(f"PRAGMA synchronous = {commit_level(synchronous, True)}")
    conn.execute(f"PRAGMA wal_autocheckpoint = {autocheckpoint}")  # small: checkpoints happen too
    conn.execute("BEGIN IMMEDIATE")
    for v in range(1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[v]:
            conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    conn.execute("COMMIT")
    return conn


def run_batch(k: int, padding: int = 300, *, barrier: bool = True) -> Batch:
    """The k-th commit of the experiment: a whole run (task k answered input k), as one batch;
    `barrier=False` makes it a lazy commit (see `Batch.barrier`)."""
    sid = f"sub_{k:06d}"
    task = Task(k, "root", "generation", GenerationInput((sid,)), Terminal(Done({"seq": 2 * k})), Request(1))
    text = f"input {k} " + "x" * padding
    entries = [StoredEntry("root", 2 * k - 1, UserEntry(text, sid)),
               StoredEntry("root", 2 * k, AssistantEntry(f"answer {k} " + "y" * padding, "stop"))]
    sub = Submission(sid, "root", text, seq=2 * k - 1, status=Answered(), task_id=k)
    return Batch(tasks=[task], entries=entries, submissions=[sub], live={"root": Live()}, barrier=barrier)


def commit_batch(conn: Any, batch: Batch, synchronous: str = "FULL") -> None:
    """One commit as the store makes it: at the level the store's `synchronous` mode gives the
    batch (`durable.storage.sqlite.opening.commit_level`: under "EXTERNAL", FULL for a barrier, NORMAL
    otherwise), `BEGIN IMMEDIATE`, its SQL, `COMMIT`; rolled back as a
    whole when anything fails (the error is raised), and after an I/O error the store's own
    clean-up (`durable.storage.sqlite.write.drop_failed_frames`: checkpoint and truncate the WAL, so that the
    refused commit's frames cannot come back after the process dies)."""
    encoded = encode_batch(batch)
    conn.execute(f"PRAGMA synchronous = {commit_level(synchronous, batch.barrier)}")
    conn.execute("BEGIN IMMEDIATE")
    try:
        apply_rows(conn, encoded)
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except apsw.Error:
                pass
        if isinstance(exc, apsw.IOError):
            drop_failed_frames(conn)
        raise


@attrs.define
class Survivors:
    """What a copy holds: how many whole runs, and whether anything is half there."""

    runs: int  # the largest k such that runs 1..k are all there
    violations: list[str]


def survivors(path: str, *, expect: int | None = None) -> Survivors:
    """Read a copy with the stdlib driver (as the store will after the reboot) and check it:
    runs 1..k present whole, nothing of any later run, and the invariants of a session."""
    conn = sqlite3.connect(path)
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables and conn.execute("PRAGMA application_id").fetchone()[0] == 0:
            # Even the schema's commit was lost: an empty SQLite file, which the store makes a
            # session again when it opens it.
            lost = [f"{expect} acknowledged commits were lost (the whole file)"] if expect else []
            return Survivors(0, lost)
        tasks = {row[0] for row in conn.execute("SELECT id FROM tasks")}
        seqs = {row[0] for row in conn.execute("SELECT seq FROM entries WHERE conversation_id = 'root'")}
        subs = {row[0] for row in conn.execute("SELECT id FROM submissions")}
    finally:
        conn.close()
    k = 0
    while k + 1 in tasks:
        k += 1
    out = []
    if tasks != set(range(1, k + 1)):
        out.append(f"runs {sorted(tasks - set(range(1, k + 1)))} survived though run {k + 1} did not")
    if seqs != set(range(1, 2 * k + 1)):
        out.append(f"the entries of {k} runs should be seqs 1..{2 * k}; found {len(seqs)} entries")
    if subs != {f"sub_{i:06d}" for i in range(1, k + 1)}:
        out.append(f"the submissions of {k} runs should be there; found {len(subs)}")
    out += check_invariants(path, clean_close=True)
    if expect is not None and k < expect:
        out.append(f"{expect - k} acknowledged commits were lost (runs {k + 1}..{expect})")
    return Survivors(k, out)


@attrs.define
class PowerCutResult:
    acknowledged: int  # commits that returned before the cut
    survived: int  # whole runs in the copy
    violations: list[str]
    copy: str
    during: bool = False  # the power went out in the middle of a commit
    last_barrier: int = 0  # the newest acknowledged barrier commit (every commit is one under FULL)


class _PowerOut(Exception):
    pass


def power_cut_test(
    directory: str,
    *,
    synchronous: str = "FULL",
    commits: int = 20,
    cut_after: int | None = None,
    during: bool = False,
    torn: bool = False,
    seed: int = 0,
    autocheckpoint: int = 32,
    vfs: PowerCutVFS | None = None,
    barrier_every: int = 3,
) -> PowerCutResult:
    """Commit runs through a `PowerCutVFS`, cut the power, and check the copy.

    Each of the `commits` batches is a whole, valid run (a task, its user and assistant entries,
    its answered submission, the live document); the result says how many acknowledged commits
    survived and whether the survivors are exactly a prefix of whole batches.

    The power goes out after `cut_after` commits (default: a seeded random number of the
    `commits`); with `during=True`, in the middle of the next commit instead: at a seeded random
    write or sync of it (or of a later one, as the I/O falls). The WAL is checkpointed every
    `autocheckpoint` pages, so cuts also fall in and around checkpoints. With
    `synchronous="FULL"` every acknowledged commit must survive (a commit cut short may survive
    whole or not at all); with `"NORMAL"` the newest may be lost, but never half of one; with
    `"EXTERNAL"` (every `barrier_every`-th commit a barrier, the others lazy) every commit up to
    the newest acknowledged barrier must survive, and the copy is a prefix of the commit order.
    Violations are returned in plain words (empty when all holds)."""
    rng = random.Random(seed)
    cut_after = rng.randint(0, commits) if cut_after is None else cut_after
    own = vfs is None
    vfs = vfs or PowerCutVFS(f"durable-powercut-{seed}-{id(directory)}")
    out = os.path.join(directory, "after-the-power-cut")
    os.makedirs(directory, exist_ok=True)
    try:
        path = os.path.join(directory, "session.sqlite")
        conn = open_session(path, vfs, synchronous=synchronous, autocheckpoint=autocheckpoint)
        acknowledged = last_barrier = 0

        def commit(k: int) -> None:
            nonlocal acknowledged, last_barrier
            barrier = synchronous == "FULL" or k % barrier_every == 0
            commit_batch(conn, run_batch(k, barrier=barrier), synchronous)
            acknowledged = k
            if barrier:
                last_barrier = k

        for k in range(1, cut_after + 1):
            commit(k)
        copy = ""
        if during:
            target, seen = rng.randint(1, 40), [0]

            def power_goes_out(op: str, file: str) -> None:
                seen[0] += 1
                if seen[0] == target:
                    nonlocal copy
                    copy = vfs.cut(path, out, torn=torn, rng=rng)
                    raise _PowerOut()

            vfs.on_io = power_goes_out
            k = acknowledged
            while not copy:
                k += 1
                try:
                    commit(k)
                except (_PowerOut, apsw.Error):
                    if copy:
                        break
                    raise
            vfs.on_io = None
        else:
            copy = vfs.cut(path, out, torn=torn, rng=rng)
        conn.close()
    finally:
        if own:
            vfs.close()
    expect = {"FULL": acknowledged, "EXTERNAL": last_barrier}.get(synchronous)
    found = survivors(copy, expect=expect)
    violations = list(found.violations)
    if found.runs > acknowledged + (1 if during else 0):
        violations.append(f"{found.runs} runs survived, but only {acknowledged} commits were made"
                          + (" (and one cut short)" if during else ""))
    return PowerCutResult(acknowledged, found.runs, violations, copy, during, last_barrier)
