"""The commit mark: how many barrier commits a session file acknowledged, kept where a damaged
or removed WAL cannot take it along, so that an open never silently starts from an older state.

SQLite ends a WAL at its first frame that fails its checksum, and opens a file without its WAL
(or with its header damaged, or cut short) as of the last checkpoint: acknowledged commits vanish
without an error, and `integrity_check` says ok. So each barrier transaction also counts itself
in the database (`meta.barriers`, with the file's random `meta.session` id), and once it is on
disk the count is written to `<file>-mark` (`CommitMark.record`; one `pwrite`, no fsync: the mark
is written after the barrier's fsync, so the database holds at least what it says, also after a
power cut). An open compares them before SQLite may write (`check`): a database of the same
session behind its mark is refused with `CorruptSession` ("the WAL was damaged or removed: N
acknowledged commits are missing"), and so is an empty file where a session with barriers was
recorded; nothing is changed. A mark of another session (another file moved to the path), or a
missing file (deleted on purpose: a new session starts), is overwritten. A mark that does not
parse (torn, foreign) checks nothing. Only commits written at SQLite's FULL level count: under
`synchronous="NORMAL"` nothing is fsynced, so nothing is recorded.
"""

from __future__ import annotations

import os
import zlib

from ...errors import CorruptSession
from .files import OPEN_FLAGS, check_ours, file_error

SUFFIX = "-mark"
_MAGIC = b"durable-mark 1"


def _record(session: str, barriers: int) -> bytes:
    body = b"%s %s %020d" % (_MAGIC, session.encode(), barriers)
    return body + b" %08x\n" % zlib.crc32(body)


def read(path: str) -> tuple[str, int] | None:
    """The (session id, barrier count) recorded beside the session file `path`; None when there
    is no mark, or it does not parse (never written whole, or not ours to read)."""
    try:
        fd = os.open(path + SUFFIX, os.O_RDONLY | OPEN_FLAGS)
    except OSError:
        return None
    try:
        check_ours(os.fstat(fd), path + SUFFIX, path)
        data = os.read(fd, 256)
    except Exception:  # noqa: BLE001 - a mark that cannot be read checks nothing
        return None
    finally:
        os.close(fd)
    parts = data.rstrip(b"\n").split(b" ")
    if len(parts) != 5 or b" ".join(parts[:2]) != _MAGIC:
        return None
    body = b" ".join(parts[:4])
    try:
        if int(parts[4], 16) != zlib.crc32(body):
            return None
        return parts[2].decode(), int(parts[3])
    except ValueError:
        return None


def check(path: str, *, created: bool, stored: tuple[str, int] | bool | None) -> None:
    """Refuse to open the session file `path` when its mark records barrier commits it lacks
    (see the module docstring). `created`: the file was created by this open. `stored`: the
    file's own (session id, barrier count); None for an empty file, False for an SQLite file
    without tables (what a new session is without its WAL), True for a session of a schema that
    does not count its barriers (older than 5)."""
    recorded = read(path)
    if recorded is None or created or stored is True:
        return
    session, barriers = recorded
    mark = path + SUFFIX
    if stored is None:
        if barriers > 0:
            raise CorruptSession(
                f"Session file {path} is empty, but {barriers} acknowledged commits were recorded for it in {mark}: "
                f"it was truncated or replaced. durable will not start a new session over it; restore the file "
                f"from a copy, or delete {mark} to start a new session here", location=path)
        return
    held = 0 if stored is False else stored[1]
    if held >= barriers or (stored is not False and stored[0] != session):
        return  # all there, or another session's file now at this path (its mark is rewritten)
    count = barriers - held
    commits = "1 acknowledged commit is" if count == 1 else f"{count} acknowledged commits are"
    raise CorruptSession(
        f"Session file {path}: the WAL was damaged or removed: {commits} missing "
        f"(the file holds {held} of the {barriers} barrier commits recorded in {mark}). Nothing was changed; "
        f"restore the file and its -wal from a copy, or, to go on without those commits, delete {mark} and open "
        f"it again", location=path)


class CommitMark:
    """The open mark of one session file: `record` after each barrier that reached the disk."""

    def __init__(self, path: str, session: str, barriers: int) -> None:
        name = path + SUFFIX
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | OPEN_FLAGS, 0o600)
        except OSError as exc:
            raise file_error(exc, name, path) from exc
        try:
            check_ours(os.fstat(fd), name, path)
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd
        self.session = session
        self.record(barriers)

    def record(self, barriers: int) -> None:
        """Write the count (fixed length, in place). Best effort: a mark that lags only checks
        less (a full disk that refuses even this has refused the commits after it too)."""
        if self._fd is None:
            return
        try:
            if hasattr(os, "pwrite"):
                os.pwrite(self._fd, _record(self.session, barriers), 0)
            else:  # Windows: no pwrite; this descriptor is ours alone
                os.lseek(self._fd, 0, os.SEEK_SET)
                os.write(self._fd, _record(self.session, barriers))
        except OSError:
            pass

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
