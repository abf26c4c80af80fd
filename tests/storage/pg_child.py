"""A child process holding a PostgreSQL session space, driven line by line on stdin (for the lease
tests of test_postgres_leases).

Run as `python pg_child.py <dsn> <space> <lease_seconds>`. It prints `owner <owner id> <pid>`,
then answers each command with one flushed line:

- `open`: `opened <epoch>`, or `locked <message>` (SessionLocked);
- `commit <seq>`: commits a user entry of conversation "root" numbered <seq>: `committed <seq>`,
  or `<ErrorClass> <message>`;
- `exit`: closes the store (releasing the lease) and exits.
"""

from __future__ import annotations

import sys

import anyio
import anyio.to_thread

from durable.errors import DurableError
from durable.records import StoredEntry, UserEntry
from durable.storage import Batch, PostgresStorage


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def main(dsn: str, space: str, lease: float) -> None:
    store = PostgresStorage(dsn, space, lease_seconds=lease)
    say(f"owner {store.owner} {store._lease.pid}")
    while True:
        line = (await anyio.to_thread.run_sync(sys.stdin.readline)).split()
        if not line or line[0] == "exit":
            await store.close()
            return
        try:
            if line[0] == "open":
                await store.open()
                say(f"opened {store.epoch}")
            elif line[0] == "commit":
                seq = int(line[1])
                await store.commit(Batch(entries=[StoredEntry("root", seq, UserEntry(f"from the child {seq}"))]))
                say(f"committed {seq}")
        except DurableError as exc:
            say(f"{'locked' if type(exc).__name__ == 'SessionLocked' else type(exc).__name__} {exc}")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], float(sys.argv[3]), backend="trio")
