"""Session stores: the protocol and its SQLite, PostgreSQL and in-memory backends.

The backends import anyio; they load on first use, so that reading `durable.storage.schema` or
`durable.storage._lock` (what `durable inspect` needs) does not import the event-loop libraries."""

from typing import TYPE_CHECKING, Any

_LAZY = {
    "MemoryStorage": ".memory",
    **dict.fromkeys(("Batch", "ConversationState", "Opened", "Storage"), ".protocol"),
    "SQLiteStorage": ".sqlite",
    "PostgresStorage": ".postgres",
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
    from .postgres import PostgresStorage
    from .protocol import Batch, ConversationState, Opened, Storage
    from .sqlite import SQLiteStorage

__all__ = ["Batch", "ConversationState", "MemoryStorage", "Opened", "PostgresStorage", "SQLiteStorage", "Storage"]
