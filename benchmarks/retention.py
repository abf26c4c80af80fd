"""Retention: the size of a session file before and after pruning 90% of its ended conversations.

Builds a file of N ended conversations (one turn each, through the harness, 100 at a time), then
prunes all but the 10% that ended last (`Harness.prune(keep_last=N/10)`) and prints the file's
size before and after, the rows and commits of the prune and its time. A file made by this
version has incremental vacuum: the prune gives the space back to the file system. The same is
done on a copy switched to `auto_vacuum = NONE` (a file made before), where the prune reports the
bytes `durable prune --vacuum` would give back, and then does it. A third file holds an image
in every conversation (`--image-bytes` each, its own bytes) and one more shared by all: the
prune sweeps the images of the deleted conversations (attachments no row references any more)
and keeps the shared one.

    .venv/bin/python benchmarks/retention.py [--conversations 10000] [--image-bytes 4000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time

import anyio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import machine_line, save, table  # noqa: E402

import durable  # noqa: E402
from durable.models.faux import reply  # noqa: E402
from durable.storage.sqlite.store import SQLiteStorage  # noqa: E402
from durable.testing.scripts import by_input  # noqa: E402

ANSWER = "Here is what I found about it: " + "a fairly ordinary answer sentence. " * 12


SHARED = b"\x89PNG\r\n\x1a\n" + b"the image every conversation holds " * 100


def image(i: int, size: int) -> bytes:
    body = f"the image of conversation {i}; ".encode()
    return (b"\x89PNG\r\n\x1a\n" + body * (size // len(body) + 1))[:size]


async def build(path: str, n: int, image_bytes: int = 0) -> None:
    model = by_input({}, default=reply(ANSWER))
    async with durable.open_harness(path, model=model, synchronous="NORMAL") as h:
        for start in range(0, n, 100):
            async with anyio.create_task_group() as tg:
                for i in range(start, min(n, start + 100)):
                    async def turn(i: int = i) -> None:
                        text = f"Question {i}: " + "please look into it " * 8
                        content: str | list[str | durable.Image] = text
                        if image_bytes:
                            content = [text, durable.Image(image(i, image_bytes)), durable.Image(SHARED)]
                        sub = await h.conversation(f"conv-{i:06d}").submit(content)
                        await sub.answer()
                    tg.start_soon(turn)


async def prune(path: str, keep: int) -> tuple[durable.PruneReport, float]:
    async with durable.open_harness(path, model=by_input({})) as h:
        t = time.perf_counter()
        report = await h.prune(keep_last=keep)
        return report, time.perf_counter() - t


async def vacuum(path: str) -> durable.PruneReport:
    storage = SQLiteStorage(path)
    await storage.open()
    try:
        return await storage.vacuum()
    finally:
        await storage.close()


def size(path: str) -> int:
    return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))


def mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conversations", type=int, default=10_000)
    p.add_argument("--image-bytes", type=int, default=4000)
    args = p.parse_args()
    n, keep = args.conversations, args.conversations // 10
    folder = tempfile.mkdtemp(prefix="durable-retention-")
    try:
        new = os.path.join(folder, "new.sqlite")
        t = time.perf_counter()
        anyio.run(build, new, n, backend="trio")
        built = time.perf_counter() - t
        old = os.path.join(folder, "old.sqlite")
        shutil.copy(new, old)
        conn = sqlite3.connect(old)
        conn.execute("PRAGMA auto_vacuum = NONE")
        conn.execute("VACUUM")
        conn.close()
        images = os.path.join(folder, "images.sqlite")
        t = time.perf_counter()
        anyio.run(build, images, n, args.image_bytes, backend="trio")
        built_images = time.perf_counter() - t
        rows = []
        for name, path in (("incremental vacuum (new file)", new), ("no auto vacuum (older file)", old),
                           (f"new file, an image of {args.image_bytes} B each + 1 shared", images)):
            before = size(path)
            report, took = anyio.run(prune, path, keep, backend="trio")
            after = size(path)
            rows.append([name, mb(before), mb(after), f"{after / before:.0%}", len(report.conversations), report.rows,
                         report.attachments, report.commits, f"{took:.2f} s", mb(report.reclaimable)])
            if report.reclaimable:
                done = anyio.run(vacuum, path, backend="trio")
                rows.append([name + ", then --vacuum", mb(after), mb(size(path)), f"{size(path) / before:.0%}", "", "",
                             "", "", "", mb(done.reclaimed) + " given back"])
        headers = ["file", "before", "after", "after/before", "conversations deleted", "rows", "of which attachments",
                   "commits", "prune time", "reclaimable"]
        text = (f"{n} ended conversations (built in {built:.1f} s; with images {built_images:.1f} s), pruned but the "
                f"{keep} that ended last\n\n"
                + table(headers, rows) + "\n\n" + machine_line())
        print(text)
        save("retention", {"conversations": n, "kept": keep, "rows": rows}, text)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
