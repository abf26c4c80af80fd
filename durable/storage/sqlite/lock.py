"""Ownership of a session file by the file's identity (its inode), not by a name for it.

A store takes `flock(LOCK_EX | LOCK_NB)` on a descriptor of the database file (`FileLock`), so
opening the same file through a symbolic link, a hard link or after a rename meets the same lock.
A second opener is refused with `SessionLocked` naming the owner's pid (`owner_pid` finds it
without taking the lock); a second store in this process is refused too (stores of this process
are registered by identity). The OS drops the lock when the owner dies, so a killed agent's file
can be reopened at once. A database with more than one hard link is refused: SQLite names its
-wal after the path, so two names would mean two journals for one file.

Losing ownership: before each transaction the store checks that its path still names the inode
it locked (`FileLock.check`); when the file was deleted, renamed or replaced, the commit is
refused with `LockLost`. SQLite does not checkpoint or delete the -wal/-shm of a database file
that has moved, so closing such a store does not delete a new owner's journal.

Platforms: the lock goes through a `Locker` (`platform_locker`): flock wherever `fcntl` exists,
msvcrt.locking on Windows; this module imports neither at import time, so `import durable` works
everywhere. Where flock cannot go on the database itself (`LOCK_ON_DATABASE` False) the lock is
taken on a sidecar `<file>.lock`. Only Linux is tested.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
import threading
from typing import Any, Protocol

from ...errors import LockLost, SessionLocked, StorageError, UnsafeSessionFile
from . import descriptors
from .files import OPEN_FLAGS, check_ours, file_error, open_database, resolve

# --------------------------------------------------------------------------- lockers


class Locker(Protocol):
    """An exclusive, non-blocking lock on an open file, as the platform offers it."""

    def try_lock(self, fd: int) -> bool:
        """Take the lock; False when another holder has it."""
        ...

    def unlock(self, fd: int) -> None: ...

    def held_elsewhere(self, fd: int) -> bool:
        """Whether another holder has the lock (probed for an instant through `fd`)."""
        ...


class FlockLocker:
    """flock(2) on the whole file (POSIX). Locks belong to the open file description."""

    def __init__(self, fcntl: Any) -> None:
        self._fcntl = fcntl

    def try_lock(self, fd: int) -> bool:
        try:
            self._fcntl.flock(fd, self._fcntl.LOCK_EX | self._fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def unlock(self, fd: int) -> None:
        self._fcntl.flock(fd, self._fcntl.LOCK_UN)

    def held_elsewhere(self, fd: int) -> bool:
        try:
            self._fcntl.flock(fd, self._fcntl.LOCK_SH | self._fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        self._fcntl.flock(fd, self._fcntl.LOCK_UN)
        return False


class WindowsLocker:
    """msvcrt.locking of one byte at `OFFSET`, far past anything written to the file: Windows
    locks are mandatory, and the bytes before it (the owner's pid) stay readable. `msvcrt` is
    passed in (the module, or a stand-in in tests)."""

    OFFSET = 1 << 30

    def __init__(self, msvcrt: Any) -> None:
        self._msvcrt = msvcrt

    def _locking(self, fd: int, mode: int) -> None:
        os.lseek(fd, self.OFFSET, os.SEEK_SET)  # msvcrt.locking locks from the file position
        self._msvcrt.locking(fd, mode, 1)

    def try_lock(self, fd: int) -> bool:
        try:
            self._locking(fd, self._msvcrt.LK_NBLCK)
        except OSError as exc:  # EACCES / EDEADLOCK: another handle holds it
            if exc.errno not in (errno.EACCES, errno.EDEADLOCK):
                raise
            return False
        return True

    def unlock(self, fd: int) -> None:
        self._locking(fd, self._msvcrt.LK_UNLCK)

    def held_elsewhere(self, fd: int) -> bool:
        if not self.try_lock(fd):
            return True
        self.unlock(fd)
        return False


def platform_locker() -> Locker | None:
    """The locker of this platform: flock where `fcntl` exists, msvcrt.locking on Windows; None
    when neither can be imported (opening a store then says so). Windows byte-range locks are
    mandatory, so `WindowsLocker` locks one byte far past the end of the `.lock` sidecar and the
    owner's pid at its start stays readable; like flock, the lock is per handle (a second store
    of this process is refused) and dropped by the OS when the owner dies."""
    if sys.platform == "win32":
        return WindowsLocker(importlib.import_module("msvcrt"))
    try:
        return FlockLocker(importlib.import_module("fcntl"))
    except ImportError:
        return None


LOCKER = platform_locker()

# Why flock on the database and not a fcntl lock: SQLite locks byte ranges of the database with
# POSIX fcntl locks, which belong to the process: a fcntl lock of ours would merge with SQLite's,
# be released by SQLite's unlocks, and vanish whenever any descriptor of the file is closed in this
# process. On Linux flock locks are a separate kind that never conflicts with fcntl locks (another
# process's SQLite reads and commits unhindered; only a second flock is refused, and /proc/locks
# lists the holder's pid). NFS emulates flock with fcntl locks and on BSD/macOS the two kinds
# interact, so elsewhere the lock goes on the `.lock` sidecar (opened without following links,
# 0600, holding the owner's pid); a file with a second hard link is refused, so the resolved name
# is unique to the file. (SQLite's WAL needs a local file system anyway: its -shm is shared memory.)
LOCK_ON_DATABASE = sys.platform.startswith("linux") and isinstance(LOCKER, FlockLocker)

_owned: dict[tuple[int, int], int] = {}  # (st_dev, st_ino) -> the owning store's descriptor of the file
_owned_guard = threading.Lock()


def _locker(path: str) -> Locker:
    if LOCKER is None:
        raise StorageError(
            f"Session file {path} cannot be opened: this platform ({sys.platform}) offers no file lock durable "
            f"can use (neither fcntl nor msvcrt can be imported), so its ownership cannot be taken", location=path)
    return LOCKER


class FileLock:
    """The ownership of one session file (`path`: resolved by `resolve`). `fd` is a descriptor of
    the database file, open while the store owns it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None
        self.created = False
        self._id: tuple[int, int] | None = None
        self._sidecar: int | None = None  # the `.lock` descriptor where flock cannot go on the database
        self._sidecar_id: tuple[int, int] | None = None
        self._sidecar_locked = False

    def acquire(self) -> os.stat_result:
        """Open (or create, 0600) the database file, take ownership, return its fstat."""
        path = self.path
        try:
            key = _identity(os.stat(path))
        except FileNotFoundError:
            key = None
        except OSError as exc:
            raise file_error(exc, path, path) from exc
        if key is not None:
            with _owned_guard:
                if key in _owned:
                    raise SessionLocked(path, os.getpid())
        fd, self.created = open_database(path)
        try:
            st = os.fstat(fd)
            check_ours(st, path, path)
            if LOCK_ON_DATABASE:
                if not _locker(path).try_lock(fd):
                    raise SessionLocked(path, _holder(st))
            else:
                self._lock_sidecar()
            if st.st_nlink > 1:
                raise UnsafeSessionFile(
                    f"Session file {path} has {st.st_nlink} names (hard links); SQLite keeps its journal beside "
                    f"one name, so commits made under one would be lost under another. Remove the other links "
                    f"(or copy the file) and open it again", location=path)
            with _owned_guard:
                if _identity(st) in _owned:  # another store of this process won the race
                    raise SessionLocked(path, os.getpid())
                _owned[_identity(st)] = fd
        except BaseException:
            self._close_sidecar()
            descriptors.close(fd)  # a file created here stays (empty): another opener may own it by now
            raise
        self.fd = fd
        self._id = _identity(st)
        return st

    def _lock_sidecar(self) -> None:
        lock = self.path + ".lock"
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | OPEN_FLAGS, 0o600)
        except OSError as exc:
            raise file_error(exc, lock, self.path) from exc
        self._sidecar = fd
        st = os.fstat(fd)
        check_ours(st, lock, self.path)
        if not _locker(self.path).try_lock(fd):
            raise SessionLocked(self.path, _read_pid(fd))
        self._sidecar_locked = True
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, str(os.getpid()).encode())
        self._sidecar_id = _identity(st)

    def check(self) -> None:
        """Raise `LockLost` unless this store still owns the file its path names."""
        try:
            now: tuple[int, int] | None = _identity(os.lstat(self.path))
        except FileNotFoundError:
            now = None
        same = self.fd is not None and now == self._id
        if same and self._sidecar_id is not None:
            try:
                same = _identity(os.lstat(self.path + ".lock")) == self._sidecar_id
            except FileNotFoundError:
                same = False
        if not same:
            raise LockLost(
                f"Session file {self.path} is no longer owned by this process (the file was removed, "
                f"renamed or replaced since it was opened); the commit was refused",
                location=self.path,
            )

    def release(self) -> None:
        if self.fd is None:
            return
        with _owned_guard:
            if self._id is not None and _owned.get(self._id) is not None:
                del _owned[self._id]
        self._close_sidecar()
        try:
            if LOCK_ON_DATABASE:
                _locker(self.path).unlock(self.fd)
        finally:  # the flock is gone; the descriptor stays while a connection of this process is open on the file
            descriptors.close(self.fd, self._id)
            self.fd = None

    def _close_sidecar(self) -> None:
        if self._sidecar is not None:
            try:
                if self._sidecar_locked:  # closing drops a flock; Windows asks for an explicit unlock
                    _locker(self.path).unlock(self._sidecar)
            except OSError:
                pass  # the close below drops it all the same
            finally:
                os.close(self._sidecar)
                self._sidecar = None
                self._sidecar_id = None
                self._sidecar_locked = False


def read_head(path: str, size: int) -> bytes:
    """The first `size` bytes of the file at `path` (a session file, read before SQLite opens it).

    Where a store of this process owns the file, they are read through the store's descriptor:
    opening and closing another descriptor of the database would drop every POSIX lock this
    process holds on it, SQLite's too. In WAL mode each connection holds a shared lock on the
    database for as long as it is open; it is what keeps another process's last connection (the
    console writing a decision into the inbox) from checkpointing and deleting the WAL on its
    close while the owner still writes into it: commits acknowledged after that would be lost
    with the next kill. Elsewhere it is read through a descriptor of its own, closed by
    `descriptors.close`: kept open while a connection of this process (another reader, the
    console's inbox) is open on the file."""
    try:
        key: tuple[int, int] | None = _identity(os.stat(path))
    except OSError:
        key = None  # the open below names the error
    if key is not None:
        with _owned_guard:
            fd = _owned.get(key)
            if fd is not None:
                return os.pread(fd, size, 0)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        return os.read(fd, size)
    finally:
        descriptors.close(fd)


# --------------------------------------------------------------------------- the owner's pid


def owner_pid(session_path: str) -> int | None:
    """The pid of the process that owns `session_path`, or None when nobody holds it; -1 when it
    is owned by a process whose pid cannot be seen. On Linux it reads /proc/locks and never
    touches the lock (nor opens the file: closing a descriptor of it would drop this process's
    SQLite locks on it); elsewhere it probes with a shared lock for an instant."""
    try:
        path = resolve(session_path)
        st = os.stat(path)
    except (OSError, StorageError):
        return None
    with _owned_guard:
        if _identity(st) in _owned:
            return os.getpid()  # without a probe: see `read_head`
    if LOCK_ON_DATABASE:
        found = _proc_locks_holder(st)
        if found is not None:
            held, pid = found
            return (pid or -1) if held else None
        probe = path
    else:
        probe = path + ".lock"
    if LOCKER is None:
        return None
    try:
        fd = os.open(probe, os.O_RDONLY | OPEN_FLAGS)
    except OSError:
        return None
    try:
        if LOCKER.held_elsewhere(fd):
            return (_read_pid(fd) if not LOCK_ON_DATABASE else None) or -1
        return None
    finally:
        descriptors.close(fd)


def _holder(st: os.stat_result) -> int | None:
    found = _proc_locks_holder(st)
    return found[1] if found is not None and found[0] else None


def _proc_locks_holder(st: os.stat_result) -> tuple[bool, int | None] | None:
    """From /proc/locks: whether an exclusive flock is held on the file `st` describes, and by
    which pid (None when not visible, e.g. from another pid namespace); None when /proc/locks
    cannot be read."""
    try:
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    exact = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    by_inode: list[int] = []
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF"; "->" marks a waiter, not a holder
        if "FLOCK" not in fields or "->" in fields or "WRITE" not in fields:
            continue
        i = next((k for k, f in enumerate(fields) if f.count(":") == 2), None)
        if i is None:
            continue
        try:
            pid = int(fields[i - 1])
        except ValueError:
            pid = 0
        if fields[i] == exact:
            return True, (pid if pid > 0 else None)
        if fields[i].rsplit(":", 1)[-1] == str(st.st_ino):
            by_inode.append(pid)  # overlay file systems can show another device number
    alive = [pid for pid in by_inode if pid > 0 and _alive(pid)]
    return (True, alive[0]) if len(alive) == 1 else (False, None)


WAL_WRITE_BYTE = 120  # the byte of `<file>-shm` SQLite's writer locks from BEGIN to the end of its commit


def wal_write_locked(session_path: str) -> bool | None:
    """Whether a process holds the WAL write lock of the session file (a POSIX lock on byte
    `WAL_WRITE_BYTE` of its `-shm`), from /proc/locks, without opening the file (closing a
    descriptor would drop this process's SQLite locks on it); None where that cannot be seen.
    A poller that saw the file or its WAL change needs it: a commit's frames are written (the
    WAL's time and size change) before it is fsynced and made visible, so a read in between
    misses it; a read that starts once the lock was seen free sees every commit written before."""
    try:
        st = os.stat(session_path + "-shm")
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return False  # no -shm: no WAL connection at all
    except OSError:
        return None
    inode = str(st.st_ino)
    for line in lines:
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 1234 fe:00:5678 120 120"; "->" marks a waiter, not a holder
        if "POSIX" not in fields or "->" in fields or len(fields) < 8 or fields[-3].rsplit(":", 1)[-1] != inode:
            continue
        try:
            start, end = int(fields[-2]), (1 << 63 if fields[-1] == "EOF" else int(fields[-1]))
        except ValueError:
            continue
        if start <= WAL_WRITE_BYTE <= end:
            return True
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_pid(fd: int) -> int | None:
    try:
        if hasattr(os, "pread"):
            data = os.pread(fd, 32, 0)
        else:  # Windows
            os.lseek(fd, 0, os.SEEK_SET)
            data = os.read(fd, 32)
        text = data.decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


# --------------------------------------------------------------------------- helpers


def _identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


