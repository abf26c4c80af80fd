"""The child process of test_partials: a harness whose unsafe tool streams `OUTPUT` (one flush a
line, `output_interval=0`, a clock that never moves: the task's row keeps its `updated_at`),
prints the WAL's size once the output is kept apart and again, with "ready", once the whole
output is committed, then waits to be killed.

Run as `python tool_output_child.py <session file>`."""

from __future__ import annotations

import os
import sys

import anyio

import durable
from durable.models import FauxModel, faux

LINES = [f"line {i:04d} of the output of a tool that was cut off\n" for i in range(400)]  # 21 kB, 400 flushes
OUTPUT = "".join(LINES)
KEPT_APART = 40  # lines after which the output is long in the task row as in the live slot


async def main(path: str) -> None:
    async def dump(args, api, ctx):
        for i, line in enumerate(LINES):
            await api.output(line)  # committed before it returns (interval 0)
            if i + 1 == KEPT_APART:
                print("wal", os.path.getsize(path + "-wal"), flush=True)
        print("wal", os.path.getsize(path + "-wal"), flush=True)
        print("ready", flush=True)
        await anyio.sleep_forever()

    tool = durable.define_tool("dump", "Writes a long output", execute=dump, replay="unsafe")
    model = FauxModel([faux.reply("", tool_calls=[faux.call("dump", {}, id="c1")])])
    settings = durable.Settings(progress=durable.Progress(0, 0), check_integrity=False)
    async with durable.open_harness(path, model=model, tools=[tool], settings=settings,
                                    clock=durable.FakeClock(1_000_000.0)) as h:
        await h.root.submit("Dump it")
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], backend="trio")
