"""Keys of encrypted session files on the command line (`durable.storage.sealing`): a key file's
bytes (`--key-file`, a trailing newline ignored), a wrong key's error naming the key file, and
`durable rekey`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def naming_key_file(path: str | None) -> Iterator[None]:
    """A `WrongKey` raised inside names the key file too (`--key-file PATH`); the session file is
    named by the error itself."""
    from ..errors import WrongKey

    try:
        yield
    except WrongKey as exc:
        if path is None:
            raise
        raise type(exc)(f"{exc} (the key given: --key-file {path})", location=exc.location) from exc


def read_key(path: str | None) -> bytes | None:
    """The key in the file at `path` (None: no key given)."""
    if path is None:
        return None
    with open(path, "rb") as f:
        key = f.read().rstrip(b"\r\n")
    if not key:
        raise ValueError(f"The key file {path} is empty")
    return key


def rekey_file(path: str, old: bytes | None, new: bytes | None) -> str:
    """Encrypt the session file at `path` with `new` (it opens with `old`, or either key when a
    rotation was cut off); the line to print."""
    import anyio

    from .. import tasks  # noqa: F401 - the task kinds, registered to read the live tasks at open
    from ..storage.sqlite.reader import check_file
    from ..storage.sqlite.store import SQLiteStorage

    check_file(path)
    assert new is not None

    async def run() -> int:
        storage = SQLiteStorage(path, encryption_key=old)
        await storage.open()
        try:
            return await storage.rekey(new)
        finally:
            await storage.close()

    rows = anyio.run(run, backend="trio")
    return f"{path} is encrypted with the new key ({rows} rows sealed again)"
