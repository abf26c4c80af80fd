"""The key of an encrypted PostgreSQL space (`durable.storage.sealing`, as for a session file):
`PostgresStorage(..., encryption_key=)` seals every body and attachment of its space with AES-GCM
under a key per space (its salt and key id in the `durable.meta` row `encryption:<n>:<space>`);
index columns stay plain. A space is encrypted when it is made (its first open with a key); a
space that holds rows and no key row is refused with a key (`WrongKey`: a space cannot be
encrypted afterwards, there is no rekey for PostgreSQL), as is an encrypted space without its key
or with another. Whoever reads the space's rows needs the key, which only the store takes: a
`durable.remote` client still puts inputs in the inbox (plain until the owner takes them), but
reading their answers from another process is `WrongKey`, and a worker (`durable worker`)
cannot take an encrypted space over.
"""

from __future__ import annotations

from typing import Any

from ...errors import WrongKey
from ..sealing import Sealer, new_meta, unlock
from .write import PostgresWrites


def meta_key(space: str) -> str:
    return f"encryption:{len(space)}:{space}"


def unlock_space(conn: Any, space: str, location: str, key: bytes | str | None) -> Sealer | None:
    """The sealer of `space` for `key` (None: a plain space), read on `conn` (the store's own,
    holding the lease); a space made now with a key records it in one transaction."""
    row = conn.execute("SELECT value FROM durable.meta WHERE key = %s", (meta_key(space),)).fetchone()
    if row is not None or key is None:
        return unlock(None if row is None else str(row[0]), key, location)
    held = conn.execute("SELECT EXISTS (SELECT 1 FROM durable.documents WHERE space = %s UNION ALL "
                        "SELECT 1 FROM durable.tasks WHERE space = %s UNION ALL "
                        "SELECT 1 FROM durable.submissions WHERE space = %s)", (space, space, space)).fetchone()[0]
    if held:
        raise WrongKey(f"The session {location} is not encrypted, and a space that holds rows cannot be encrypted "
                       f"afterwards: open it without a key; nothing was changed", location=location)
    value, sealer = new_meta(key)
    with conn.transaction():
        conn.execute("INSERT INTO durable.meta (key, value) VALUES (%s, %s)", (meta_key(space), value))
    return sealer


def read_attachments(conn: Any, w: PostgresWrites, hashes: list[str]) -> dict[str, bytes]:
    """The attachments of `w`'s space stored under `hashes` (or, encrypted, under their keyed
    ids: `Sealer.attachment_id`), by hash, their bytes opened."""
    space, sealer, location = w.lease.space, w.sealer, w.location
    keys = {sha: sha for sha in hashes} if sealer is None else sealer.attachment_ids(hashes)
    found = conn.execute("SELECT sha256, size, data FROM durable.attachments WHERE space = %s AND "
                         "sha256 = ANY(%s::text[])", (space, list(keys))).fetchall()
    return {keys[key]: bytes(data) if sealer is None else sealer.open_bytes(bytes(data), size, location)
            for key, size, data in found}


__all__ = ["meta_key", "read_attachments", "unlock_space"]
