"""Ownership of a session file by the file's identity, and the checks that keep durable from
writing through a link it did not create.

The lock. A store owns the database file itself, not a name for it: it takes
`flock(LOCK_EX | LOCK_NB)` on a descriptor of the database file. Opening the same file through a
symbolic link, a hard link or after a rename meets the same lock, because the lock lives on the
inode (st_dev, st_ino). A second opener is refused with `SessionLocked` naming the owner's pid;
flock locks belong to an open file description, so a second store in this process is refused
too (before it even opens the file: stores of this process are registered by identity). The OS
drops the lock when the owner dies, so a killed agent's file can be reopened at once.

Why flock on the database and not a fcntl lock: SQLite locks byte ranges of the database file with
POSIX fcntl locks. Those belong to the process, so a fcntl lock of ours would merge with SQLite's,
be released by SQLite's unlocks, and vanish whenever any descriptor of the file is closed in this
process. On Linux flock locks are a separate kind that never conflicts with fcntl locks. Verified
(Linux, ext4, SQLite 3.40): while one process holds flock(LOCK_EX) on a WAL database and writes
to it, another process's SQLite reads and commits to it unhindered, and only a second flock is
refused; /proc/locks lists the holder (its pid: what the refusal names; nothing is written into
any file). NFS emulates flock with fcntl locks and on BSD/macOS the two kinds interact; SQLite's
WAL needs a local file system anyway (its -shm is shared memory), and on platforms other than
Linux the lock is taken on a sidecar `<file>.lock` (opened without following links, 0600, holding
the owner's pid); there a file with a second hard link is refused (below), so the resolved name
is unique to the file.

Platforms. The lock goes through a `Locker`: `FlockLocker` (flock(2), wherever `fcntl` exists)
or `WindowsLocker` (msvcrt.locking, on Windows, where there is no `fcntl`: this module imports
neither at import time, so `import durable` works everywhere). Windows byte-range locks are
mandatory (a locked byte cannot be read by anyone else), so `WindowsLocker` locks one byte far
past the end of the `.lock` sidecar and the owner's pid at its start stays readable; the lock
is per handle, so it also refuses a second store of this process, and the OS drops it when the
owner dies. Where a check needs POSIX (O_NOFOLLOW, the owner uid, fchmod) and the platform has
no such thing, it is skipped: Windows has no symbolic links a user can plant without privileges,
no uid on files, and no mode bits beyond read-only. Only Linux is tested (in CI).

Losing ownership. Before each transaction the store checks that its path still names the inode
it locked; when the file was deleted, renamed or replaced (and perhaps a second process created a
new session at the path), the commit is refused with `LockLost`. SQLite itself does not checkpoint
or delete the -wal/-shm of a database file that has moved, so closing such a store does not
delete the new owner's journal.

No writes through planted links:
- the session path may be a symbolic link to an existing, non-empty session file: it is resolved
  (os.path.realpath) and everything (the lock, SQLite, its -wal and -shm, which SQLite also places
  beside the resolved file) works on the target. A link to nothing, to an empty file or to
  something that is not a regular file is refused (`UnsafeSessionFile`): durable never creates or
  initialises a file through a link;
- the database is opened with O_NOFOLLOW, a new one created with O_CREAT | O_EXCL, mode 0600;
- a database with more than one hard link is refused: SQLite names its -wal after the path, so
  two names for one file mean two journals for it (a crash under one name loses its commits
  under the other, and can corrupt the file);
- -wal and -shm are created by the store before SQLite opens them (O_CREAT | O_NOFOLLOW, 0600),
  so SQLite writes only into regular files; a symbolic link or any non-regular file there (or at
  -journal) is refused;
- a file owned by another user (the database or one beside it) is refused: adopting it would
  leave the conversation readable by its owner. A file of ours that becomes a session (an empty
  file, or an empty SQLite database) is set to 0600; -wal, -shm and -journal are narrowed to the
  database's permission bits.

Quiet losses refused: a non-empty -wal beside a missing or empty database holds commits of a
database that is gone; opening refuses it with `UnsafeSessionFile` naming the -wal, and leaves it.
"""

from __future__ import annotations

import errno
import importlib
import os
import stat
import sys
import threading
from typing import Any, Protocol

from ..errors import (
    LockLost,
    SessionLocked,
    SessionReadOnly,
    StorageError,
    UnsafeSessionFile,
)

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
    when neither can be imported (opening a store then says so)."""
    if sys.platform == "win32":
        return WindowsLocker(importlib.import_module("msvcrt"))
    try:
        return FlockLocker(importlib.import_module("fcntl"))
    except ImportError:
        return None


LOCKER = platform_locker()

# flock on the database itself where flock and fcntl locks are independent (see above).
LOCK_ON_DATABASE = sys.platform.startswith("linux") and isinstance(LOCKER, FlockLocker)
_SIDECARS = ("-wal", "-shm")

_owned: dict[tuple[int, int], str] = {}  # (st_dev, st_ino) -> path, the files stores of this process own
_owned_guard = threading.Lock()

# NOFOLLOW: never through a planted link; NONBLOCK: a FIFO planted there does not hang us. Each
# where the platform has it (Windows has none of them; BINARY is Windows only).
_O_OPEN = (getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
           | getattr(os, "O_BINARY", 0))


def _locker(path: str) -> Locker:
    if LOCKER is None:
        raise StorageError(
            f"Session file {path} cannot be opened: this platform ({sys.platform}) offers no file lock durable "
            f"can use (neither fcntl nor msvcrt can be imported), so its ownership cannot be taken", location=path)
    return LOCKER


def resolve(path: str) -> str:
    """The path to work on: `path`, or the file a symbolic link at `path` points to (see the
    module docstring for what is refused)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise _error(exc, path, path) from exc
    if not stat.S_ISLNK(st.st_mode):
        return path
    target = os.path.realpath(path)
    try:
        tst = os.stat(target)
    except OSError:
        raise UnsafeSessionFile(
            f"Session file {path} is a symbolic link to {target}, which does not exist; durable does "
            f"not create a session file through a link (pass {target} itself to create it there)",
            location=path) from None
    if not stat.S_ISREG(tst.st_mode):
        raise UnsafeSessionFile(f"Session file {path} is a symbolic link to {target}, which is not a regular file",
                                location=path)
    if tst.st_size == 0:
        raise UnsafeSessionFile(
            f"Session file {path} is a symbolic link to {target}, which is empty; durable does not "
            f"create a session file through a link (pass {target} itself to create it there)",
            location=path)
    return target


def refuse_orphan_journal(path: str) -> None:
    """Refuse to start a session where a non-empty -wal lies beside a missing or empty database."""
    wal = path + "-wal"
    try:
        st = os.lstat(wal)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _error(exc, wal, path) from exc
    if stat.S_ISLNK(st.st_mode):
        raise _error(OSError(errno.ELOOP, os.strerror(errno.ELOOP)), wal, path)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeSessionFile(f"{wal} (beside session file {path}) is not a regular file; durable will not "
                                f"write to it", location=path)
    if st.st_size > 0:
        raise UnsafeSessionFile(
            f"Session file {path} is missing or empty, but its write-ahead log {wal} ({st.st_size} bytes) "
            f"is still there: it holds commits of a database that was deleted. durable will not start a new "
            f"session over it; restore {path}, or move {wal} away, and open again",
            location=path)


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
            raise _error(exc, path, path) from exc
        if key is not None:
            with _owned_guard:
                if key in _owned:
                    raise SessionLocked(path, os.getpid())
        fd, self.created = _open_database(path)
        try:
            st = os.fstat(fd)
            _check_regular_and_ours(st, path, path)
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
                _owned[_identity(st)] = path
        except BaseException:
            self._close_sidecar()
            os.close(fd)  # a file created here stays (empty): another opener may own it by now
            raise
        self.fd = fd
        self._id = _identity(st)
        return st

    def _lock_sidecar(self) -> None:
        lock = self.path + ".lock"
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | _O_OPEN, 0o600)
        except OSError as exc:
            raise _error(exc, lock, self.path) from exc
        self._sidecar = fd
        st = os.fstat(fd)
        _check_regular_and_ours(st, lock, self.path)
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
        finally:
            os.close(self.fd)
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


def prepare_journals(path: str, db: os.stat_result, *, create: bool) -> None:
    """Make -wal and -shm (and an existing -journal) safe for SQLite to open: regular files of
    ours, no wider than the database. With `create`, a missing -wal/-shm is created (0600) so that
    SQLite never creates one through a link planted in between; without it, only checked (and
    whether the folder lets us create them)."""
    want = stat.S_IMODE(db.st_mode) & 0o666
    for suffix in (*_SIDECARS, "-journal"):
        name = path + suffix
        flags = os.O_RDWR | _O_OPEN
        if create and suffix != "-journal":
            flags |= os.O_CREAT
        try:
            fd = os.open(name, flags, 0o600)
        except FileNotFoundError:
            folder = os.path.dirname(os.path.abspath(name))
            if suffix != "-journal" and not os.access(folder, os.W_OK, effective_ids=_EFFECTIVE):
                raise SessionReadOnly(
                    f"Session file {path} cannot be opened for writing: its folder "
                    f"{folder} is read-only (permission denied), and durable "
                    f"keeps its journal ({os.path.basename(name)}) beside the file", location=path) from None
            continue
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and not os.path.lexists(name):
                raise SessionReadOnly(
                    f"Session file {path} cannot be opened for writing: its folder "
                    f"{os.path.dirname(os.path.abspath(name))} is read-only ({(exc.strerror or str(exc)).lower()}), "
                    f"and durable keeps its journal ({os.path.basename(name)}) beside the file", location=path) from exc
            raise _error(exc, name, path) from exc
        try:
            st = os.fstat(fd)
            _check_regular_and_ours(st, name, path)
            if stat.S_IMODE(st.st_mode) & ~want and _HAS_FCHMOD:
                os.fchmod(fd, stat.S_IMODE(st.st_mode) & want)
        finally:
            os.close(fd)


def narrow_to_owner(fd: int) -> None:
    """A file of ours that becomes a session: readable and writable by its owner only."""
    if _HAS_FCHMOD and stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
        os.fchmod(fd, 0o600)


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
        fd = os.open(probe, os.O_RDONLY | _O_OPEN)
    except OSError:
        return None
    try:
        if LOCKER.held_elsewhere(fd):
            return (_read_pid(fd) if not LOCK_ON_DATABASE else None) or -1
        return None
    finally:
        os.close(fd)


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

_EFFECTIVE = os.access in os.supports_effective_ids
_HAS_FCHMOD = hasattr(os, "fchmod")  # not on Windows before Python 3.13 (nor needed there: no mode bits)


def _identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _open_database(path: str) -> tuple[int, bool]:
    """A descriptor of the database file (never through a link), and whether it was created."""
    for _ in range(3):
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _O_OPEN, 0o600), True
        except FileExistsError:
            pass
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and not os.path.lexists(path):
                folder = os.path.dirname(os.path.abspath(path))
                raise SessionReadOnly(
                    f"Session file {path} cannot be created: its folder {folder} is read-only "
                    f"({(exc.strerror or str(exc)).lower()})", location=path) from exc
            if not os.path.lexists(path):
                raise _error(exc, path, path) from exc
        try:
            return os.open(path, os.O_RDWR | _O_OPEN), False
        except FileNotFoundError:
            continue  # removed in between: create it
        except OSError as exc:
            raise _error(exc, path, path) from exc
    raise StorageError(f"Session file {path} cannot be opened: it keeps appearing and disappearing", location=path)


def _check_regular_and_ours(st: os.stat_result, name: str, path: str) -> None:
    beside = "" if name == path else f" (beside session file {path})"
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeSessionFile(f"{name}{beside} is not a regular file; durable will not write to it", location=path)
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():  # Windows has no uid on files
        raise UnsafeSessionFile(
            f"{name}{beside} belongs to user {st.st_uid}, not to this user ({os.geteuid()}); durable only "
            f"uses files of the user running it (another user could read the conversation)", location=path)


def _error(exc: OSError, name: str, path: str) -> StorageError:
    """An OSError met while opening, as the error a person can act on."""
    if exc.errno == errno.ELOOP:
        beside = "" if name == path else f" (beside session file {path})"
        return UnsafeSessionFile(f"{name}{beside} is a symbolic link; durable does not write through a link it did "
                                 f"not create", location=path)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return SessionReadOnly(f"Session file {path} cannot be opened for writing: permission denied on {name}",
                               location=path)
    if exc.errno == errno.EROFS:
        return SessionReadOnly(f"Session file {path} cannot be opened for writing: {name} is on a read-only file "
                               f"system", location=path)
    return StorageError(f"Session file {path} cannot be opened: {exc.strerror} ({name})", location=path)
