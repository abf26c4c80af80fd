"""The child process of test_kill: commits numbered batches to a session file until it is killed.

Run as `python kill_child.py <session file> [<wal_autocheckpoint pages> [FULL|NORMAL]]`. The
checkpoint interval and the synchronous setting vary where kills land: a small interval makes
SQLite copy the WAL into the file every few commits, and NORMAL (no fsync per commit, equally safe
against a process kill) makes checkpoints a larger share of the time, so that more kills land in
the middle of one. It continues the numbering from what the file holds,
and after each awaited commit prints the batch number on its own line (flushed): a printed number
is an acknowledged commit. Each batch touches every kind of row, so that a partly written batch
would be visible: three entries, a new terminal task, an upsert of the `counter` task (whose
`restarts` holds the last batch number), a submission and the live document.
"""

from __future__ import annotations

import base64
import random
import sys

from durable.records import Answered, Done, Live, Run, Running, StoredEntry, Submission, Task, Terminal, UserEntry
from durable.storage import Batch
from durable.tasks.generation.records import GenerationInput

CONVERSATION = "log"
ENTRIES_PER_BATCH = 3
COUNTER_ID = 0


def entry_text(n: int, k: int) -> str:
    # Sizes vary so that batches span one or several pages and the WAL reaches checkpoints; text
    # that does not compress, so that a long one is stored as long (`durable.storage.packing`).
    size = (n * 7919 + k * 104729) % 6000
    noise = base64.b64encode(random.Random(8 * n + k).randbytes(size)).decode()[:size]
    return f"batch {n} entry {k} {noise}"


def batch(n: int) -> Batch:
    return Batch(
        tasks=[
            Task(n, CONVERSATION, "generation", GenerationInput((f"s{n}",)), Terminal(Done(n))),
            counter(n),
        ],
        entries=[
            StoredEntry(CONVERSATION, ENTRIES_PER_BATCH * (n - 1) + k, UserEntry(entry_text(n, k), f"s{n}"))
            for k in range(1, ENTRIES_PER_BATCH + 1)
        ],
        submissions=[Submission(f"s{n}", CONVERSATION, f"input {n}", seq=ENTRIES_PER_BATCH * n, status=Answered(), task_id=n)],
        live={CONVERSATION: live(n)},
    )


def counter(n: int) -> Task:
    return Task(COUNTER_ID, CONVERSATION, "counter", GenerationInput(()), Running(), restarts=n)


def live(n: int) -> Live:
    return Live(run=Run(task_id=n, inputs=(f"s{n}",)), compactions=n)


async def main(path: str, checkpoint_pages: int, synchronous: str) -> None:
    from durable.storage import SQLiteStorage

    store = SQLiteStorage(path, synchronous=synchronous)  # type: ignore[arg-type]
    opened = await store.open()
    await store.call_in_writer(lambda c: c.execute(f"PRAGMA wal_autocheckpoint = {checkpoint_pages}").fetchone())
    last = next((t.restarts for t in opened.live_tasks if t.id == COUNTER_ID), 0)
    n = last + 1
    while True:
        await store.commit(batch(n))
        print(n, flush=True)
        n += 1


if __name__ == "__main__":
    import trio

    args = sys.argv[1:]
    trio.run(main, args[0], int(args[1]) if len(args) > 1 else 1000, args[2] if len(args) > 2 else "FULL")
