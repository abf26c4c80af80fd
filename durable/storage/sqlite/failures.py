"""What a failed SQLite statement means to the caller of a session file's store: `translate` for
a statement of a commit (or any), `read_error` for a read. Every error names the file."""

from __future__ import annotations

import sqlite3

from ...errors import CommitFailed, CommitRefused, CorruptSession, DiskFull, SessionReadOnly, StorageError
from . import space


def translate(exc: Exception, what: str, path: str, *, exhausted: bool | None = None) -> StorageError:
    """The error a caller gets for a statement that failed: `what` ("A commit to", "A read
    from") the file at `path`, and why. `exhausted`: whether the file could hardly grow when the
    statement failed (None: look now; `space.exhausted`)."""
    if not isinstance(exc, sqlite3.Error):  # a value the driver cannot bind (int > 64 bits)
        return CommitRefused(f"{what} {path} was refused and rolled back: {exc}", location=path)
    code = getattr(exc, "sqlite_errorname", "")
    # A file at the process's size limit is an I/O error to SQLite (EFBIG after a short write).
    if code.startswith("SQLITE_IOERR") and exhausted is None:
        exhausted = space.exhausted(path)
    if code.startswith("SQLITE_FULL") or "full" in str(exc).lower() or (code.startswith("SQLITE_IOERR") and exhausted):
        return DiskFull(f"{what} {path} was rolled back: the disk or the file's size limit is full ({exc}; "
                        f"{space.left(path)[1]})", location=path)
    if code.startswith("SQLITE_READONLY"):
        return SessionReadOnly(f"{what} {path} was refused: the file or its folder is read-only "
                               f"for this process ({exc})", location=path)
    if code.startswith("SQLITE_CORRUPT") or code.startswith("SQLITE_NOTADB"):
        return CorruptSession(f"Session file {path} is damaged ({exc})", location=path)
    if isinstance(exc, sqlite3.IntegrityError):
        return CommitRefused(f"{what} {path} was refused and rolled back: {exc}", location=path)
    return CommitFailed(f"{what} {path} failed and was rolled back ({exc}{f'; {code}' if code else ''})",
                        location=path)


def read_error(exc: sqlite3.Error, table: str, path: str) -> StorageError:
    """The error a caller gets for a read of `table` that failed: never `CommitFailed` (nothing
    was being written). A read fails for damage as a rule (a malformed page, text that is not
    UTF-8, a damaged schema): `CorruptSession` naming the file and the table; an I/O error or a
    lack of memory, which may pass, is a plain `StorageError`."""
    code = getattr(exc, "sqlite_errorname", "")
    if code.startswith(("SQLITE_IOERR", "SQLITE_NOMEM", "SQLITE_FULL")):
        return StorageError(f"A read of the {table} table of session file {path} failed ({exc})", location=path)
    return CorruptSession(f"Session file {path} is damaged: its {table} table cannot be read ({exc})",
                          location=path)
