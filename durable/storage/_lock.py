"""Ownership of a session file: an exclusive OS lock on a sidecar `<file>.lock`.

`flock` locks belong to an open file description, so a second opener is refused whether it is
another process or another store in this process. The owner's pid is written into the lock file
so the refusal can name it. The lock is released by the OS when the owner dies, which is what
lets a killed agent's file be reopened at once.

A store checks before each transaction that its lock file is still the one it locked (someone
may have deleted it and a second process locked a new one); if not, it refuses to commit.
"""

from __future__ import annotations

import fcntl
import os

from ..errors import LockLost, SessionLocked, StorageError


class FileLock:
    def __init__(self, session_path: str) -> None:
        self.session_path = session_path
        self.path = session_path + ".lock"
        self._fd: int | None = None
        self._ino: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StorageError(f"Session file {self.session_path} cannot be opened: {exc.strerror}",
                               location=self.session_path) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise SessionLocked(self.session_path, pid) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        self._ino = os.fstat(fd).st_ino

    def check(self) -> None:
        """Raise `LockLost` unless this store still owns the file."""
        try:
            ino = os.stat(self.path).st_ino
        except FileNotFoundError:
            ino = None
        if self._fd is None or ino != self._ino:
            raise LockLost(
                f"Session file {self.session_path} is no longer owned by this process "
                f"(its lock file was removed or replaced); the commit was refused",
                location=self.session_path,
            )

    def release(self) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def owner_pid(session_path: str) -> int | None:
    """The pid of the process that owns `session_path`, or None when nobody holds it."""
    path = session_path + ".lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_pid(fd) or -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
