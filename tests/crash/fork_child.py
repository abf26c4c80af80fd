"""The child process of test_fork_kill: forks one conversation again and again until it is killed.

Run as `python fork_child.py <session file>`. On an empty file it first imports a history of
`PAIRS` question/answer pairs into conversation "src" (one commit); then it forks "src" as
"f<k>", k counting on from the forks the file holds, printing `forking <k>` before each fork and
`forked <k>` once it returned (flushed): a printed `forked` is an acknowledged fork.
"""

from __future__ import annotations

import sys

import trio

import durable
from durable.models import FauxModel
from durable.storage import SQLiteStorage

PAIRS = 300


def history() -> list[dict[str, str]]:
    out = []
    for n in range(PAIRS):
        out.append({"role": "user", "content": f"question {n} " + "q" * (n * 7919 % 400)})
        out.append({"role": "assistant", "content": f"answer {n} " + "a" * (n * 104729 % 600)})
    return out


async def main(path: str) -> None:
    async with durable.open_harness(SQLiteStorage(path), model=FauxModel([])) as h:
        src = h.conversation("src")
        if not await src.entries(1, 1):
            await src.seed(history())
        k = 1
        while await h.storage.get_live(f"f{k}") is not None:
            k += 1
        print("ready", flush=True)
        while True:
            print(f"forking {k}", flush=True)
            await src.fork(f"f{k}")
            print(f"forked {k}", flush=True)
            k += 1


if __name__ == "__main__":
    trio.run(main, sys.argv[1])
