"""`durable prune FILE --older-than AGE [--keep-last N] [--vacuum]`: delete the ended conversations
of a session file (`durable.storage.retention`; docs/spec.md §6).

It owns the file while it runs, as any writer does: while the owner process runs it is refused
with `SessionLocked` naming the owner, and the file is not changed. Deletion is crash-safe (a kill
leaves a consistent file; the next open or prune finishes it). `--vacuum` then rewrites the whole
file (`VACUUM`): only needed for a file made before incremental vacuum, whose free pages a prune
cannot give back (the report says how many bytes a vacuum would).
"""

from __future__ import annotations

import re
import time

import click

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """Seconds in an age such as `30d`, `12h`, `90m`, `45s` or `2w`; `click.BadParameter` otherwise."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text)
    if found is None:
        raise click.BadParameter(f"{text!r} is not an age such as 30d, 12h, 90m, 45s or 2w", param_hint="--older-than")
    return float(found.group(1)) * _UNITS[found.group(2)]


def prune_file(path: str, *, older_than: float, keep_last: int, vacuum: bool, now: float | None = None,
               key: bytes | None = None) -> list[str]:
    """Prune the session file at `path` (`key`: an encrypted file's); the lines of its report."""
    import anyio

    from .. import tasks  # noqa: F401 - the task kinds, registered to read the live tasks at open
    from ..storage.sqlite.reader import check_file
    from ..storage.sqlite.store import SQLiteStorage

    check_file(path)  # a missing file is refused, never created
    cutoff = (time.time() if now is None else now) - older_than

    async def run() -> list[str]:
        from ..storage.retention import choose

        storage = SQLiteStorage(path, encryption_key=key)
        await storage.open()
        try:
            ended = await storage.ended()
            ids = choose(ended, ended_before=cutoff, keep_last=keep_last)
            report = await storage.delete_conversations(ids)
            lines = [f"Deleted {len(report.conversations)} of {len(ended)} ended conversations from {path} "
                     f"({report.rows} rows in {report.commits} commits"
                     f"{_attachments(report.attachments)}); "
                     f"{_size(report.reclaimed)} given back"]
            if vacuum:
                done = await storage.vacuum()
                lines.append(f"Vacuumed {path}: {_size(done.reclaimed)} given back")
            elif report.reclaimable:
                lines.append(f"{path} was made without incremental vacuum: {_size(report.reclaimable)} are free "
                             f"inside it; run `durable prune {path} --older-than ... --vacuum` to give them back "
                             f"(it rewrites the whole file)")
            return lines
        finally:
            await storage.close()

    return anyio.run(run, backend="trio")


def _attachments(n: int) -> str:
    """What the line says of the attachments swept (`durable.storage.sweep`): nothing when none."""
    return f", {n} attachment{'' if n == 1 else 's'} among them" if n else ""


def _size(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"
