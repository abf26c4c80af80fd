"""The PostgreSQL backend: a session space on a server (`store.PostgresStorage`, public as
`durable.storage.PostgresStorage`), owned by lease (`lease`), its schema and migrations
(`schema`), its side of the group-commit policy (`write`) and its use of psycopg (`driver`).
Nothing here is imported until a PostgreSQL store is made: psycopg is an optional extra.
"""
