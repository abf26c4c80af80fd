"""Encryption at rest: its cost in steps/s and in cold start, beside the same run without it.

A step is one turn with one tool call (an input, the model's call, the tool's result, the
answer: 4 entries, a generation and a tool task). Each round runs, on a new file, `--steps`
turns one after the other (steps/s), then a fresh process opens a file of `--history` such turns
and answers one more (cold start: from the process's start to the answer). Plain and encrypted
rounds are interleaved; medians (min-max) of `--rounds`. Target: encrypted <= 15% slower.

    .venv/bin/python benchmarks/encryption.py [--steps 300] [--history 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--cold":  # the cold-start child
    T0 = time.perf_counter()

import anyio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import machine_line, median, save, table, verdict  # noqa: E402

KEY = "benchmark key: correct horse battery staple"
TEXT = "Please look this up and tell me what you find about the topic. " * 4
ANSWER = "Here is what I found about it, in a few sentences of ordinary length. " * 6


def _harness(path: str, key: str | None):  # type: ignore[no-untyped-def]
    import durable
    from durable.models.faux import call, reply
    from durable.testing.scripts import by_input

    async def lookup(args, api, ctx):  # type: ignore[no-untyped-def]
        return "The archive has three pages on " + args["topic"] + ". " * 20

    schema = {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]}
    tool = durable.define_tool("lookup", "Looks a topic up", schema, execute=lookup)
    model = by_input({TEXT: [reply("", tool_calls=[call("lookup", {"topic": "durable storage"})]), reply(ANSWER)]})
    return durable.open_harness(path, model=model, tools=[tool], encryption_key=key)


async def turns(path: str, key: str | None, n: int) -> float:
    async with _harness(path, key) as h:
        t = time.perf_counter()
        for i in range(n):
            await (await h.conversation(f"c{i % 50}").submit(TEXT)).answer()
        return n / (time.perf_counter() - t)


async def cold(path: str, key: str | None) -> str:
    import durable  # noqa: F401 - imported before the open is timed
    if key is not None:
        from durable.storage import sealing

        sealing._aesgcm()
    t = time.perf_counter()
    async with _harness(path, key) as h:
        await (await h.conversation("c0").submit(TEXT)).answer()
    end = time.perf_counter()
    return f"{end - T0} {end - t}"


def cold_start(path: str, key: str | None) -> tuple[float, float]:
    """(from the process's start to the answer, from the imports done to the answer)."""
    copy = path + ".run"
    shutil.copy(path, copy)
    try:
        out = subprocess.run([sys.executable, __file__, "--cold", copy, key or ""], check=True, capture_output=True,
                             text=True).stdout
        whole, opened = out.split()
        return float(whole), float(opened)
    finally:
        for suffix in ("", "-wal", "-shm", "-mark"):
            if os.path.exists(copy + suffix):
                os.remove(copy + suffix)


def _ms(xs: list[float]) -> str:
    return f"{median(xs) * 1000:.0f} ({min(xs) * 1000:.0f}-{max(xs) * 1000:.0f})"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--history", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    folder = tempfile.mkdtemp(prefix="durable-encryption-")
    modes = {"plain": None, "encrypted": KEY}
    try:
        history = {}
        for mode, key in modes.items():
            history[mode] = os.path.join(folder, f"history-{mode}.sqlite")
            anyio.run(turns, history[mode], key, args.history, backend="trio")
        rates: dict[str, list[float]] = {m: [] for m in modes}
        starts: dict[str, list[float]] = {m: [] for m in modes}
        opens: dict[str, list[float]] = {m: [] for m in modes}
        for r in range(args.rounds):
            for mode, key in (modes.items() if r % 2 == 0 else reversed(modes.items())):
                path = os.path.join(folder, f"r{r}-{mode}.sqlite")
                rates[mode].append(anyio.run(turns, path, key, args.steps, backend="trio"))
                whole, opened = cold_start(history[mode], key)
                starts[mode].append(whole)
                opens[mode].append(opened)
        rows = []
        for mode in modes:
            rows.append([mode, f"{median(rates[mode]):.1f} ({min(rates[mode]):.1f}-{max(rates[mode]):.1f})",
                         _ms(starts[mode]), _ms(opens[mode]), f"{os.path.getsize(history[mode]) / 1e6:.2f} MB"])
        slower = 1 - median(rates["encrypted"]) / median(rates["plain"])
        colder = median(starts["encrypted"]) / median(starts["plain"]) - 1
        slower_open = median(opens["encrypted"]) / median(opens["plain"]) - 1
        text = (f"{args.steps} turns with one tool call each per round, cold start on {args.history} turns of history, "
                f"medians (min-max) of {args.rounds} interleaved rounds\n\n"
                + table(["mode", "steps/s", "cold start ms", "of which open + first answer ms",
                         f"file of {args.history} turns"], rows)
                + f"\n\nencrypted: {slower:.1%} fewer steps/s ({verdict(slower <= 0.15)}: <= 15%), cold start "
                  f"{colder:+.1%} ({verdict(colder <= 0.15)}: <= 15%), open + first answer {slower_open:+.1%}\n\n"
                + machine_line())
        print(text)
        save("encryption", {"rates": rates, "cold_starts": starts, "opens": opens, "slower": slower,
                            "colder": colder}, text)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--cold"]:
        print(anyio.run(cold, sys.argv[2], sys.argv[3] or None, backend="trio"))
    else:
        main()
