"""Session stores: the protocol and its SQLite, PostgreSQL and in-memory backends.

Layout: `protocol` (what the engine needs), `rows` (the rows every store keeps, encoded and
decoded), `memory`, `writer` (the SQL stores' writer thread) and `group_commit` (their one
group-commit policy), then one folder per SQL backend, `sqlite/` and `postgres/`. The backends
import anyio; they load on first use, so that reading a file (`durable.storage.sqlite.reader`,
what `durable inspect` needs) does not import the event-loop libraries."""

from typing import TYPE_CHECKING, Any

_LAZY = {
    "MemoryStorage": ".memory",
    **dict.fromkeys(("Batch", "ConversationState", "EntryCopy", "Opened", "Storage"), ".protocol"),
    "SQLiteStorage": ".sqlite.store",
    "PostgresStorage": ".postgres.store",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'durable.storage' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from .memory import MemoryStorage
    from .postgres.store import PostgresStorage
    from .protocol import Batch, ConversationState, EntryCopy, Opened, Storage
    from .sqlite.store import SQLiteStorage

__all__ = ["Batch", "ConversationState", "EntryCopy", "MemoryStorage", "Opened", "PostgresStorage", "SQLiteStorage",
           "Storage"]
