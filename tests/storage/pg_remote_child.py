"""A process that does not own a PostgreSQL space submitting into it (for test_postgres_remote).

Run as `python pg_remote_child.py <dsn> <space> <text>`: it submits `text` to conversation "root"
with `durable.remote.RemoteSpace`, prints `submitted <id>`, waits for it to settle and prints
`settled <repr of the status>`.
"""

from __future__ import annotations

import sys

import anyio

from durable.remote import RemoteSpace


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def main(dsn: str, space: str, text: str) -> None:
    async with RemoteSpace(dsn, space, poll_seconds=0.05) as remote:
        sid = await remote.submit(text)
        say(f"submitted {sid}")
        say(f"settled {await remote.wait(sid)!r}")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
