"""The key of an encrypted session file (`durable.storage.sealing`): checked before the file is
written (`unlock_file`, read-only), recorded when a file becomes encrypted (`start`), and rotated
in bounded commits (`begin_rekey`, `rekey_some`, `end_rekey`) on the store's writer thread.

A rotation first records the new key beside the old one (each file key sealed under the other,
so either user key opens the file meanwhile), then seals again, a few hundred rows a commit,
every body and attachment not yet sealed with the new key (a plain file's rows too; an
attachment also moves to its id under the new key), then drops the old key. A
kill at any point leaves a file that opens with either key; running the rotation again finishes
it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from typing import Any

from ...errors import WrongKey
from ..sealing import OVERHEAD, Sealer, current_key, finished_meta, new_meta, opened, opened_piece, rotated_meta, unlock
from .failures import translate
from .opening import SECURE_DELETE
from .write import SQLiteWrites

_META = "SELECT value FROM meta WHERE key = 'encryption'"
_SET = "INSERT INTO meta (key, value) VALUES ('encryption', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
# (table, key columns, body column) of every sealed body
_BODIES = (("tasks", "id"), ("submissions", "id"), ("documents", "conversation_id"), ("texts", "id"),
           ("entries", "conversation_id, seq"), ("inbox", "id"))  # a console's decision waiting is sealed too


def stored_meta(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute(_META).fetchone()
    except (sqlite3.DatabaseError, UnicodeDecodeError):  # no meta table, not SQLite, or damaged: the open says
        return None
    return None if row is None else str(row[0])


def unlock_file(path: str, ro: sqlite3.Connection | None, key: bytes | str | None) -> Sealer | None:
    """The sealer of the locked file at `path` for `key` (None: a plain or new file), read
    through `ro` (`opening.look`; None: the file is empty), without writing; `WrongKey` when it
    is encrypted and the key is missing or another one."""
    if ro is None:
        return None
    meta = stored_meta(ro)
    if meta is None and key is not None and _is_session(ro):
        raise WrongKey(f"Session file {path} is not encrypted: encrypt it with `durable rekey {path} "
                       f"--new-key-file KEY` (or open it without a key); nothing was changed", location=path)
    return unlock(meta, key, path)


def _is_session(conn: sqlite3.Connection) -> bool:
    try:
        return conn.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone() is not None
    except (sqlite3.DatabaseError, UnicodeDecodeError):
        return False


def start(w: SQLiteWrites, key: bytes | str) -> Sealer:
    """Record that the file is encrypted from now on under `key` (one commit)."""
    value, sealer = new_meta(key)
    _commit(w, [(_SET, (value,))])
    return sealer


def begin_rekey(w: SQLiteWrites, new_key: bytes | str) -> Sealer:
    """Record the new key beside the current one (one commit); new bodies are sealed with it.
    Until `end_rekey`, what a commit overwrites is zeroed (`secure_delete`): no plain text of a
    file encrypted for the first time stays in its free space."""
    conn = w._conn()
    conn.execute("PRAGMA secure_delete = ON")
    meta = stored_meta(conn)
    if meta is None:  # a plain file becomes encrypted: its rows are sealed as for a rotation
        return start(w, new_key)
    assert w.sealer is not None
    if current_key(meta, new_key, w.path):  # a rotation to this key cut off: go on with it
        return w.sealer
    value, both = rotated_meta(meta, w.sealer, new_key)
    _commit(w, [(_SET, (value,))])
    return both


def rekey_some(w: SQLiteWrites, limit: int, after: dict[str, tuple[object, ...]]) -> int:
    """One commit: up to `limit` bodies not sealed with the current key sealed again with it, in
    key order from where the last step stopped (`after`, by table). Returns how many (0: done)."""
    conn, sealer, path = w._conn(), w.sealer, w.path
    assert sealer is not None
    todo: list[tuple[str, list[tuple[object, ...]]]] = []
    left = limit
    for table, keys in _BODIES:
        if left <= 0:
            break
        cols = keys.split(", ")
        start_at = after.get(table)
        where = f"WHERE ({keys}) > ({', '.join('?' * len(cols))})" if start_at else ""
        found = []
        # A piece is any text; a body is opened only: one packed stays packed (`storage.packing`).
        opening = opened_piece if table == "texts" else opened
        cursor = conn.execute(f"SELECT {keys}, body FROM {table} {where} ORDER BY {keys}", start_at or ())
        try:
            for row in cursor:
                *key, body = row
                after[table] = tuple(key)
                if not sealer.sealed_with_current(body):
                    found.append((sealer.seal(opening(body, path)), *key))
                    if len(found) >= left:
                        break
        finally:
            cursor.close()
        left -= len(found)
        if found:
            match = " AND ".join(f"{c} = ?" for c in cols)
            todo.append((f"UPDATE {table} SET body = ? WHERE {match}", found))
    if left > 0:
        left -= _attachments(conn, sealer, path, left, after, todo)
    if todo:
        _commit(w, todo, many=True)
    return limit - left


_BYTES_PER_COMMIT = 32 << 20
"""Attachment bytes a rotation seals again in one commit at most (one attachment at least)."""


def _attachments(conn: sqlite3.Connection, sealer: Sealer, path: str, limit: int,
                 after: dict[str, tuple[object, ...]], todo: list[tuple[str, list[tuple[object, ...]]]]) -> int:
    """Up to `limit` attachments not sealed with the current key, opened and sealed again under
    their id for it (`Sealer.attachment_id`: the id changes with the key, so the row is put again
    under its new id and its old row deleted); adds the statements to `todo`. Returns how many."""
    start_at = after.get("attachments")
    cursor = conn.execute("SELECT sha256, size, length(data), substr(data, 1, ?) FROM attachments "
                          f"{'WHERE sha256 > ?' if start_at else ''} ORDER BY sha256",
                          (OVERHEAD, *(start_at or ())))
    puts: list[tuple[object, ...]] = []
    gone: list[tuple[object, ...]] = []
    total = 0
    try:
        for key, size, length, head in cursor:
            after["attachments"] = (key,)
            if sealer.bytes_sealed_with_current(head, size, length):
                continue
            media_type, data = conn.execute("SELECT media_type, data FROM attachments WHERE sha256 = ?",
                                            (key,)).fetchone()
            data = sealer.open_bytes(data, size, path)
            new = sealer.attachment_id(hashlib.sha256(data).hexdigest())
            puts.append((new, media_type, size, sealer.seal_bytes(data)))
            gone.append((key,))
            total += size
            if len(puts) >= limit or total >= _BYTES_PER_COMMIT:
                break
    finally:
        cursor.close()
    if puts:
        todo.append(("INSERT OR IGNORE INTO attachments (sha256, media_type, size, data) VALUES (?,?,?,?)", puts))
        todo.append(("DELETE FROM attachments WHERE sha256 = ?", gone))
    return len(puts)


def end_rekey(w: SQLiteWrites) -> None:
    """Every body is sealed with the current key: drop the previous one (one commit)."""
    conn = w._conn()
    meta = stored_meta(conn)
    if meta is not None:
        _commit(w, [(_SET, (finished_meta(meta),))])
    conn.execute(f"PRAGMA secure_delete = {SECURE_DELETE}")
    try:  # the WAL's copies of the pages as they were go too
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error as exc:
        raise translate(exc, "A key change of", w.path) from exc


def _commit(w: SQLiteWrites, statements: Sequence[tuple[str, Any]], *, many: bool = False) -> None:
    conn = w._conn()
    w.begin(True)
    try:
        for sql, args in statements:
            if many:
                conn.executemany(sql, args)
            else:
                conn.execute(sql, args)
        w.commit()
    except BaseException as exc:
        w.rollback(exc)
        if isinstance(exc, sqlite3.Error):
            raise translate(exc, "A key change of", w.path) from exc
        raise
