"""The explorer's check that the file gives back what was committed
(`durable.testing.invariants.committed.check_committed`): exact violations for a record altered
after its commit, tolerance for a commit still in flight at the crash, and the side file read as
a killed process leaves it (`CrashableStorage.release`: no fold at its close)."""

from __future__ import annotations

import os

import pytest

from durable.records import Done, GenerationLive, Live, PartialMessage, Running, Terminal
from durable.storage import Batch, SQLiteStorage
from durable.testing.crash import CrashableStorage
from durable.testing.invariants.committed import check_committed
from tests.storage.builders import assistant, busy, submission, task, user

pytestmark = pytest.mark.anyio


def partial(n: int) -> Live:
    text = "".join(f"line {i:05d}\n" for i in range(n // 11 + 1))[:n]
    return Live(generation=GenerationLive(1, PartialMessage(text)))


def batches() -> list[Batch]:
    return [Batch(tasks=[task(1, state=Running())], entries=[user(1)], submissions=[submission("s1")],
                  live={"root": busy(1, "s1")}),
            Batch(tasks=[task(1, state=Terminal(Done()))], entries=[assistant(2)])]


async def test_a_file_holding_every_returned_commit_has_no_violation_and_an_altered_record_is_named(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    store = SQLiteStorage(path)
    await store.open()
    done = batches()
    for b in done:
        await store.commit(b)
    assert check_committed(path, done, done) == []
    await store.commit(Batch(tasks=[task(1, state=Running())], live={"root": busy(1, "s2")}))  # not recorded
    await store.close()
    found = check_committed(path, done, done)
    assert [v.split(":")[0] for v in found] == ["The task 1 read back is not what was committed",
                                                "The live root read back is not what was committed"]


async def test_a_commit_in_flight_at_the_crash_may_be_in_the_file_or_not(tmp_path):
    path = os.fspath(tmp_path / "s.db")
    store = SQLiteStorage(path)
    await store.open()
    first, second = batches()
    await store.commit(first)
    assert check_committed(path, [first, second], [first]) == []  # not there yet: allowed
    found = check_committed(path, [first, second], [first, second])  # returned, yet not there: lost
    assert [v.split(":")[0] for v in found] == ["The task 1 read back is not what was committed",
                                                "The entry root 2 read back is not what was committed"]
    await store.commit(second)
    assert check_committed(path, [first, second], [first]) == []  # there: allowed too
    assert check_committed(path, [first, second], [first, second]) == []
    await store.close()


async def test_after_a_crash_the_inner_store_closes_as_a_killed_process_leaves_its_file(tmp_path):
    """What lazy commits put beside the file stays there (a clean close would fold it in, hiding
    a side file that a real kill leaves)."""
    path = os.fspath(tmp_path / "s.db")
    crashable = CrashableStorage(SQLiteStorage(path))
    await crashable.open()
    await crashable.commit(Batch(live={"root": partial(2000)}))
    await crashable.commit(Batch(live={"root": partial(9000)}, barrier=False))  # beside the file
    crashable.crash()
    kept = os.path.getsize(path + "-partials")
    await crashable.release()
    assert os.path.getsize(path + "-partials") == kept > 0
    assert check_committed(path, crashable.batches, crashable.returned) == []
