"""`durable watch`: follow a session file that another process owns, read-only and live.

`follow(path)` polls the file through `SessionReader` (read-only, without the lock, nothing
written: safe while the owner runs, and the owner may come and go) and prints one line per
event, flushed at once:

    root #2 assistant:stop: Hello world          a new entry (conversation, seq, kind, text)
    root live: generation attempt 1, partial …   the conversation's live document changed
    task 2 tool lookup: running (attempt 1)      a task changed state, phase, attempt or restarts

It starts with the last `last` entries of each conversation and the live tasks, then prints what
each poll finds new. Every poll reads in one snapshot, so what one poll prints belongs to one
commit. It stops after `timeout` seconds, after the first poll with `once`, or on Ctrl-C (the
command's exit status 130). This module imports neither anyio, trio nor a provider SDK.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from .. import codec, records as r
from .._frozen import evolve
from ..storage.sqlite.reader import SessionReader, owner_of
from .inspect_data import _task
from .inspect_view import _entry_kind, _entry_text, _live_text


def _task_line(t: dict[str, Any]) -> str:
    name = t["kind"]
    if t["tool"]:
        name += f" {t['tool']['name']}"
    state = t["outcome"] or t["state"]
    notes = [f"{k} {t[k]}" for k in ("phase", "attempt") if t[k] is not None]
    if t["restarts"]:
        notes.append(f"restarts {t['restarts']}")
    if t["error"]:
        notes.append(t["error"]["message"])
    return f"task {t['id']} {name}: {state}" + (f" ({', '.join(notes)})" if notes else "")


def _task_key(t: dict[str, Any]) -> tuple[Any, ...]:
    return (t["state"], t["outcome"], t["phase"], t["attempt"], t["restarts"], t["until"], t["stop"])


class Follower:
    """What has been printed so far, and the poll that prints what is new."""

    def __init__(self, path: str, *, last: int, echo: Callable[[str], None]) -> None:
        self.path = path
        self.last = last
        self.echo = echo
        self.seen_seq: dict[str, int] = {}
        self.live: dict[str, Any] = {}
        self.tasks: dict[int, tuple[Any, ...]] = {}
        self.started = False

    def poll(self, reader: SessionReader) -> None:
        with reader.snapshot():
            for cid in reader.conversation_ids():
                if cid in self.seen_seq:
                    fresh = reader.entries(cid, self.seen_seq[cid] + 1)
                else:  # at the start its last entries; a conversation begun since, all of them
                    fresh = reader.entries(cid, last=None if self.started else self.last)
                    self.seen_seq[cid] = 0
                for e in fresh:
                    data = {"seq": e.seq, **codec.converter.unstructure(e.entry, r.Entry)}
                    self.echo(f"{cid} #{e.seq} {_entry_kind(data)}: {_entry_text(data)}")
                    self.seen_seq[cid] = e.seq
            for cid, doc in reader.live_documents().items():
                data = codec.to_data(doc)
                if self.live.get(cid) != data:
                    if self.started or evolve(doc, usage=r.EMPTY_USAGE) != r.EMPTY_LIVE:  # not idle
                        self.echo(f"{cid} live: {_live_text(data)}")
                    self.live[cid] = data
            # Live tasks, and the newest ended ones: enough to see each task that was live end.
            for t in map(_task, reader.tasks(ended_last=max(16, len(self.tasks)))):
                key = _task_key(t)
                known = self.tasks.get(t["id"])
                if known == key or (known is None and t["outcome"] is not None and not self.started):
                    continue  # unchanged, or ended before we watched
                self.tasks[t["id"]] = key
                self.echo(_task_line(t))
        self.started = True


def follow(path: str | os.PathLike[str], *, interval: float = 0.2, timeout: float | None = None,
           once: bool = False, last: int = 10, echo: Callable[[str], None] = print, key: bytes | None = None) -> None:
    """Print the session file's events until `timeout` seconds have passed (forever without),
    or after one poll with `once`. KeyboardInterrupt (Ctrl-C) reaches the caller. `key`: the
    key of an encrypted file (`WrongKey` without it, or with another, before anything is shown)."""
    path = os.fspath(path)
    if os.path.islink(path):
        path = os.path.realpath(path)
    deadline = None if timeout is None else time.monotonic() + timeout
    owner = owner_of(path)
    who = "not open" if owner is None else ("owned by another process" if owner < 0 else f"owned by process {owner}")
    follower = Follower(path, last=last, echo=echo)
    first = True
    while True:
        # A reader per poll: between polls the watcher holds no connection, so the owner's clean
        # close finds no other reader and folds its WAL back into the file as usual.
        with SessionReader(path, key=key) as reader:
            if first:
                echo(f"watching {path} ({who}); Ctrl-C to stop")
                first = False
            follower.poll(reader)
        if once:
            return
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(interval, left))
        else:
            time.sleep(interval)


__all__ = ["Follower", "follow"]
