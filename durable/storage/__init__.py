"""Session stores: the protocol and its SQLite and in-memory backends."""

from .memory import MemoryStorage
from .protocol import Batch, ConversationState, Opened, Storage
from .sqlite import SQLiteStorage

__all__ = ["Batch", "ConversationState", "MemoryStorage", "Opened", "SQLiteStorage", "Storage"]
