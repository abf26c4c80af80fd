"""Platforms (issue 14, item 9): nothing POSIX-only is imported at import time, and the ownership
lock has a Windows path (msvcrt.locking on the `.lock` sidecar) behind the same interface.

Windows itself is not available here: `import durable` without `fcntl` is tested in a subprocess
where importing `fcntl` fails, and `WindowsLocker` is driven on Linux with a stand-in for `msvcrt`
that keeps Windows' rules (a byte-range lock per handle, refused to any other handle, taken at
the file position)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

import durable
from durable.errors import SessionLocked
from durable.models import FauxModel, faux
from durable.storage.sqlite import lock as _lock
from durable.storage.sqlite.lock import FileLock, FlockLocker, WindowsLocker, owner_pid, platform_locker

pytestmark = pytest.mark.anyio

NO_FCNTL = textwrap.dedent("""
    import sys
    sys.modules["fcntl"] = None  # `import fcntl` raises ImportError, as on Windows
    import durable, durable.sync, durable.storage.sqlite.store, durable.cli
    from durable.storage.sqlite import lock as _lock
    print(_lock.LOCKER, _lock.LOCK_ON_DATABASE)
    import trio

    async def main():
        try:
            async with durable.open_harness(sys.argv[1], model=durable.models.FauxModel()):
                pass
        except durable.StorageError as exc:
            print(type(exc).__name__, exc)

    import durable.models
    trio.run(main)
    print(_lock.owner_pid(sys.argv[1]))
    """)


def test_durable_imports_without_fcntl_and_says_why_it_cannot_take_ownership(tmp_path):
    path = tmp_path / "session.sqlite"
    done = subprocess.run([sys.executable, "-c", NO_FCNTL, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "None False",
        f"StorageError Session file {path} cannot be opened: this platform (linux) offers no file lock durable can "
        f"use (neither fcntl nor msvcrt can be imported), so its ownership cannot be taken",
        "None",
    ]


def test_the_locker_of_this_platform_is_flock_and_windows_gets_msvcrt(monkeypatch):
    assert isinstance(_lock.LOCKER, FlockLocker) and _lock.LOCK_ON_DATABASE
    fake = FakeMsvcrt()
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    locker = platform_locker()
    assert isinstance(locker, WindowsLocker) and locker._msvcrt is fake


class FakeMsvcrt:
    """msvcrt.locking as Windows does it: `nbytes` from the file position, held by one handle,
    refused (EACCES) to every other; unlocking a range this handle does not hold fails too."""

    LK_UNLCK, LK_LOCK, LK_NBLCK, LK_RLCK, LK_NBRLCK = 0, 1, 2, 3, 4

    def __init__(self) -> None:
        self.held: dict[tuple[int, int, int, int], int] = {}  # (dev, ino, offset, nbytes) -> fd
        self.calls: list[tuple[int, int]] = []  # (mode, offset)

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        st = os.fstat(fd)
        offset = os.lseek(fd, 0, os.SEEK_CUR)
        self.calls.append((mode, offset))
        key = (st.st_dev, st.st_ino, offset, nbytes)
        if mode == self.LK_NBLCK:
            if key in self.held:  # Windows refuses a second lock even to the same handle
                raise OSError(errno.EACCES, "Permission denied")
            self.held[key] = fd
        elif mode == self.LK_UNLCK:
            if self.held.get(key) != fd:
                raise OSError(errno.EACCES, "Permission denied")
            del self.held[key]
        else:
            raise AssertionError(f"durable uses only LK_NBLCK and LK_UNLCK, not {mode}")


@pytest.fixture
def windows(monkeypatch) -> FakeMsvcrt:
    """This process locks as on Windows: the sidecar `.lock`, through WindowsLocker."""
    fake = FakeMsvcrt()
    monkeypatch.setattr(_lock, "LOCKER", WindowsLocker(fake))
    monkeypatch.setattr(_lock, "LOCK_ON_DATABASE", False)
    return fake


def test_the_windows_locker_locks_one_byte_far_past_the_pid_and_refuses_other_handles(tmp_path, windows):
    name = str(tmp_path / "x.lock")
    one, two = (os.open(name, os.O_RDWR | os.O_CREAT, 0o600) for _ in range(2))
    try:
        locker = WindowsLocker(windows)
        assert locker.try_lock(one)
        assert not locker.try_lock(two) and locker.held_elsewhere(two)
        locker.unlock(one)
        assert not locker.held_elsewhere(two)  # the probe took it for an instant and gave it back
        assert windows.held == {}
        assert locker.try_lock(two) and locker.held_elsewhere(one)
        assert {offset for _, offset in windows.calls} == {WindowsLocker.OFFSET}
        with pytest.raises(OSError):  # an error other than "held" is not swallowed
            WindowsLocker(Broken()).try_lock(one)
    finally:
        os.close(one)
        os.close(two)


def test_ownership_through_the_windows_locker_names_the_owner_and_is_released(tmp_path, windows):
    path = str(tmp_path / "session.sqlite")
    first = FileLock(path)
    first.acquire()
    try:
        with open(path + ".lock") as f:
            assert f.read() == str(os.getpid())  # readable: the locked byte is far past it
        assert os.path.getsize(path + ".lock") == len(str(os.getpid()))  # the lock did not grow the file
        assert owner_pid(path) == os.getpid()
        _lock._owned.clear()  # as if `first` were another process: only the OS lock stands in the way
        with pytest.raises(SessionLocked) as caught:
            FileLock(path).acquire()
        assert caught.value.pid == os.getpid()
        assert str(caught.value) == f"Session file {path} is already open in process {os.getpid()}"
        first.check()
    finally:
        first.release()
    assert windows.held == {} and owner_pid(path) is None
    again = FileLock(path)
    again.acquire()
    again.release()
    assert windows.held == {}


async def test_a_harness_runs_on_the_windows_lock_path(tmp_path, windows):
    path = str(tmp_path / "session.sqlite")
    async with durable.open_harness(path, model=FauxModel([faux.reply("Hello")])) as h:
        assert len(windows.held) == 1
        assert await (await h.root.submit("hi")).answer() == "Hello"
        with pytest.raises(SessionLocked):
            async with durable.open_harness(path, model=FauxModel()):
                pass
    assert windows.held == {}
    assert sorted(os.listdir(tmp_path)) == ["session.sqlite", "session.sqlite-mark", "session.sqlite.lock"]


class Broken:
    LK_NBLCK, LK_UNLCK = 2, 0

    def locking(self, fd: int, mode: int, nbytes: int) -> Any:
        raise OSError(errno.EBADF, "Bad file descriptor")
