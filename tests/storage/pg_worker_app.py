"""The application of the worker process tests (test_postgres_workers) and of benchmarks/postgres.py.

`make_app()` is a `durable.worker.WorkerApp`: a faux model that answers the input "work" with
`STEPS` tool calls of `step`, one a request, then "done"; `step` is a safe tool that appends one
line `<pid> <space> <n> <attempt>` (attempt: the task's restarts + 1, so a run
after a takeover that charged it once says 2) to `$DURABLE_TEST_CALLS` (if set) when it starts, prints
`tool started <space> <n>` on stdout, and, when `$DURABLE_TEST_HANG` is "1", then hangs (until
the process is killed).

As a script, `python pg_worker_app.py host <dsn> <space> <lease>` is a host: it opens the space,
submits "work", prints `submitted <id>`, and waits for the answer (printing `answered <id>`), or,
its lease lost, prints `lost <message>` and, when its clean close could not write either,
`closed without writing`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio

from durable.tools import ToolApi, ToolContext, define_tool
from durable.errors import LockLost
from durable.models.faux import call, reply
from durable.settings import Settings
from durable.testing.scripts import by_input, turn_of
from durable.worker import WorkerApp

STEPS = int(os.environ.get("DURABLE_TEST_STEPS", "1"))


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def make_app() -> WorkerApp:
    calls = os.environ.get("DURABLE_TEST_CALLS")
    hang = os.environ.get("DURABLE_TEST_HANG") == "1"

    async def step(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> str:
        space = args["space"]
        if calls:
            with open(calls, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()} {space} {args['n']} {ctx.attempt}\n")
        say(f"tool started {space} {args['n']}")
        if hang:
            await anyio.sleep_forever()
        return f"step {args['n']} done"

    def answer(request: Any) -> Any:
        """The n-th answer to the input "work <space>": a call of `step` n+1, or "done"."""
        text, n = turn_of(request)
        space = (text or "").removeprefix("work ")
        return reply("", tool_calls=[call("step", {"space": space, "n": n + 1})]) if n < STEPS else reply("done")

    model = by_input({}, default=answer)
    tool = define_tool("step", "One step of the workflow.",
                       {"type": "object", "properties": {"space": {"type": "string"}, "n": {"type": "integer"}},
                        "required": ["space", "n"]}, replay="safe", execute=step)
    return WorkerApp(model, (tool,), Settings(check_integrity=False))


async def host(dsn: str, space: str, lease: float) -> None:
    from durable import open_harness
    from durable.storage import PostgresStorage

    app = make_app()
    try:
        async with open_harness(PostgresStorage(dsn, space, lease_seconds=lease), model=app.model, tools=app.tools,
                                settings=app.settings) as h:
            handle = await h.root.submit(f"work {space}")
            say(f"submitted {handle.id}")
            try:
                await handle.wait()
                say(f"answered {handle.id}")
            except LockLost as exc:
                say(f"lost {exc}")
    except LockLost:
        say("closed without writing")


if __name__ == "__main__":
    assert sys.argv[1] == "host"
    anyio.run(host, sys.argv[2], sys.argv[3], float(sys.argv[4]), backend="trio")
