"""The child process of test_partials: a harness whose unsafe tool streams `OUTPUT` (one flush a
line, `output_interval=0`, a clock that never moves: the task's row keeps its `updated_at`),
prints the WAL's size once the output is kept apart and again, with "ready", once the whole
output is committed, then waits to be killed. With `mid`: streams `LONGER` instead, printing the
number of lines committed after each flush and moving the clock `OUTPUT_STAMP` every 50 lines (a
flush that stamps the task's row again: a transaction, which folds the appends before it), until
it is killed.

Run as `python tool_output_child.py <session file> [mid]`."""

from __future__ import annotations

import os
import sys

import anyio

import durable
from durable.models import FauxModel, faux

LINES = [f"line {i:04d} of the output of a tool that was cut off\n" for i in range(400)]  # 21 kB, 400 flushes
OUTPUT = "".join(LINES)
KEPT_APART = 40  # lines after which the output is long in the task row as in the live slot
LONGER = [f"line {i:05d} of a longer output, killed while it streams\n" for i in range(5000)]  # 250 kB


async def main(path: str, mid: bool) -> None:
    from durable.tasks.tool.kind import OUTPUT_STAMP

    clock = durable.FakeClock(1_000_000.0)

    async def streams(args, api, ctx):
        for i, line in enumerate(LONGER):
            await api.output(line)  # committed before it returns (interval 0)
            print(i + 1, flush=True)
            if (i + 1) % 50 == 0:
                clock.advance(OUTPUT_STAMP)
        await anyio.sleep_forever()

    async def dump(args, api, ctx):
        for i, line in enumerate(LINES):
            await api.output(line)  # committed before it returns (interval 0)
            if i + 1 == KEPT_APART:
                print("wal", os.path.getsize(path + "-wal"), flush=True)
        print("wal", os.path.getsize(path + "-wal"), flush=True)
        print("ready", flush=True)
        await anyio.sleep_forever()

    tool = durable.define_tool("dump", "Writes a long output", execute=streams if mid else dump, replay="unsafe")
    model = FauxModel([faux.reply("", tool_calls=[faux.call("dump", {}, id="c1")])])
    settings = durable.Settings(progress=durable.Progress(0, 0), check_integrity=False)
    async with durable.open_harness(path, model=model, tools=[tool], settings=settings,
                                    clock=clock) as h:
        await h.root.submit("Dump it")
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2:] == ["mid"], backend="trio")
