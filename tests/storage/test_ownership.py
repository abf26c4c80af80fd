"""Ownership by the file's identity and the files durable refuses to write (issue 13, items 1, 2,
4 and 10): a second owner through a symbolic or hard link or after a rename, links planted at the
session path and beside it, files of another user, modes on adoption, read-only folders and
files, a write-ahead log left without its database, and an owner that lost its file.

A second process is a real subprocess. Permission tests run their opener as the unprivileged user
`nobody` (uid 65534): as root the child drops its privileges after its imports (the interpreter
may live where `nobody` cannot read); as any other user it runs as that user. They are skipped,
saying why, where neither is possible."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile

import anyio
import pytest

import durable
from durable.cli.inspect_data import read_session
from durable.errors import (
    CorruptSession,
    LockLost,
    NotASession,
    SessionLocked,
    SessionReadOnly,
    UnsafeSessionFile,
)
from durable.models import FauxModel, faux
from durable.records import Live, UserEntry
from durable.storage import Batch, SQLiteStorage
from durable.storage.sqlite.lock import owner_pid
from durable.storage.sqlite.reader import SessionReader

from .builders import user

pytestmark = pytest.mark.anyio

NOBODY = 65534

# Prints what opening the session at argv[1] gave: "opened" (after a commit), or
# "<ErrorClass>|<pid>|<message>". With argv[2] == "nobody" it first becomes uid/gid 65534.
OPENER = """
import os, sys, trio
import durable.storage.sqlite.store
from durable.errors import DurableError
from durable.records import StoredEntry, UserEntry
from durable.storage import Batch, SQLiteStorage

if sys.argv[2:] == ["nobody"] and os.geteuid() == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)

async def main():
    store = SQLiteStorage(sys.argv[1])
    try:
        await store.open()
    except DurableError as exc:
        print(type(exc).__name__, getattr(exc, "pid", ""), exc, sep="|", flush=True)
        return
    seq = len(await store.get_entries("child")) + 1
    await store.commit(Batch(entries=[StoredEntry("child", seq, UserEntry("from the child"))]))
    await store.close()
    print("opened", flush=True)

trio.run(main)
"""

# Owns the session at argv[1] through the public API until stdin closes or it is killed.
HARNESS_OWNER = """
import sys, trio, durable
from durable.models import FauxModel, faux

async def main():
    async with durable.open_harness(sys.argv[1], model=FauxModel([faux.reply("answer")])) as h:
        await (await h.root.submit("from the owner")).wait()
        print("ready", flush=True)
        await trio.to_thread.run_sync(sys.stdin.readline)

trio.run(main)
"""

# Opens a harness at argv[1], submits, waits: prints "answered" or "<ErrorClass>|<pid>|<message>".
HARNESS_OPENER = """
import sys, trio, durable
from durable.models import FauxModel, faux

async def main():
    try:
        async with durable.open_harness(sys.argv[1], model=FauxModel([faux.reply("from the second process")])) as h:
            status = await (await h.root.submit("hello from the second process")).wait()
            print("answered" if status == durable.Answered("from the second process", 2) else status, flush=True)
    except durable.DurableError as exc:
        print(type(exc).__name__, getattr(exc, "pid", ""), exc, sep="|", flush=True)

trio.run(main)
"""


@pytest.fixture
def path(tmp_path) -> str:
    return os.fspath(tmp_path / "session.db")


@pytest.fixture
def shared_dir():
    """A folder other users can reach (pytest's own temp folder is private to its user)."""
    folder = tempfile.mkdtemp(prefix="durable-ownership-")
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def need_unprivileged_opener() -> None:
    if os.geteuid() == 0:
        probe = subprocess.run([sys.executable, "-c", "import os; os.setgid(65534); os.setuid(65534)"],
                               check=False, capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"running as root and cannot become uid {NOBODY} here: {probe.stderr.strip()}")


def as_nobody(owner_path: str) -> None:
    """Hand a file to the user the opener runs as (nobody under root, else ourselves)."""
    if os.geteuid() == 0:
        os.chown(owner_path, NOBODY, NOBODY)


async def run_opener(path: str, *extra: str) -> tuple[str, ...]:
    child = await anyio.run_process([sys.executable, "-c", OPENER, path, *extra], check=True)
    return tuple(child.stdout.decode().strip().split("|"))


async def run_harness_opener(path: str) -> tuple[str, ...]:
    child = await anyio.run_process([sys.executable, "-c", HARNESS_OPENER, path], check=True)
    return tuple(child.stdout.decode().strip().split("|"))


async def make_session(path: str) -> None:
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(entries=[user(1)], live={"root": Live()}))
    await store.close()


def digest(name: str) -> str:
    with open(name, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def integrity(path: str) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


class GatedModel(FauxModel):
    """A faux model whose streams wait for `gate` before answering."""

    def __init__(self, script) -> None:
        super().__init__(script)
        self.gate = anyio.Event()

    async def stream(self, request):
        self.stream_calls += 1
        step = self._take(request)
        await self.gate.wait()
        async for event in self._play(step):
            yield event


# ----------------------------------------------------------------------------- item 1: one owner per file


@pytest.mark.parametrize("how", ["symlink", "hardlink", "rename"])
async def test_a_second_process_reaching_the_file_by_another_name_is_refused_naming_the_owner(tmp_path, path, how):
    other = os.fspath(tmp_path / "other-name.db")
    async with durable.open_harness(path, model=FauxModel([faux.reply("one"), faux.reply("two")])) as h:
        assert await (await h.root.submit("first")).wait() == durable.Answered("one", 2)
        if how == "symlink":
            os.symlink(path, other)
        elif how == "hardlink":
            os.link(path, other)
        else:
            os.rename(path, other)
        kind, pid, message = await run_harness_opener(other)
        assert (kind, int(pid)) == ("SessionLocked", os.getpid())
        named = path if how == "symlink" else other  # a link is resolved: errors name the file itself
        assert message == f"Session file {named} is already open in process {os.getpid()}"
        if how != "rename":  # the owner is not disturbed
            assert await (await h.root.submit("second")).wait() == durable.Answered("two", 4)
            assert [e.seq for e in await h.root.entries()] == [1, 2, 3, 4]
    assert integrity(other) == "ok"


async def test_a_second_store_in_this_process_through_a_symlink_is_refused_naming_this_process(tmp_path, path):
    link = os.fspath(tmp_path / "link.db")
    await make_session(path)
    os.symlink(path, link)
    owner = SQLiteStorage(link)
    await owner.open()
    try:
        with pytest.raises(SessionLocked) as refused:
            await SQLiteStorage(path).open()
        assert refused.value.pid == os.getpid()
        assert str(refused.value) == f"Session file {path} is already open in process {os.getpid()}"
        await owner.commit(Batch(entries=[user(2)]))
    finally:
        await owner.close()


async def test_owner_pid_finds_the_owner_through_any_name_and_none_once_it_is_killed(tmp_path, path):
    link = os.fspath(tmp_path / "link.db")
    proc = subprocess.Popen([sys.executable, "-c", HARNESS_OWNER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert await anyio.to_thread.run_sync(proc.stdout.readline) == "ready\n"
        os.symlink(path, link)
        assert owner_pid(path) == proc.pid
        assert owner_pid(link) == proc.pid
        assert read_session(link)["file"]["owner_pid"] == proc.pid
    finally:
        proc.send_signal(signal.SIGKILL)
        await anyio.to_thread.run_sync(proc.wait)
        proc.stdout.close()
        proc.stdin.close()
    assert owner_pid(path) is None
    async with durable.open_harness(link, model=FauxModel([])) as h:  # at once, through the link
        assert [e.seq for e in await h.root.entries()] == [1, 2]


async def test_a_file_with_two_names_is_refused_once_nobody_owns_it(tmp_path, path):
    other = os.fspath(tmp_path / "second-name.db")
    await make_session(path)
    os.link(path, other)
    before = digest(path)
    for name in (path, other):
        with pytest.raises(UnsafeSessionFile) as refused:
            await SQLiteStorage(name).open()
        assert str(refused.value) == (
            f"Session file {name} has 2 names (hard links); SQLite keeps its journal beside one name, so commits "
            f"made under one would be lost under another. Remove the other links (or copy the file) and open it again")
    assert digest(path) == before
    os.unlink(other)
    async with durable.open_harness(path, model=FauxModel([])) as h:
        assert [e.seq for e in await h.root.entries()] == [1]


# ----------------------------------------------------------------------------- item 10b: an owner that lost its file


async def test_an_owner_whose_file_was_replaced_by_a_second_process_finds_out_at_its_next_commit(path):
    model = GatedModel([faux.reply("never committed")])
    stopped = anyio.Event()
    reports = []

    def report(event):
        reports.append(event)
        if "stopped" in getattr(event, "message", ""):
            stopped.set()

    lost_message = (f"Session file {path} is no longer owned by this process (the file was removed, "
                    f"renamed or replaced since it was opened); the commit was refused")
    with pytest.raises(LockLost) as at_close:  # the clean close cannot write its tasks back either
        async with durable.open_harness(path, model=model, report=report) as h:
            await h.root.submit("first")
            await model.wait_for_requests(1)
            for suffix in ("", "-wal", "-shm"):  # someone deletes the file while the owner runs
                os.remove(path + suffix)
            assert await run_harness_opener(path) == ("answered",)  # a second process starts a new session there
            with pytest.raises(LockLost) as lost:
                await h.root.submit("second")
            assert str(lost.value) == lost_message
            model.gate.set()  # the generation's commit is refused too: its runner stops and says why
            with anyio.fail_after(10):
                await stopped.wait()
            assert [r.message for r in reports] == [f"Task 1 (generation) stopped: {lost_message}"]
    assert str(at_close.value) == lost_message
    assert integrity(path) == "ok"
    async with durable.open_harness(path, model=FauxModel([])) as h:  # only the second process's session
        texts = [e.entry.text for e in await h.root.entries() if isinstance(e.entry, UserEntry)]
        assert texts == ["hello from the second process"]


async def test_an_owner_that_lost_its_file_ends_its_waits_with_lock_lost(path):
    model = GatedModel([faux.reply("never committed")])
    with pytest.raises(LockLost):  # the clean close cannot write its tasks back either
        async with durable.open_harness(path, model=model) as h:
            first = await h.root.submit("first")
            await model.wait_for_requests(1)
            for suffix in ("", "-wal", "-shm"):
                os.remove(path + suffix)
            assert await run_harness_opener(path) == ("answered",)
            model.gate.set()
            with anyio.fail_after(5):
                with pytest.raises(LockLost) as ended:
                    await first.wait()
            assert str(ended.value).startswith(f"Session file {path} is no longer owned by this process")


# ----------------------------------------------------------------------------- item 2: no writes through planted links


async def test_a_symlink_planted_at_the_old_lock_path_is_never_written_through(tmp_path, path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, path + ".lock")
    async with durable.open_harness(path, model=FauxModel([faux.reply("hi")])) as h:
        assert await (await h.root.submit("hello")).wait() == durable.Answered("hi", 2)
    assert victim.read_text() == "precious"
    assert os.readlink(path + ".lock") == os.fspath(victim)


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
@pytest.mark.parametrize("existing", [True, False])
async def test_a_symlink_planted_beside_the_file_is_refused_and_its_target_untouched(tmp_path, path, suffix, existing):
    if existing:
        await make_session(path)
    before = digest(path) if existing else None
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, path + suffix)
    with pytest.raises(UnsafeSessionFile) as refused:
        async with durable.open_harness(path, model=FauxModel([])):
            pass
    assert str(refused.value) == (f"{path}{suffix} (beside session file {path}) is a symbolic link; durable does not "
                                  f"write through a link it did not create")
    assert victim.read_text() == "precious"
    if existing:
        assert digest(path) == before


async def test_a_dangling_symlink_planted_beside_a_new_file_creates_nothing(tmp_path, path):
    target = tmp_path / "would-be-created"
    os.symlink(target, path + "-wal")
    with pytest.raises(UnsafeSessionFile, match="is a symbolic link"):
        await SQLiteStorage(path).open()
    assert not target.exists()


async def test_a_symlink_at_the_session_path_to_a_session_file_works_on_that_file(tmp_path, path):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = os.fspath(real_dir / "session.db")
    await make_session(real)
    os.symlink(real, path)
    store = SQLiteStorage(path)
    await store.open()
    try:
        assert store.path == real  # errors and `location` name the file itself
        await store.commit(Batch(entries=[user(2)]))
        assert os.path.exists(real + "-wal") and not os.path.lexists(path + "-wal")
    finally:
        await store.close()
    assert os.path.islink(path)
    async with durable.open_harness(real, model=FauxModel([])) as h:
        assert [e.seq for e in await h.root.entries()] == [1, 2]


@pytest.mark.parametrize("target_state", ["missing", "empty"])
async def test_a_symlink_at_the_session_path_is_not_used_to_create_a_session(tmp_path, path, target_state):
    target = tmp_path / "elsewhere.db"
    if target_state == "empty":
        target.write_bytes(b"")
    os.symlink(target, path)
    with pytest.raises(UnsafeSessionFile) as refused:
        async with durable.open_harness(path, model=FauxModel([])):
            pass
    word = "does not exist" if target_state == "missing" else "is empty"
    assert str(refused.value) == (f"Session file {path} is a symbolic link to {target}, which {word}; durable does not "
                                  f"create a session file through a link (pass {target} itself to create it there)")
    if target_state == "missing":
        assert not target.exists()
    else:
        assert target.read_bytes() == b""
    assert sorted(os.listdir(tmp_path)) == sorted(["session.db"] + (["elsewhere.db"] if target_state == "empty" else []))


async def test_a_symlink_at_the_session_path_to_another_file_is_refused_unchanged(tmp_path, path):
    victim = tmp_path / "notes.txt"
    victim.write_text("precious notes, long enough to be more than a header " * 4)
    before = digest(victim)
    os.symlink(victim, path)
    with pytest.raises(NotASession):
        await SQLiteStorage(path).open()
    assert digest(victim) == before
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "session.db"]


async def test_a_fifo_at_the_session_path_is_refused_without_hanging(path):
    os.mkfifo(path)
    with anyio.fail_after(5):
        with pytest.raises(UnsafeSessionFile, match="is not a regular file"):
            await SQLiteStorage(path).open()


# ----------------------------------------------------------------------------- item 2: modes and other users' files


async def test_an_empty_world_readable_file_is_adopted_as_0600_with_its_journals(path):
    old_umask = os.umask(0)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o666)
        os.close(fd)
        for suffix in ("-wal", "-shm"):  # left over, world-readable
            os.close(os.open(path + suffix, os.O_WRONLY | os.O_CREAT, 0o666))
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o666
        async with durable.open_harness(path, model=FauxModel([faux.reply("secret answer")])) as h:
            assert await (await h.root.submit("secret")).wait() == durable.Answered("secret answer", 2)
            for name in (path, path + "-wal", path + "-shm"):
                assert stat.S_IMODE(os.stat(name).st_mode) == 0o600, name
    finally:
        os.umask(old_umask)


async def test_a_world_readable_journal_beside_a_session_is_narrowed_to_the_file_mode(path):
    await make_session(path)
    old_umask = os.umask(0)
    try:
        os.close(os.open(path + "-wal", os.O_WRONLY | os.O_CREAT, 0o666))
    finally:
        os.umask(old_umask)
    async with durable.open_harness(path, model=FauxModel([])):
        assert stat.S_IMODE(os.stat(path + "-wal").st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user (chown)")
@pytest.mark.parametrize("whose", ["database", "-wal"])
async def test_a_file_of_another_user_is_refused_unchanged(path, whose):
    if whose == "database":
        open(path, "wb").close()  # empty: would become a session readable by its owner
        os.chmod(path, 0o666)
        os.chown(path, NOBODY, NOBODY)
        name = path
    else:
        await make_session(path)
        name = path + "-wal"
        open(name, "wb").close()
        os.chown(name, NOBODY, NOBODY)
    before = digest(path)
    with pytest.raises(UnsafeSessionFile) as refused:
        async with durable.open_harness(path, model=FauxModel([])):
            pass
    beside = "" if whose == "database" else f" (beside session file {path})"
    assert str(refused.value) == (f"{name}{beside} belongs to user {NOBODY}, not to this user (0); durable only uses "
                                  f"files of the user running it (another user could read the conversation)")
    assert digest(path) == before and os.stat(name).st_uid == NOBODY
    assert not os.path.exists(path + "-shm")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to plant a file of another user than the opener")
async def test_a_file_planted_by_another_user_is_refused_by_an_unprivileged_opener(shared_dir):
    need_unprivileged_opener()
    os.chmod(shared_dir, 0o1777)  # a shared folder such as /tmp
    path = os.path.join(shared_dir, "session.db")
    open(path, "wb").close()
    os.chmod(path, 0o666)  # planted by root (another user for the opener), readable by all
    kind, _, message = await run_opener(path, "nobody")
    assert kind == "UnsafeSessionFile"
    assert message.startswith(f"{path} belongs to user 0, not to this user ({NOBODY})")
    assert os.path.getsize(path) == 0 and sorted(os.listdir(shared_dir)) == ["session.db"]


# ----------------------------------------------------------------------------- item 4: read-only is not damaged


async def test_a_session_in_a_read_only_folder_is_reported_read_only_not_damaged(shared_dir):
    need_unprivileged_opener()
    path = os.path.join(shared_dir, "session.db")
    await make_session(path)
    as_nobody(path)  # the opener owns the file; the folder is not writable for it
    os.chmod(shared_dir, 0o555)
    before = digest(path)
    kind, _, message = await run_opener(path, "nobody")
    assert (kind, message) == ("SessionReadOnly", (
        f"Session file {path} cannot be opened for writing: its folder {shared_dir} is read-only (permission denied), "
        f"and durable keeps its journal (session.db-wal) beside the file"))
    assert "damaged" not in message
    assert sorted(os.listdir(shared_dir)) == ["session.db", "session.db-mark"]
    assert digest(path) == before and integrity(path) == "ok"


async def test_a_read_only_session_file_is_reported_read_only_not_damaged(shared_dir):
    need_unprivileged_opener()
    path = os.path.join(shared_dir, "session.db")
    await make_session(path)
    as_nobody(path)
    if os.geteuid() == 0:
        os.chown(shared_dir, NOBODY, NOBODY)
    os.chmod(path, 0o444)
    before = digest(path)
    kind, _, message = await run_opener(path, "nobody")
    assert (kind, message) == ("SessionReadOnly", f"Session file {path} cannot be opened for writing: permission denied on {path}")
    assert digest(path) == before and integrity(path) == "ok"


async def test_a_new_session_in_a_read_only_folder_is_reported_read_only(shared_dir):
    need_unprivileged_opener()
    path = os.path.join(shared_dir, "session.db")
    os.chmod(shared_dir, 0o555)
    kind, _, message = await run_opener(path, "nobody")
    assert (kind, message) == ("SessionReadOnly",
                               f"Session file {path} cannot be created: its folder {shared_dir} is read-only (permission denied)")


async def test_an_unprivileged_owner_of_its_own_folder_opens_normally(shared_dir):
    need_unprivileged_opener()
    if os.geteuid() == 0:
        os.chown(shared_dir, NOBODY, NOBODY)
    path = os.path.join(shared_dir, "session.db")
    assert await run_opener(path, "nobody") == ("opened",)
    assert await run_opener(path, "nobody") == ("opened",)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


@pytest.fixture
def read_only_mount(tmp_path):
    """(writable folder, the same folder mounted read-only), or a skip saying why not."""
    src, ro = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    ro.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a read-only bind mount needs root and mount(8)")
    done = subprocess.run(["mount", "--bind", src, ro], check=False, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {done.stderr.strip()}")
    try:
        done = subprocess.run(["mount", "-o", "remount,bind,ro", ro], check=False, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot make a bind mount read-only here: {done.stderr.strip()}")
        yield os.fspath(src), os.fspath(ro)
    finally:
        subprocess.run(["umount", ro], check=True)


async def test_a_session_on_a_read_only_file_system_is_reported_read_only_even_to_root(read_only_mount):
    src, ro = read_only_mount
    await make_session(os.path.join(src, "session.db"))
    before = digest(os.path.join(src, "session.db"))
    path, new = os.path.join(ro, "session.db"), os.path.join(ro, "new.db")
    with pytest.raises(SessionReadOnly) as refused:
        async with durable.open_harness(path, model=FauxModel([])):
            pass
    assert str(refused.value) == f"Session file {path} cannot be opened for writing: {path} is on a read-only file system"
    with pytest.raises(SessionReadOnly) as refused:
        await SQLiteStorage(new).open()
    assert str(refused.value) == f"Session file {new} cannot be created: its folder {ro} is read-only (read-only file system)"
    assert digest(path) == before and sorted(os.listdir(src)) == ["session.db", "session.db-mark"]


# ----------------------------------------------------------------------------- item 10a: an orphan write-ahead log


async def test_a_write_ahead_log_left_beside_a_deleted_database_is_reported_and_kept(path):
    proc = subprocess.Popen([sys.executable, "-c", HARNESS_OWNER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert await anyio.to_thread.run_sync(proc.stdout.readline) == "ready\n"
    finally:
        proc.send_signal(signal.SIGKILL)  # a kill leaves the commits in the -wal
        await anyio.to_thread.run_sync(proc.wait)
        proc.stdout.close()
        proc.stdin.close()
    wal = path + "-wal"
    size = os.path.getsize(wal)
    assert size > 0
    before = digest(wal)
    os.remove(path)
    for database in ("missing", "empty"):
        if database == "empty":
            open(path, "wb").close()
        with pytest.raises(UnsafeSessionFile) as refused:
            async with durable.open_harness(path, model=FauxModel([])):
                pass
        assert str(refused.value) == (
            f"Session file {path} is missing or empty, but its write-ahead log {wal} ({size} bytes) is still there: "
            f"it holds commits of a database that was deleted. durable will not start a new session over it; "
            f"restore {path}, or move {wal} away, and open again")
        assert digest(wal) == before
        assert os.path.exists(path) == (database == "empty")
        if database == "empty":
            assert os.path.getsize(path) == 0
    os.rename(wal, wal + ".saved")
    mark = path + "-mark"  # the session's commit mark still says it had acknowledged commits
    with pytest.raises(CorruptSession) as refused:
        async with durable.open_harness(path, model=FauxModel([])):
            pass
    assert str(refused.value).startswith(f"Session file {path} is empty, but 2 acknowledged commits were recorded "
                                         f"for it in {mark}: it was truncated or replaced.")
    os.rename(mark, mark + ".saved")
    async with durable.open_harness(path, model=FauxModel([])) as h:  # once both moved away, a new session
        assert await h.root.entries() == []


async def test_a_second_process_cannot_start_over_a_live_owners_journal_after_its_file_was_deleted(path):
    proc = subprocess.Popen([sys.executable, "-c", HARNESS_OWNER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert await anyio.to_thread.run_sync(proc.stdout.readline) == "ready\n"
        os.remove(path)  # the database only: the owner's -wal is still there
        kind, _, message = await run_harness_opener(path)
        assert kind == "UnsafeSessionFile" and f"its write-ahead log {path}-wal" in message
    finally:
        proc.send_signal(signal.SIGKILL)
        await anyio.to_thread.run_sync(proc.wait)
        proc.stdout.close()
        proc.stdin.close()


# ----------------------------------------------------------------------------- where flock and fcntl locks interact


async def test_without_a_separate_flock_the_lock_is_a_sidecar_never_written_through(tmp_path, path, monkeypatch):
    """BSD/macOS: flock on the database would conflict with SQLite's own locks, so the lock is a
    `<file>.lock` beside the resolved file (run here on Linux with the switch turned)."""
    monkeypatch.setattr("durable.storage.sqlite.lock.LOCK_ON_DATABASE", False)
    async with durable.open_harness(path, model=FauxModel([])):
        with open(path + ".lock") as f:
            assert f.read() == str(os.getpid())
        assert stat.S_IMODE(os.stat(path + ".lock").st_mode) == 0o600
        assert owner_pid(path) == os.getpid()
        with pytest.raises(SessionLocked, match=f"already open in process {os.getpid()}"):
            await SQLiteStorage(path).open()
    assert owner_pid(path) is None
    os.remove(path + ".lock")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, path + ".lock")
    with pytest.raises(UnsafeSessionFile, match=r"session.db.lock \(beside session file .*\) is a symbolic link"):
        await SQLiteStorage(path).open()
    assert victim.read_text() == "precious"


# ----------------------------------------------------------------------------- reading an owned file

# Opens a read-write connection to argv[1], counts the entries and closes it: the last
# connection of its process, as the console's is after it put a decision in the inbox.
COUNTER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
print(conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
conn.close()
"""


async def test_reading_a_file_this_process_owns_keeps_the_wal_from_another_process_s_close(path):
    """In WAL mode the owner's SQLite connection holds a shared lock on the database for as long as
    it is open; opening and closing another descriptor of the file in the owner's process (the
    header check of a `SessionReader`, as the embedded console opens one at every look) used to
    drop it. Another process's last connection then checkpointed and deleted the WAL on its close
    while the owner went on committing into it: those commits were invisible to every other
    process and lost at the next kill."""
    store = SQLiteStorage(path)
    await store.open()
    try:
        await store.commit(Batch(entries=[user(1)], live={"root": Live()}))
        with SessionReader(path) as reader:
            assert reader.file_facts().journal_mode == "wal"
        assert owner_pid(path) == os.getpid()
        counted = await anyio.run_process([sys.executable, "-c", COUNTER, path], check=True)
        assert counted.stdout.decode().split() == ["1"]
        assert os.path.exists(path + "-wal")
        await store.commit(Batch(entries=[user(2)]))
        counted = await anyio.run_process([sys.executable, "-c", COUNTER, path], check=True)
        assert counted.stdout.decode().split() == ["2"]
    finally:
        await store.close()


async def test_a_reader_held_while_this_process_closes_and_reopens_a_store_keeps_the_wal_from_another_process_s_close(path):
    """Closing a store closes its descriptor of the database (the one its ownership lock is
    on); with a `SessionReader` of this process still open on the file, that close used to drop
    the reader's shared lock, and the store opened next in this process took none of its own
    (SQLite counts its connections of one process together). Another process's last connection
    then checkpointed and deleted the WAL on its close, and the new store's next commits went
    into the deleted file: invisible to every other process, and lost once it closed."""
    await make_session(path)
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(Batch(entries=[user(2)]))
    with SessionReader(path) as reader:  # as the console does, at every look
        assert reader.file_facts().entries == 2
        await store.close()
        store = SQLiteStorage(path)
        await store.open()
        try:
            await store.commit(Batch(entries=[user(3)]))
            counted = await anyio.run_process([sys.executable, "-c", COUNTER, path], check=True)
            assert counted.stdout.decode().split() == ["3"]
            assert os.path.exists(path + "-wal")
            await store.commit(Batch(entries=[user(4)]))
            counted = await anyio.run_process([sys.executable, "-c", COUNTER, path], check=True)
            assert counted.stdout.decode().split() == ["4"]
        finally:
            await store.close()
    async with durable.open_harness(path, model=FauxModel([])) as h:
        assert [e.entry.text for e in await h.root.entries()] == ["input 1", "input 2", "input 3", "input 4"]


def posix_locks(path: str) -> set[tuple[str, str, str, str]]:
    """The POSIX (fcntl) locks this process holds on the session file and its -shm, from
    /proc/locks: (file, READ or WRITE, first byte, last byte)."""
    names = {os.stat(path + suffix).st_ino: suffix or "database" for suffix in ("", "-shm")}
    held = set()
    with open("/proc/locks") as f:
        for line in f:
            fields = line.split()  # "1: POSIX  ADVISORY  READ 1234 fe:00:5678 128 128"
            if fields[1] == "POSIX" and fields[4] == str(os.getpid()):
                inode = int(fields[5].rsplit(":", 1)[-1])
                if inode in names:
                    held.add((names[inode], fields[3], fields[6], fields[7]))
    return held


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="reads the locks this process holds from /proc/locks")
@pytest.mark.parametrize("done", ["a store opened", "a store opened and closed", "a store refused (another process "
                                  "owns the file)", "a second reader", "owner_pid without /proc/locks"])
async def test_what_this_process_does_with_a_file_it_reads_keeps_the_reader_s_sqlite_locks(path, done, monkeypatch):
    """POSIX locks belong to the process: any descriptor of the database or its -shm opened and
    closed beside a connection of this process drops that connection's locks (its shared lock on
    the database keeps another process's last connection from deleting the WAL; its lock on the
    -shm, from re-initialising the -shm under it). Each thing durable does with the file keeps them."""
    proc = subprocess.Popen([sys.executable, "-c", HARNESS_OWNER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert await anyio.to_thread.run_sync(proc.stdout.readline) == "ready\n"
        if done.startswith("a store opened"):
            proc.send_signal(signal.SIGKILL)  # its commits stay in the WAL: a reader reads through it
            await anyio.to_thread.run_sync(proc.wait)
        with SessionReader(path) as reader:
            assert reader.file_facts().entries == 2 and reader.file_facts().wal_bytes > 0
            before = posix_locks(path)
            assert {lock[0] for lock in before} == {"database", "-shm"}
            if done.startswith("a store opened"):
                store = SQLiteStorage(path)
                await store.open()
                await store.commit(Batch(entries=[user(3)]))
                if done == "a store opened and closed":
                    await store.close()
                assert posix_locks(path) >= before
                if done == "a store opened":
                    await store.close()
            elif done.startswith("a store refused"):
                with pytest.raises(SessionLocked):
                    await SQLiteStorage(path).open()
            elif done == "a second reader":
                with SessionReader(path) as second:
                    assert second.file_facts().entries == 2
            else:
                monkeypatch.setattr("durable.storage.sqlite.lock._proc_locks_holder", lambda st: None)
                assert owner_pid(path) == -1  # owned, by a pid it cannot see without /proc/locks
            assert posix_locks(path) >= before
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        await anyio.to_thread.run_sync(proc.wait)
        proc.stdout.close()
        proc.stdin.close()
