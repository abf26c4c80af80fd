"""Child processes for test_postgres_remote.

- `python pg_remote_child.py submit <dsn> <space> <text>`: a process that does not own the space
  submits `text` to conversation "root" with `durable.remote.RemoteSpace`, prints
  `submitted <id>`, waits for it to settle and prints `settled <repr of the status>`.
- `python pg_remote_child.py owner <dsn> <space> <point>`: a process that owns the space (lease
  1 s), resumed, prints `ready`; when it is about to write (`point` = before_commit) or has just
  written (after_commit) a commit while the space's inbox holds an input (the commit placing it),
  it prints `dying <point>` and kills itself with SIGKILL.
- `python pg_remote_child.py approval-owner <dsn> <space> <point> <log>`: the same owner, whose
  input "pay bob" calls `transfer` (approval=True, each execution appended to the file `log`);
  prints `waiting <call id>` once the call waits for approval, and dies as `owner` does around
  the commit that applies a decision from the inbox.
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


def dying_store(dsn: str, space: str, point: str) -> PostgresStorage:
    store = PostgresStorage(dsn, space, lease_seconds=1.0)
    armed = {"before_commit": False}

    def fault(where: str, conn: Any) -> None:
        if where == "before_commit":  # is this the commit that consumes the inbox row?
            armed["before_commit"] = bool(conn.execute(
                "SELECT count(*) FROM durable.inbox WHERE space = %s", (space,)).fetchone()[0])
        if where == point and armed["before_commit"]:
            say(f"dying {point}")
            os.kill(os.getpid(), signal.SIGKILL)

    store._writes.fault = fault
    return store


def transfer_tool(log: str) -> Any:
    import json

    import durable

    async def transfer(to: str, amount: int) -> str:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.write(fd, (json.dumps({"to": to, "amount": amount, "pid": os.getpid()}) + "\n").encode())
        os.close(fd)
        return f"sent {amount} to {to}"

    return durable.define_tool("transfer", "Send money", execute=transfer, approval=True)


async def approval_owner(dsn: str, space: str, point: str, log: str) -> None:
    from durable.models.faux import FauxModel, call

    store = dying_store(dsn, space, point)
    model = FauxModel([reply("", tool_calls=[call("transfer", {"to": "bob", "amount": 500}, id="c1")])])
    async with open_harness(store, model=model, tools=[transfer_tool(log)],
                            settings=Settings(check_integrity=False)) as h:
        await h.root.submit("pay bob")
        async for live in h.root.follow():
            if live.approvals:
                say(f"waiting {live.approvals[0].call_id}")
                await anyio.sleep_forever()


async def owner(dsn: str, space: str, point: str) -> None:
    from durable.models.faux import FauxModel

    store = dying_store(dsn, space, point)
    async with open_harness(store, model=FauxModel([reply("never")]), settings=Settings(check_integrity=False)) as h:
        await h.resume()
        say("ready")
        await anyio.sleep_forever()


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    anyio.run({"submit": submit, "owner": owner, "approval-owner": approval_owner}[mode], *args)
