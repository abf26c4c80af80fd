"""Child processes for test_postgres_remote.

- `python pg_remote_child.py submit <dsn> <space> <text>`: a process that does not own the space
  submits `text` to conversation "root" with `durable.remote.RemoteSpace`, prints
  `submitted <id>`, waits for it to settle and prints `settled <repr of the status>`.
- `python pg_remote_child.py owner <dsn> <space> <point>`: a process that owns the space (lease
  1 s), resumed, prints `ready`; when it is about to write (`point` = before_commit) or has just
  written (after_commit) a commit while the space's inbox holds an input (the commit placing it),
  it prints `dying <point>` and kills itself with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio

from durable import open_harness
from durable.models.faux import reply
from durable.remote import RemoteSpace
from durable.settings import Settings
from durable.storage import PostgresStorage


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def submit(dsn: str, space: str, text: str) -> None:
    async with RemoteSpace(dsn, space, poll_seconds=0.05) as remote:
        sid = await remote.submit(text)
        say(f"submitted {sid}")
        say(f"settled {await remote.wait(sid)!r}")


async def owner(dsn: str, space: str, point: str) -> None:
    from durable.models.faux import FauxModel

    store = PostgresStorage(dsn, space, lease_seconds=1.0)
    armed = {"before_commit": False}

    def fault(where: str, conn: Any) -> None:
        if where == "before_commit":  # is this the commit that places the inbox input?
            armed["before_commit"] = bool(conn.execute(
                "SELECT count(*) FROM durable.inbox WHERE space = %s", (space,)).fetchone()[0])
        if where == point and armed["before_commit"]:
            say(f"dying {point}")
            os.kill(os.getpid(), signal.SIGKILL)

    store._writes.fault = fault
    async with open_harness(store, model=FauxModel([reply("never")]), settings=Settings(check_integrity=False)) as h:
        await h.resume()
        say("ready")
        await anyio.sleep_forever()


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    anyio.run(submit if mode == "submit" else owner, *args)
