"""The one group-commit policy (`durable.storage.group_commit`): on every SQL store (SQLite and
PostgreSQL, each with commits queued behind a held writer thread so that they form one group), and
on a scripted backend whose primitives record what the policy asks of them.

What every caller is promised: its batch lands whole or not at all, in queue order (the last write
of a key wins), and it learns the outcome of exactly its own batch; a batch refused for what it
holds never takes another with it; one that fails for a passing cause holds back every later one
until a batch first in line comes (the file never holds a later commit without an earlier one); a
store-level failure (the fence) reaches every caller of the group."""

from __future__ import annotations

import os
import uuid

import attrs
from typing import Any

import pytest

from durable.errors import CommitFailed, CommitRefused, LockLost, StorageError
from durable.records import Live, Running
from durable.storage import Batch, PostgresStorage, SQLiteStorage
from durable.storage.group_commit import GroupCommitter, merged
from durable.storage.rows import EncodedBatch, encode_batch
from durable.storage.writer import Job

from .builders import busy, submission, task, user
from .held_writer import commit_behind_held_writer

pytestmark = pytest.mark.anyio


async def commit_as_one_group(store: Any, batches: list[Batch]) -> list[BaseException | None]:
    """Each batch's outcome (None, or the error its caller got), queued in order behind a held
    writer thread and then written as one group."""
    return await commit_behind_held_writer(store, batches, in_order=True)


# ----------------------------------------------------------------------------- on every SQL store


@pytest.fixture(params=["sqlite", "postgres"])
async def sql_store(request: pytest.FixtureRequest, tmp_path):
    if request.param == "postgres":
        store: Any = PostgresStorage(request.getfixturevalue("postgres_dsn"), f"group-{uuid.uuid4().hex[:12]}")
    else:
        store = SQLiteStorage(os.fspath(tmp_path / "session.db"))
    await store.open()
    yield store
    await store.close()


async def unsettled_after_a_reopen(store: Any) -> list[str]:
    """The ids of the unsettled submissions a new opener finds, in the order it gives them."""
    await store.close()
    again = PostgresStorage(store._link.dsn, store.space) if isinstance(store, PostgresStorage) else \
        SQLiteStorage(store.path)
    opened = await again.open()
    await again.close()
    await store.open()  # for the fixture to close
    return [s.id for s in opened.unsettled]


async def test_a_refused_batch_in_a_group_fails_alone_and_the_others_commit_in_one_transaction(sql_store):
    await sql_store.commit(Batch(entries=[user(1)]))
    before = sql_store.commits
    outcome = await commit_as_one_group(sql_store, [
        Batch(tasks=[task(2)], entries=[user(2)]),
        Batch(tasks=[task(3)], entries=[user(1)], live={"root": busy(3)}),  # seq 1 is taken: refused
        Batch(tasks=[task(4)], entries=[user(3)], live={"side": busy(4)}),
    ])
    assert [type(o).__name__ for o in outcome] == ["NoneType", "CommitRefused", "NoneType"]
    assert str(outcome[1]).startswith(f"A commit to {sql_store.location} was refused and rolled back: UNIQUE")
    assert sql_store.commits - before == 1
    assert [t.id for t in await sql_store.find_tasks()] == [2, 4]  # nothing of the refused batch
    assert await sql_store.get_entries("root") == [user(1), user(2), user(3)]
    assert await sql_store.get_live("root") is None and await sql_store.get_live("side") == busy(4)


async def test_a_refused_barrier_fails_alone_and_the_lazy_batches_of_its_group_land_with_it_as_a_barrier(
        sql_store):
    await sql_store.commit(Batch(entries=[user(1)]))
    before, barriers = sql_store.commits, getattr(sql_store, "barriers", 0)
    outcome = await commit_as_one_group(sql_store, [
        Batch(tasks=[task(2)], barrier=False),
        Batch(tasks=[task(3)], entries=[user(1)], barrier=True),  # refused
        Batch(tasks=[task(4)], barrier=False),
    ])
    assert [o is None for o in outcome] == [True, False, True]
    assert isinstance(outcome[1], CommitFailed)
    assert sql_store.commits - before == 1
    if isinstance(sql_store, SQLiteStorage):  # written at FULL: the level is the group's, chosen before
        assert sql_store.barriers - barriers == 1
    assert [t.id for t in await sql_store.find_tasks()] == [2, 4]


async def test_several_writes_of_one_key_in_a_group_the_last_wins_in_the_place_of_the_first(sql_store):
    first, again = submission("a"), submission("a", seq=7)
    before = sql_store.commits
    outcome = await commit_as_one_group(sql_store, [
        Batch(tasks=[task(1)], submissions=[first], live={"root": busy(1)}),
        Batch(submissions=[submission("b")], entries=[user(1)]),
        Batch(tasks=[task(1, state=Running())], submissions=[again], live={"root": Live()}),
    ])
    assert outcome == [None, None, None] and sql_store.commits - before == 1
    assert await sql_store.get_task(1) == task(1, state=Running())
    assert await sql_store.get_submission("a") == again
    assert await sql_store.get_live("root") == Live()
    assert await unsettled_after_a_reopen(sql_store) == ["a", "b"]  # in the order first committed


# ----------------------------------------------------------------------------- the policy itself


def batch(*task_ids: int, barrier: bool = True, first_in_line: bool = True) -> Batch:
    return Batch(tasks=[task(i) for i in task_ids], barrier=barrier, first_in_line=first_in_line)


class Refused(Exception):
    """What the scripted backend raises for rows it refuses (a constraint, as it were)."""


class Broken(Exception):
    """What the scripted backend raises for a transaction that fails as a whole (a full disk)."""


class ScriptedTransactions:
    """Primitives that write nothing and record every call; rows holding a task id in `refuse`
    are refused, rows holding one in `fail` fail the transaction as a whole (`Broken`: a full
    disk as it were), and a primitive named in `broken` fails (`Broken`, or the exception given)."""

    location = "scripted"

    def __init__(self, refuse: set[int] = frozenset(), broken: dict[str, BaseException] | None = None,
                 fail: set[int] = frozenset()) -> None:
        self.refuse = refuse
        self.fail = fail
        self.broken = broken or {}
        self.calls: list[str] = []
        self.commits = 0

    def _call(self, name: str, rows: EncodedBatch | None = None) -> None:
        ids = [] if rows is None else [t.id for t in rows.tasks]
        self.calls.append(name if rows is None else f"{name}({','.join(map(str, ids))})")
        if name in self.broken:
            raise self.broken[name]
        if self.refuse.intersection(ids):
            raise Refused(f"task {sorted(self.refuse.intersection(ids))[0]} refused")
        if self.fail.intersection(ids):
            raise Broken(f"no space for task {sorted(self.fail.intersection(ids))[0]}")

    def refusal(self) -> StorageError | None:
        return None

    def write(self, rows: EncodedBatch) -> None:
        self._call("write" if rows.barrier else "write lazily", rows)

    def begin(self, barrier: bool) -> None:
        self._call("begin" if barrier else "begin lazily")

    def apply(self, rows: EncodedBatch) -> None:
        self._call("apply", rows)

    def savepoint(self) -> None:
        self._call("savepoint")

    def rollback_to_savepoint(self) -> None:
        self._call("rollback to savepoint")

    def release_savepoint(self) -> None:
        self._call("release")

    def commit(self) -> None:
        self._call("commit")

    def rollback(self, failure: BaseException) -> None:
        self.calls.append("rollback")

    def refused(self, failure: Exception) -> bool:
        return isinstance(failure, Refused)

    def translate(self, failure: Exception) -> StorageError:
        if "translate" in self.broken:
            raise self.broken["translate"]
        if isinstance(failure, Refused):
            return CommitRefused(f"refused: {failure}", location=self.location)
        return CommitFailed(f"failed: {failure}", location=self.location)

    def settle(self, attempt: Any) -> None:
        attempt()


class ScriptedStore(GroupCommitter[None]):
    """A writer thread whose groups go through the policy to scripted primitives."""

    location = "scripted"

    def __init__(self, tx: ScriptedTransactions) -> None:
        self._writes = tx
        self._init_writer()

    async def commit(self, b: Batch) -> None:
        await self._submit(Job(None, b))

    async def call_in_writer(self, fn: Any) -> Any:
        return await self._call(fn)

    def _run_call(self, job: Job) -> None:
        assert job.fn is not None
        job.result = job.fn(None)
        job.finish()

    def _writer_exit(self) -> None:
        pass


async def run_group(tx: ScriptedTransactions, batches: list[Batch], *, then: bool = True) -> list[str | None]:
    """Each batch's outcome, written as one group; `then`: one more commit after it (the writer
    thread is still there)."""
    store = ScriptedStore(tx)
    store._start_writer()
    try:
        outcome = await commit_as_one_group(store, batches)
        if then:
            await store.commit(batch(99))
    finally:
        await store._stop_writer(lambda: None)
    return [None if o is None else f"{type(o).__name__}: {o}" for o in outcome]


async def test_a_group_is_written_as_one_transaction_of_its_merged_rows():
    tx = ScriptedTransactions()
    assert await run_group(tx, [batch(1), batch(2, barrier=False), batch(3)]) == [None, None, None]
    assert tx.calls == ["write(1,2,3)", "write(99)"]


async def test_a_group_of_lazy_batches_is_written_lazily_and_one_barrier_makes_it_a_barrier():
    tx = ScriptedTransactions(refuse={2})
    assert await run_group(tx, [batch(1, barrier=False), batch(2, barrier=False)]) == [
        None, "CommitRefused: refused: task 2 refused"]
    assert tx.calls[:3] == ["write lazily(1,2)", "rollback", "begin lazily"]


async def test_a_refused_batch_is_rolled_back_to_its_savepoint_and_the_others_commit_together():
    tx = ScriptedTransactions(refuse={2})
    assert await run_group(tx, [batch(1), batch(2), batch(3)]) == [None, "CommitRefused: refused: task 2 refused",
                                                                    None]
    assert tx.calls == [
        "write(1,2,3)", "rollback",
        "begin",
        "savepoint", "apply(1)", "release",
        "savepoint", "apply(2)", "rollback to savepoint", "release",
        "savepoint", "apply(3)", "release",
        "commit",
        "write(99)",
    ]


async def test_when_the_savepoint_transaction_fails_as_a_whole_each_batch_is_written_alone():
    tx = ScriptedTransactions(refuse={2}, broken={"commit": Broken("disk full")})
    assert await run_group(tx, [batch(1), batch(2, barrier=False), batch(3)]) == [
        None, "CommitRefused: refused: task 2 refused", None]
    assert tx.calls[tx.calls.index("commit"):] == [
        "commit", "rollback",
        "write(1)", "write lazily(2)", "rollback", "write(3)",  # each at its own level
        "write(99)",
    ]


async def test_a_batch_alone_is_one_transaction_and_its_refusal_is_its_callers_error():
    tx = ScriptedTransactions(refuse={1})
    assert await run_group(tx, [batch(1)]) == ["CommitRefused: refused: task 1 refused"]
    assert tx.calls == ["write(1)", "rollback", "write(99)"]


async def test_a_batch_that_fails_for_a_passing_cause_holds_back_every_later_one_until_one_first_in_line():
    tx = ScriptedTransactions(fail={1})
    store = ScriptedStore(tx)
    store._start_writer()
    try:
        # Sent by a commit line while the ones before them were in flight: not first in line.
        outcome = await commit_as_one_group(store, [batch(1), batch(2, first_in_line=False),
                                                    batch(3, first_in_line=False)])
        later = []
        for b in (batch(4, first_in_line=False), batch(5), batch(6, first_in_line=False)):
            try:
                await store.commit(b)
                later.append(None)
            except StorageError as exc:
                later.append(f"{type(exc).__name__}: {exc}")
    finally:
        await store._stop_writer(lambda: None)
    held = "CommitFailed: A commit to scripted was held back behind an earlier one that failed (failed: no space for task 1)"
    assert [None if o is None else f"{type(o).__name__}: {o}" for o in outcome] == [
        "CommitFailed: failed: no space for task 1", held, held]
    assert later == [held, None, None]  # 4 held back too; 5 comes first in line: written, and the hold ends
    assert tx.calls == [
        "write(1,2,3)", "rollback",
        "begin", "savepoint", "apply(1)", "rollback",  # fails as a whole, not for what batch 1 holds
        "write(1)", "rollback",  # alone: it fails; 2 and 3 are never tried
        "write(5)", "write(6)",
    ]


async def test_a_store_level_failure_reaches_every_caller_of_the_group_and_nothing_is_tried_again():
    lost = LockLost("This store lost its lease", location="scripted")
    tx = ScriptedTransactions(broken={"write": lost})
    assert await run_group(tx, [batch(1), batch(2)], then=False) == ["LockLost: This store lost its lease"] * 2
    assert tx.calls == ["write(1,2)", "rollback"]


async def test_an_unexpected_error_fails_the_callers_not_yet_told_and_the_writer_thread_goes_on():
    tx = ScriptedTransactions(refuse={2}, broken={"translate": KeyError("bug")})
    outcome = await run_group(tx, [batch(1), batch(2), batch(3)])
    assert outcome == [None, "CommitFailed: A commit to scripted failed: KeyError: 'bug'",
                       "CommitFailed: A commit to scripted failed: KeyError: 'bug'"]
    assert tx.calls[-1] == "write(99)"  # a later commit is written: the thread did not die


def test_merged_rows_keep_every_entry_and_the_last_write_of_a_key_in_the_place_of_its_first():
    a1, b, a2 = submission("a"), submission("b"), submission("a", seq=4)
    rows = merged([
        encode_batch(Batch(tasks=[task(1)], entries=[user(1)], submissions=[a1], live={"root": busy(1)},
                           barrier=False)),
        encode_batch(Batch(tasks=[task(2)], entries=[user(1)], submissions=[b], barrier=False)),
        encode_batch(Batch(tasks=[task(1, state=Running())], submissions=[a2], live={"root": Live()})),
    ])
    whole = encode_batch(Batch(tasks=[task(1, state=Running()), task(2)], entries=[user(1), user(1)],
                               submissions=[a2, b], live={"root": Live()}))
    # A barrier, as one of them is; a seq twice is kept (the store refuses it); each row's long texts
    # (none here) are those of its last write.
    assert attrs.evolve(rows, texts=()) == attrs.evolve(whole, texts=()) and dict(rows.texts) == dict(whole.texts)
