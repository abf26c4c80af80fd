"""The SQLite backend: a session file on disk (`store.SQLiteStorage`, public as
`durable.storage.SQLiteStorage`), its ownership (`lock`) and file safety (`files`), opening and
migrating it (`opening`, `schema`), its side of the group-commit policy (`write`), the read of a
model context (`context`), and the read-only reader `durable inspect` uses (`reader`, which
imports no event-loop library: this package's `__init__` imports nothing).
"""
