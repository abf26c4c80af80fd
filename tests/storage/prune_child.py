"""The child process of test_prune_kill: prunes every ended conversation of a session file, saying
`commit` after each of its commits, until it is killed or done.

Run as `python prune_child.py <session file> <rows per commit> [step]`. It prints `ended N` once
it has listed the ended conversations, `commit` after each commit of the deletion (tombstones,
rows, tombstones gone), `sweep` after each commit deleting attachments no row references, and
`done N` with the number of conversations deleted; with `step`, it waits for a line on stdin
after each `commit` or `sweep`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio

import durable.tasks  # noqa: F401 - the task kinds, to read the live tasks at open
from durable.storage.sqlite import prune
from durable.storage.sqlite.store import SQLiteStorage


def say(line: str) -> None:
    os.write(1, (line + "\n").encode())


STEP = sys.argv[3:4] == ["step"]  # after each line, wait for one on stdin: the parent kills at an exact point


def said(fn: Any, line: str = "commit") -> Any:
    def step(*args: Any) -> Any:
        report = fn(*args)
        if report.commits:
            say(line)
            if STEP:
                sys.stdin.readline()
        return report

    return step


prune.tombstone = said(prune.tombstone)
prune.delete_some = said(prune.delete_some)
prune.sweep_some = said(prune.sweep_some, "sweep")


async def main(path: str, rows_per_commit: int) -> None:
    storage = SQLiteStorage(path)
    await storage.open()
    ended = await storage.ended()
    say(f"ended {len(ended)}")
    report = await storage.delete_conversations([e.conversation_id for e in ended], rows_per_commit=rows_per_commit)
    say(f"done {len(report.conversations)}")
    await storage.close()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], int(sys.argv[2]), backend="trio")
