"""Pipelined commits (issue 29, "one round trip to the writer per step"): the lazy commit that
starts a tool round is queued without waiting for the writer thread; its safe tools run while it
is written, and the generation waits for it before it goes on. Refusals are injected in the
writer thread's transactions of a real SQLite file (`SQLiteWrites`), where the store groups and
holds back batches: whatever refuses the round's commit, nothing built on it is written before
it, and nothing built on it is written at all once it gave up."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

import durable
from durable.models import FauxModel, faux
from durable.storage.sqlite.reader import SessionReader

from .conftest import settings

pytestmark = pytest.mark.anyio


async def _ok(args, api, ctx):
    return "ok"


STEP = durable.define_tool("step", "a step", replay="safe", execute=_ok)
SCRIPT = [faux.reply("", tool_calls=[faux.call("step", {}, id="a")]), faux.reply("done")]


def _starts_round(rows: Any) -> bool:
    """The round's commit: the one holding the assistant's tool_use entry."""
    return any(kind == "assistant" and '"tool_use"' in body for _, _, kind, body, _ in rows.entries)


def _inject(writes: Any, fail: Any) -> list[list[str]]:
    """Make `fail(holds_round)` run at each transaction's COMMIT on the writer thread (it raises
    to fail it); return the entry kinds of every transaction written, in the file's order."""
    written: list[list[str]] = []
    kinds: list[str] = []
    holds: list[bool] = [False]
    real_begin, real_apply, real_commit = writes.begin, writes.apply, writes.commit

    def begin(barrier: bool) -> None:
        kinds.clear()
        holds[0] = False
        real_begin(barrier)

    def apply(rows: Any) -> None:
        real_apply(rows)
        kinds.extend(kind for _, _, kind, _, _ in rows.entries)
        holds[0] = holds[0] or _starts_round(rows)

    def commit() -> None:
        fail(holds[0])
        real_commit()
        written.append(list(kinds))

    writes.begin, writes.apply, writes.commit = begin, apply, commit
    return written


async def test_a_round_commit_the_disk_refuses_is_written_again_before_the_tool_result_made_on_it(host):
    def retried() -> list[str]:
        return [x.message for x in host.reports if getattr(x, "topic", None) == "commit"]

    def fail(holds_round: bool) -> None:
        # Every transaction holding the round fails (merged with the tool's result or alone)
        # until the generation's commit was reported as tried again.
        if holds_round and not retried():
            raise sqlite3.OperationalError("disk I/O error (injected)")

    async with host.open(FauxModel(SCRIPT), settings=settings(), tools=[STEP]) as h:
        written = _inject(host.storage.inner._writes, fail)
        sub = await h.root.submit("go")
        assert await sub.wait() == durable.Answered("done", 4)
    assert written == [["user"], ["assistant"], ["tool_result"], [], ["assistant"]]
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result", "assistant:stop"]
    location = host.path
    assert retried()[0] == (f"Task 2 (tool), task 1 (generation) could not commit and will try again: A commit to "
                            f"{location} failed and was rolled back (disk I/O error (injected))")
    assert all(m.endswith("(disk I/O error (injected)))") for m in retried()[1:])  # the result, held back


async def test_a_round_commit_refused_for_what_it_holds_takes_the_tool_result_made_on_it_along(host):
    def fail(holds_round: bool) -> None:
        if holds_round:
            raise sqlite3.IntegrityError("UNIQUE constraint failed: entries.conversation_id, entries.seq (injected)")

    async with host.open(FauxModel(SCRIPT), settings=settings(), tools=[STEP]) as h:
        _inject(host.storage.inner._writes, fail)
        sub = await h.root.submit("go")
        status = await sub.wait()
    assert isinstance(status, durable.Unanswered) and status.reason == "storage_error"
    assert await host.transcript() == ["user"]  # neither the round nor the tool result made on it
    with SessionReader(host.path) as reader:
        assert [t.id for t in reader.tasks(kind="tool")] == []
