"""Benchmark: what a fork costs in storage and time (`Conversation.fork`).

Run: `python benchmarks/forks.py [--entries 10000] [--forks 5]`. Not a test: it prints a table and
writes `results/forks.json` and its section of `results/results.md`.

A conversation of `--entries` entries (user questions and assistant answers of 20-1,000
characters, imported with `seed`) is forked `--forks` times in full into a fresh SQLite file.
The file's size (the WAL checkpointed into it by the harness's close) is measured before and
after: the growth over the entries copied is the bytes per forked entry, beside the bytes per
entry of the source (its history alone). A fork copies the rows in SQL (`INSERT ... SELECT`): no
entry is decoded or encoded again, so a forked entry costs what its row takes, not more.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import trio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import machine_line, save, table  # noqa: E402

import durable  # noqa: E402
from durable.models import FauxModel  # noqa: E402


def history(n: int) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "x" * (i * 7919 % 1000)}
            for i in range(n)]


async def measure(path: str, entries: int, forks: int) -> dict[str, float]:
    async with durable.open_harness(path, model=FauxModel([])) as h:
        await h.conversation("src").seed(history(entries))
    empty = tempfile.mktemp(suffix=".sqlite", dir=os.path.dirname(path))
    async with durable.open_harness(empty, model=FauxModel([])):
        pass
    base, before = os.path.getsize(empty), os.path.getsize(path)
    seconds = []
    async with durable.open_harness(path, model=FauxModel([])) as h:
        for k in range(forks):
            start = time.perf_counter()
            await h.conversation("src").fork(f"fork{k}")
            seconds.append(time.perf_counter() - start)
    after = os.path.getsize(path)
    return {"source_bytes_per_entry": (before - base) / entries,
            "forked_bytes_per_entry": (after - before) / (entries * forks),
            "fork_ms": sorted(seconds)[len(seconds) // 2] * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--forks", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        got = trio.run(measure, os.path.join(tmp, "forks.sqlite"), args.entries, args.forks)
    md = table(["entries", "forks", "source bytes/entry", "forked bytes/entry", "fork (median ms)"],
               [[f"{args.entries:,}", args.forks, f"{got['source_bytes_per_entry']:.0f}",
                 f"{got['forked_bytes_per_entry']:.0f}", f"{got['fork_ms']:.1f}"]])
    print(md)
    print(machine_line())
    save("forks", {"entries": args.entries, "forks": args.forks, **got}, "## Forks\n\n" + md)


if __name__ == "__main__":
    main()
