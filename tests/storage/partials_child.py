"""The child process of test_partials: streams an answer into a harness on a session file at
`persist_within=0` until the model hangs, prints "ready" once the whole partial is committed,
then waits to be killed.

Run as `python partials_child.py <session file>`."""

from __future__ import annotations

import sys

import anyio

import durable
from durable.models import FauxModel, faux

PARTIAL = "".join(f"line {i:04d} of an answer that was cut off\n" for i in range(400))  # 16 kB, 400 deltas


async def main(path: str) -> None:
    model = FauxModel([faux.hang(PARTIAL)], token_size=40)
    settings = durable.Settings(progress=durable.Progress(persist_within=0), check_integrity=False)
    async with durable.open_harness(path, model=model, settings=settings) as h:
        await h.root.submit("Write a long answer")
        while True:  # every delta is committed before the next is read (interval 0)
            gen = h.root.live().generation
            if gen is not None and gen.message.text == PARTIAL:
                break
            await anyio.sleep(0.01)
        print("ready", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], backend="trio")
