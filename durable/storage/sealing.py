"""Encryption at rest of a session file's bodies (docs/spec.md §6): AES-256-GCM, keyed per file.

The user's key (any bytes or text) and a random salt kept in the file's `meta` row `encryption`
give the file key (HKDF-SHA256); its *key id* (a hash of it) is stored beside the salt, so a
wrong key is found before anything is read or written (`WrongKey`). Every body (tasks, entries,
submissions, live documents and the pieces of long texts) is stored as `enc1:<key id>:<base64 of
nonce + ciphertext + tag>`, an attachment's bytes as the same raw bytes, under a keyed id
(`Sealer.attachment_id`); index columns (ids, kinds, states, seqs, tokens) stay plain, so the
engine and every query work unchanged. A row carries its key id, so during a key rotation
(`durable.storage.sqlite.rekey`) rows of both keys are read: the file then also keeps each file
key sealed under the other (`previous`), and either user key opens it.

A long body is packed before it is sealed (`durable.storage.packing`). Bodies are opened where
rows are decoded (`durable.storage.rows`) through `plain(body, location)`, which finds the store's
`Sealer` by its location (registered while the store or a reader has the file open), then unpacks;
a body without the prefix is not sealed (a file made without a key). `opened` only opens (a rekey
seals a packed body again as it is). A piece of a long text is any text, never packed: it goes
through `opened_piece`, which opens it only in an encrypted file. Needs the `encryption` extra
(`cryptography`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import CorruptSession, MissingExtra, StorageError, WrongKey
from .joined import JoinedTexts
from .packing import unpack, unpack_all

PREFIX = "enc1:"
_ID = 16  # hex characters of a key id
_HEAD = len(PREFIX) + _ID + 1  # "enc1:<id>:"
_INFO = b"durable session file key v1"
OVERHEAD = _HEAD + 12 + 16
"""Bytes a sealed attachment takes beyond its plain size: the header, the nonce and the tag."""


def sealed_bytes(data: bytes, size: int) -> bool:
    """Whether an attachment's stored bytes (of plain `size`) are sealed."""
    return len(data) == size + OVERHEAD and data.startswith(PREFIX.encode())


def _aesgcm() -> Any:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError as exc:
        raise MissingExtra("Encryption at rest", "cryptography", "encryption", str(exc)) from exc
    return AESGCM


def derive(user_key: bytes | str, salt: bytes) -> tuple[bytes, str]:
    """The file key for `user_key` and `salt` (HKDF-SHA256), and its key id."""
    if isinstance(user_key, str):
        user_key = user_key.encode()
    if not user_key:
        raise ValueError("An encryption key must not be empty")
    prk = _hmac(salt, user_key)  # HKDF-extract
    key = _hmac(prk, _INFO + b"\x01")  # HKDF-expand, one block: 32 bytes
    return key, hashlib.sha256(b"durable key id\x00" + key).hexdigest()[:_ID]


def _hmac(key: bytes, data: bytes) -> bytes:
    import hmac

    return hmac.new(key, data, "sha256").digest()


class Sealer:
    """The file keys of one session file by key id; `current` seals new bodies."""

    def __init__(self, keys: dict[str, bytes], current: str) -> None:
        cls = _aesgcm()
        self.keys = dict(keys)
        self._ciphers = {kid: cls(key) for kid, key in keys.items()}
        self.current = current
        self._seal = self._ciphers[current].encrypt
        self._head = f"{PREFIX}{current}:"
        self._ids: dict[str, bytes] = {}  # the key of attachment ids, by key id

    def seal(self, text: str) -> str:
        nonce = os.urandom(12)
        return self._head + base64.b64encode(nonce + self._seal(nonce, text.encode(), None)).decode()

    def sealed_with_current(self, body: str) -> bool:
        return body.startswith(self._head)

    def open(self, body: str, location: str) -> str:
        cipher = self._ciphers.get(body[len(PREFIX):_HEAD - 1])
        if cipher is None:
            raise WrongKey(f"A row of {location} is sealed with key id {body[len(PREFIX):_HEAD - 1]!r}, which this "
                           f"key does not open", location=location)
        try:
            raw = base64.b64decode(body[_HEAD:])
            return str(cipher.decrypt(raw[:12], raw[12:], None).decode())
        except Exception as exc:  # noqa: BLE001 - a damaged or forged row: said, naming the file
            raise CorruptSession(f"An encrypted row of {location} does not open: it is damaged "
                                 f"({type(exc).__name__})", location=location) from None

    def seal_bytes(self, data: bytes) -> bytes:
        """An attachment's bytes sealed: `enc1:<key id>:` + nonce + ciphertext + tag (raw bytes:
        `OVERHEAD` bytes longer than `data`)."""
        nonce = os.urandom(12)
        return self._head.encode() + nonce + bytes(self._seal(nonce, data, None))

    def open_bytes(self, data: bytes, size: int, location: str) -> bytes:
        """An attachment's stored bytes as plain bytes (`size`: its plain size; a row of that size
        is plain: written before the file was encrypted, during its first rekey)."""
        if not sealed_bytes(data, size):
            return data
        kid = data[len(PREFIX):_HEAD - 1].decode("ascii", "replace")
        cipher = self._ciphers.get(kid)
        if cipher is None:
            raise WrongKey(f"An attachment of {location} is sealed with key id {kid!r}, which this key does not "
                           f"open", location=location)
        try:
            return bytes(cipher.decrypt(data[_HEAD:_HEAD + 12], data[_HEAD + 12:], None))
        except Exception as exc:  # noqa: BLE001 - a damaged or forged row: said, naming the file
            raise CorruptSession(f"An encrypted attachment of {location} does not open: it is damaged "
                                 f"({type(exc).__name__})", location=location) from None

    def bytes_sealed_with_current(self, head: bytes, size: int, length: int) -> bool:
        """Whether an attachment whose stored bytes begin with `head` (at least `_HEAD` bytes) and
        are `length` long is sealed with the current key."""
        return length == size + OVERHEAD and head.startswith(self._head.encode())

    def attachment_id(self, sha256: str, key_id: str | None = None) -> str:
        """The key an attachment is stored under in an encrypted file: HMAC-SHA256 of its sha256
        under a key derived from the file key `key_id` (the current one by default), hex. Its
        sha256 would let anyone holding a candidate file confirm that the session holds it; the
        keyed id tells nothing without the key. What stays visible: which attachments of the file
        are the same bytes (stored once), their sizes and media types."""
        kid = key_id or self.current
        ids = self._ids.get(kid)
        if ids is None:
            ids = self._ids[kid] = _hmac(self.keys[kid], b"durable attachment id")
        return _hmac(ids, sha256.encode()).hex()

    def attachment_ids(self, hashes: Iterable[str]) -> dict[str, str]:
        """Every key `hashes` may be stored under (the keyed id under each file key, and the
        hash itself: a row written before the file was encrypted), each with its hash."""
        out: dict[str, str] = {}
        for sha in hashes:
            out[sha] = sha
            for kid in self.keys:
                out[self.attachment_id(sha, kid)] = sha
        return out

    def wrap(self, key: bytes) -> str:
        """`key` sealed under the current file key (kept in `meta` during a rotation)."""
        return self.seal(base64.b64encode(key).decode())


_BY_LOCATION: dict[str, Sealer] = {}


def register(location: str, sealer: Sealer | None) -> None:
    """The sealer of the file at `location` while it is open (None: forget it)."""
    if sealer is None:
        _BY_LOCATION.pop(location, None)
    else:
        _BY_LOCATION[location] = sealer


def registered(location: str) -> bool:
    return location in _BY_LOCATION


def sealer_of(location: str) -> Sealer | None:
    """The sealer registered for the file at `location` (None: a plain file, or not open)."""
    return _BY_LOCATION.get(location)


def attachment_hash(key: str, size: int, data: bytes, location: str) -> str:
    """The sha256 of an attachment stored under `key` with `data` (its keyed id and sealed bytes
    in an encrypted file: opened and hashed)."""
    if not sealed_bytes(data, size):
        return key
    sealer = _BY_LOCATION.get(location)
    if sealer is None:
        raise WrongKey(f"Session file {location} is encrypted: open it with its key (encryption_key=..., "
                       f"or --key-file)", location=location)
    return hashlib.sha256(sealer.open_bytes(data, size, location)).hexdigest()


def plain(body: str, location: str) -> str:
    """A stored JSON body as its JSON text: opened if sealed (`WrongKey` when no key of the file
    is known), then unpacked if packed (`durable.storage.packing`; left as it is if damaged)."""
    return unpack(opened(body, location))


def opened(body: str, location: str) -> str:
    """A stored JSON body opened if sealed, still packed if it is (what a rekey seals again)."""
    if not body.startswith(PREFIX):
        return body
    sealer = _BY_LOCATION.get(location)
    if sealer is None:
        raise WrongKey(f"Session file {location} is encrypted: open it with its key (encryption_key=..., "
                       f"or --key-file)", location=location)
    return sealer.open(body, location)


def opened_piece(piece: str, location: str) -> str:
    """A stored piece of a long text (`durable.storage.texts`) as plain text. Unlike a JSON body, a
    piece is any text, and a plain file's piece may start with the prefix itself: it is opened
    only when the file is encrypted and it is sealed with one of the file's keys (a piece written
    before the file was first encrypted is plain)."""
    sealer = _BY_LOCATION.get(location)
    if sealer is None or not piece.startswith(PREFIX) or piece[len(PREFIX):_HEAD - 1] not in sealer.keys \
            or piece[_HEAD - 1:_HEAD] != ":":
        return piece
    return sealer.open(piece, location)


def opened_row(table: str, body: str, location: str) -> str:
    """A stored body of `table` as plain text: a piece of a long text (`texts`) as `opened_piece`
    opens it (any text), any other as a JSON body (`plain`)."""
    return opened_piece(body, location) if table == "texts" else plain(body, location)


def plain_all(bodies: Sequence[str], location: str) -> Sequence[str]:
    """`plain` of every body; the same sequence when none is sealed nor packed. Joined texts (a
    context read joined: `JoinedTexts`) are not split to look at their first text (issue 29):
    their reader unpacked each part (`durable.storage.packing.unpack_joined`)."""
    if isinstance(bodies, JoinedTexts):
        if location not in _BY_LOCATION and not bodies.first_starts_with(PREFIX):
            return bodies
    elif location not in _BY_LOCATION and not any(b.startswith(PREFIX) for b in bodies[:1]):
        return unpack_all(bodies)
    return [plain(b, location) for b in bodies]


# --------------------------------------------------------------------------- the meta row


def new_meta(user_key: bytes | str) -> tuple[str, Sealer]:
    """The `meta` value of a file encrypted from now on under `user_key`, and its sealer."""
    salt = os.urandom(16)
    key, kid = derive(user_key, salt)
    return json.dumps({"cipher": "AES-256-GCM", "salt": salt.hex(), "key_id": kid}), Sealer({kid: key}, kid)


def unlock(meta: str | None, user_key: bytes | str | None, location: str) -> Sealer | None:
    """The sealer of a file whose `meta` row `encryption` is `meta` (None: a plain file), for
    `user_key`; `WrongKey` when the file is encrypted and the key is missing or another one."""
    if meta is None:
        return None
    if user_key is None:
        raise WrongKey(f"Session file {location} is encrypted: open it with its key (encryption_key=..., or "
                       f"--key-file); nothing was changed", location=location)
    found = json.loads(meta)
    key, kid = derive(user_key, bytes.fromhex(found["salt"]))
    previous = found.get("previous")
    if kid == found["key_id"]:
        keys = {kid: key}
        if previous is not None:
            keys[previous["key_id"]] = _unwrap(Sealer(keys, kid), previous["key"], location)
        return Sealer(keys, kid)
    if previous is not None:
        old, old_id = derive(user_key, bytes.fromhex(previous["salt"]))
        if old_id == previous["key_id"]:
            new = _unwrap(Sealer({old_id: old}, old_id), previous["next"], location)
            return Sealer({old_id: old, found["key_id"]: new}, found["key_id"])
    raise WrongKey(f"Session file {location} is encrypted with another key (key id {found['key_id']}, this key's "
                   f"is {kid}); nothing was changed", location=location)


def _unwrap(sealer: Sealer, wrapped: str, location: str) -> bytes:
    return base64.b64decode(sealer.open(wrapped, location))


def rotated_meta(meta: str, sealer: Sealer, new_user_key: bytes | str) -> tuple[str, Sealer]:
    """The `meta` value while rotating from `sealer`'s current key to `new_user_key` (each file key
    sealed under the other), and the sealer of both, sealing with the new one."""
    found = json.loads(meta)
    old_id = found["key_id"]
    old = sealer.keys[old_id]
    salt = os.urandom(16)
    new, new_id = derive(new_user_key, salt)
    both = Sealer({old_id: old, new_id: new}, new_id)
    previous = {"salt": found["salt"], "key_id": old_id, "key": both.wrap(old),
                "next": Sealer({old_id: old}, old_id).wrap(new)}
    value = {"cipher": "AES-256-GCM", "salt": salt.hex(), "key_id": new_id, "previous": previous}
    return json.dumps(value), both


def current_key(meta: str, user_key: bytes | str, location: str) -> bool:
    """Whether `user_key` is the file's current key. `StorageError` when it is not and a rotation
    to another key is under way (it must be finished first, with its own new key)."""
    found = json.loads(meta)
    if derive(user_key, bytes.fromhex(found["salt"]))[1] == found["key_id"]:
        return True
    if "previous" in found:
        raise StorageError(f"A key rotation of {location} to another key (key id {found['key_id']}) is under way: "
                           f"run it again with that key to finish it first", location=location)
    return False


def finished_meta(meta: str) -> str:
    """The `meta` value once every row is sealed with the current key (the previous one dropped)."""
    found = json.loads(meta)
    found.pop("previous", None)
    return json.dumps(found)
