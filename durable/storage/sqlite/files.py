"""The session file and the files SQLite keeps beside it, made safe to write: durable never
writes through a link it did not create, nor into a file of another user.

- A symbolic link at the session path is resolved to an existing, non-empty regular session file
  (`resolve`: the store then names and works on the target, where SQLite also keeps its -wal and
  -shm); a link to nothing, to an empty file or to a non-regular file is refused
  (`UnsafeSessionFile`): a session file is never created or initialised through a link.
- The database is opened with O_NOFOLLOW, a new one created with O_CREAT | O_EXCL, mode 0600
  (`open_database`); -wal and -shm are created by the store before SQLite opens them, and a link or
  a non-regular file there (or at -journal) is refused (`prepare_journals`).
- A file owned by another user is refused: adopting it would leave the conversation readable by
  its owner. A file of ours that becomes a session is set to 0600 (`narrow_to_owner`); -wal, -shm
  and -journal are narrowed to the database's permission bits.
- A non-empty -wal beside a missing or empty database holds commits of a database that is gone:
  opening refuses it, naming the -wal, and leaves it (`refuse_orphan_journal`).
- A file or folder this process cannot write is `SessionReadOnly`, never "damaged".
Where a check needs POSIX (O_NOFOLLOW, the owner uid, fchmod) and the platform lacks it, it is
skipped (Windows has no links a user can plant unprivileged, no uid, no mode bits)."""

from __future__ import annotations

import errno
import os
import stat

from ...errors import SessionReadOnly, StorageError, UnsafeSessionFile
from . import descriptors

# NOFOLLOW: never through a planted link; NONBLOCK: a FIFO planted there does not hang us. Each
# where the platform has it (Windows has none of them; BINARY is Windows only).
OPEN_FLAGS = (getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
              | getattr(os, "O_BINARY", 0))
_EFFECTIVE = os.access in os.supports_effective_ids
_HAS_FCHMOD = hasattr(os, "fchmod")  # not on Windows before Python 3.13 (nor needed there: no mode bits)


def resolve(path: str) -> str:
    """The path to work on: `path`, or the file a symbolic link at `path` points to (see the
    module docstring for what is refused)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise file_error(exc, path, path) from exc
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
        raise file_error(exc, wal, path) from exc
    if stat.S_ISLNK(st.st_mode):
        raise file_error(OSError(errno.ELOOP, os.strerror(errno.ELOOP)), wal, path)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeSessionFile(f"{wal} (beside session file {path}) is not a regular file; durable will not "
                                f"write to it", location=path)
    if st.st_size > 0:
        raise UnsafeSessionFile(
            f"Session file {path} is missing or empty, but its write-ahead log {wal} ({st.st_size} bytes) "
            f"is still there: it holds commits of a database that was deleted. durable will not start a new "
            f"session over it; restore {path}, or move {wal} away, and open again",
            location=path)


def prepare_journals(path: str, db: os.stat_result, *, create: bool) -> None:
    """Make -wal and -shm (and an existing -journal) safe for SQLite to open: regular files of
    ours, no wider than the database. With `create`, a missing -wal/-shm is created (0600) so that
    SQLite never creates one through a link planted in between; without it, only checked (and
    whether the folder lets us create them)."""
    want = stat.S_IMODE(db.st_mode) & 0o666
    for suffix in ("-wal", "-shm", "-journal"):
        name = path + suffix
        flags = os.O_RDWR | OPEN_FLAGS
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
            raise file_error(exc, name, path) from exc
        try:
            st = os.fstat(fd)
            check_ours(st, name, path)
            if stat.S_IMODE(st.st_mode) & ~want and _HAS_FCHMOD:
                os.fchmod(fd, stat.S_IMODE(st.st_mode) & want)
        finally:  # kept open while a connection of this process is open on the file (it holds locks on -shm)
            descriptors.close(fd, descriptors.identity(db))


def narrow_to_owner(fd: int) -> None:
    """A file of ours that becomes a session: readable and writable by its owner only."""
    if _HAS_FCHMOD and stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
        os.fchmod(fd, 0o600)


def open_database(path: str) -> tuple[int, bool]:
    """A descriptor of the database file (never through a link), and whether it was created."""
    for _ in range(3):
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | OPEN_FLAGS, 0o600), True
        except FileExistsError:
            pass
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and not os.path.lexists(path):
                folder = os.path.dirname(os.path.abspath(path))
                raise SessionReadOnly(
                    f"Session file {path} cannot be created: its folder {folder} is read-only "
                    f"({(exc.strerror or str(exc)).lower()})", location=path) from exc
            if not os.path.lexists(path):
                raise file_error(exc, path, path) from exc
        try:
            return os.open(path, os.O_RDWR | OPEN_FLAGS), False
        except FileNotFoundError:
            continue  # removed in between: create it
        except OSError as exc:
            raise file_error(exc, path, path) from exc
    raise StorageError(f"Session file {path} cannot be opened: it keeps appearing and disappearing", location=path)


def check_ours(st: os.stat_result, name: str, path: str) -> None:
    beside = "" if name == path else f" (beside session file {path})"
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeSessionFile(f"{name}{beside} is not a regular file; durable will not write to it", location=path)
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():  # Windows has no uid on files
        raise UnsafeSessionFile(
            f"{name}{beside} belongs to user {st.st_uid}, not to this user ({os.geteuid()}); durable only "
            f"uses files of the user running it (another user could read the conversation)", location=path)


def file_error(exc: OSError, name: str, path: str) -> StorageError:
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
