"""The child process of test_encryption's rekey test: rotates the key of a session file, saying
`commit` after each commit of sealed rows, until it is killed or done.

Run as `python rekey_child.py <session file> <old key> <new key> <rows per commit> [step]`;
prints `rotating` once the new key is recorded, `commit` after each commit, `done N` at the end;
with `step`, it waits for a line on stdin after each `rotating` or `commit`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio

import durable.tasks  # noqa: F401 - the task kinds, to read the live tasks at open
from durable.storage.sqlite import keys
from durable.storage.sqlite.store import SQLiteStorage


def say(line: str) -> None:
    os.write(1, (line + "\n").encode())


STEP = sys.argv[5:6] == ["step"]  # after each line, wait for one on stdin: the parent kills at an exact point


def said(fn: Any, line: str) -> Any:
    def step(*args: Any) -> Any:
        result = fn(*args)
        if result != 0:
            say(line)
            if STEP:
                sys.stdin.readline()
        return result

    return step


keys.begin_rekey = said(keys.begin_rekey, "rotating")
keys.rekey_some = said(keys.rekey_some, "commit")


async def main(path: str, old: str, new: str, rows_per_commit: int) -> None:
    storage = SQLiteStorage(path, encryption_key=old)
    await storage.open()
    n = await storage.rekey(new, rows_per_commit=rows_per_commit)
    say(f"done {n}")
    await storage.close()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), backend="trio")
