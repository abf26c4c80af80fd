"""Appends to partial texts kept beside a session file (`<file>-partials`), so that a streamed
answer or tool output costs about its own length on disk, not a WAL frame a flush.

A lazy commit that only appends to long texts kept apart (`durable.storage.texts`: partial answers,
reasoning, tool output) is no transaction: one record appended here (one `write`, never fsynced).
A lazy transaction adds, before its COMMIT, the texts of the streams it makes (numbers never made
again) and what the streams it writes grew (a tool's once-a-second stamp), the latter in a record
tagged with the number it writes to `meta.lazy` (`TAG`), counted only once that commits
(`committed`; cut off again if it rolls back; after an open that found records, gains go in the
table until the next barrier, which folds what the table lacks (`HeldTexts.fold`) and empties
the file, as a clean close does). So file and database hold every commit made: a kill loses
nothing; a power cut may lose appends since the last barrier, as lazy commits (a text may then be
a little ahead of, or behind, the rest of its row).

Format: a header (magic, the file's `meta.session`), then records: payload length (top bit: a
new deflate stream starts here), CRC-32 of the payload, the payload (a slice of one raw deflate
stream ended by a sync flush), decompressed: appends (stream, length before, UTF-8 gained), each
a varint. An open reads the records up to the first torn or damaged one, cuts the file there,
and hands them to `HeldTexts.recover`, which applies only those that continue a text exactly as
held (never one twice; no new stream reuses a number the file names).
"""

from __future__ import annotations

import os
import sqlite3
import struct
import zlib
from collections.abc import Iterable

from ...errors import CorruptSession
from ..texts import Append
from .files import OPEN_FLAGS, check_ours, file_error

SUFFIX = "-partials"
TAG = 0
_HEADER = struct.Struct("<II")
_RESTART = 1 << 31
_LEVEL = 1  # fast: level 6 is ~3% smaller at a flush a delta, but costs CPU the flushes did not cost before


def _magic(session: str) -> bytes:
    return b"durable-partials 1 %s\n" % session.encode()


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, i
        shift += 7


def encode(appends: Iterable[tuple[int, int, bytes]]) -> bytes:
    """A record's payload (before compression): (stream, length before, UTF-8 gained) each."""
    return b"".join(_varint(number) + _varint(before) + _varint(len(data)) + data for number, before, data in appends)


def decode(payload: bytes) -> list[Append]:
    found: list[Append] = []
    i = 0
    while i < len(payload):
        number, i = _read_varint(payload, i)
        before, i = _read_varint(payload, i)
        size, i = _read_varint(payload, i)
        found.append((number, before, payload[i:i + size].decode()))
        i += size
    return found


def parse(data: bytes, session: str) -> tuple[list[list[Append]], int]:
    """The records of a file's content up to the first torn or damaged one, and where that ends
    (0: no header of this session, nothing to keep)."""
    magic = _magic(session)
    if not data.startswith(magic):
        return [], 0
    records: list[list[Append]] = []
    end = i = len(magic)
    inflate = zlib.decompressobj(-15)
    while i + _HEADER.size <= len(data):
        size, crc = _HEADER.unpack_from(data, i)
        chunk = data[i + _HEADER.size:i + _HEADER.size + (size & ~_RESTART)]
        if len(chunk) != size & ~_RESTART or zlib.crc32(chunk) != crc:
            break
        if size & _RESTART:
            inflate = zlib.decompressobj(-15)
        try:
            records.append(decode(inflate.decompress(chunk)))
        except (zlib.error, ValueError, IndexError, struct.error):
            break
        i = end = i + _HEADER.size + len(chunk)
    return records, end


def lazy_tag(conn: sqlite3.Connection, path: str) -> int:
    """The file's `meta.lazy` (0 when absent): the tag of the last tagged record whose transaction committed."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'lazy'").fetchone()
    try:
        return int(row[0]) if row else 0
    except ValueError:
        raise CorruptSession(f"Session file {path} is damaged: its meta.lazy {row[0]!r} is not a number",
                             location=path) from None


def committed(records: Iterable[list[Append]], lazy: int) -> list[list[Append]]:
    """The records of `records` that count, the file's `meta.lazy` being `lazy`: untagged ones,
    and those whose first append is `(TAG, k, "")` with k <= lazy (their transaction committed;
    stream numbers start at 1), without it."""
    return [r[1:] if r and r[0][0] == TAG else r for r in records if not r or r[0][0] != TAG or r[0][1] <= lazy]


def counted(data: bytes, conn: sqlite3.Connection, path: str) -> list[list[Append]]:
    """The records of a side file's content `data` that count, read against the session file's
    `meta` on `conn` (its session id, its `meta.lazy`) in the reader's snapshot."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'session'").fetchone()
    return committed(parse(data, row[0] if row else "")[0], lazy_tag(conn, path))


class PartialsFile:
    """The open side file of one session file (see the module docstring); writer thread only."""

    def __init__(self, path: str, session: str) -> None:
        self.name = path + SUFFIX
        self.session = session
        try:
            fd = os.open(self.name, os.O_RDWR | os.O_CREAT | OPEN_FLAGS, 0o600)
        except OSError as exc:
            raise file_error(exc, self.name, path) from exc
        try:
            check_ours(os.fstat(fd), self.name, path)
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd
        self._size = 0
        self._deflate: zlib._Compress | None = None

    def recover(self) -> list[list[Append]]:
        """The records the file holds (see `parse`); the file is cut after the last whole one,
        and the next record starts a new deflate stream."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        data = os.pread(self._fd, size, 0) if size else b""
        records, end = parse(data, self.session)
        if end != size:
            os.ftruncate(self._fd, end)
        self._size = end
        return records

    def append(self, appends: Iterable[tuple[int, int, bytes]]) -> None:
        """Append one record (one lazy commit's appends). Raises `OSError` (the disk is full)."""
        assert self._fd is not None
        head = b""
        restart = self._deflate is None
        if restart:
            self._deflate = zlib.compressobj(_LEVEL, zlib.DEFLATED, -15)
            if self._size == 0:
                head = _magic(self.session)
        assert self._deflate is not None
        chunk = self._deflate.compress(encode(appends)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)
        data = head + _HEADER.pack(len(chunk) | (_RESTART if restart else 0), zlib.crc32(chunk)) + chunk
        try:
            os.lseek(self._fd, self._size, os.SEEK_SET)
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
        except OSError:
            self._deflate = None  # a part may be there: cut off, and the next record starts over
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass  # a torn record ends what an open reads: the next one restarts after `_size`
            raise
        self._size += len(data)

    @property
    def size(self) -> int:
        return self._size

    def cut(self, size: int) -> None:
        """Cut the file back to `size` (what it was before a record, undone); the next record
        starts a new deflate stream. Raises `OSError`."""
        assert self._fd is not None
        self._deflate = None
        os.ftruncate(self._fd, size)
        self._size = size

    def reset(self) -> None:
        """Empty the file: the database holds everything it held."""
        if self._size and self._fd is not None:
            os.ftruncate(self._fd, 0)
            self._size = 0
            self._deflate = None

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        empty = self._size == 0
        os.close(fd)
        if empty:  # nothing to recover: no file left beside the session
            try:
                os.unlink(self.name)
            except OSError:
                pass
