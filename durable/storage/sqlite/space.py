"""How much a session file may still grow: the free space of its disk and the process's file size
limit (`RLIMIT_FSIZE`), whichever is less, said in words for the errors and reports that need it.

A full disk is `SQLITE_FULL`; a file at the size limit is, to SQLite, an I/O error (`EFBIG` after
a short write) that the store treats as a full disk too (`exhausted`). An open with less than
`LOW_SPACE` left is reported (`low_space`), so the host hears of it before a commit is refused.
"""

from __future__ import annotations

import os

try:
    import resource
except ImportError:  # Windows: no resource limits
    resource = None  # type: ignore[assignment]  # the module is optional: None where it is absent

LOW_SPACE = 32 << 20
"""Bytes left under which opening a session file is reported (a turn with a long answer and the
WAL's own bound need a few MB)."""
_EXHAUSTED = 64 << 10  # bytes left under which an I/O error while writing is a full disk


def _size(name: str) -> int:
    try:
        return os.path.getsize(name)
    except OSError:
        return 0


def left(path: str) -> tuple[int | None, str]:
    """(bytes the file or its WAL may still grow, None when unknown; the words for it)."""
    folder = os.path.dirname(os.path.abspath(path))
    free: int | None = None
    words = []
    try:
        st = os.statvfs(folder)
        free = st.f_bavail * st.f_frsize
        words.append(f"{_bytes(free)} free on the disk of {folder}")
    except (OSError, AttributeError):  # Windows has no statvfs
        pass
    if resource is not None:
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if limit != resource.RLIM_INFINITY:
            room = max(0, limit - max(_size(path), _size(path + "-wal")))
            words.append(f"the process's file size limit (RLIMIT_FSIZE) is {_bytes(limit)}, {_bytes(room)} left")
            free = room if free is None else min(free, room)
    return free, "; ".join(words) or "free space unknown"


def exhausted(path: str) -> bool:
    """Whether the file can hardly grow any more (an I/O error while writing then means that)."""
    free, _ = left(path)
    return free is not None and free < _EXHAUSTED


def low_space(path: str) -> str | None:
    """A sentence for the host when less than `LOW_SPACE` is left for the session file, else None."""
    free, words = left(path)
    if free is None or free >= LOW_SPACE:
        return None
    return (f"Session file {path} has little room to grow ({words}): when it fills, commits are refused "
            f"(DiskFull) and tried again for settings.disk_full_patience seconds, then the harness stops")


def _bytes(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"
