"""The one group-commit policy of the SQL stores: how the commit jobs that queued up together on a
writer thread are written, whatever the backend; each backend supplies its primitives
(`Transactions`: fenced transactions, applying rows, savepoints, what a failure means).

1. Every batch of the group merged into one transaction (`merged`). 2. If that is refused, one
transaction again, each batch inside its own savepoint: a batch refused for what it holds (a
constraint, a value the driver cannot send) is rolled back to its savepoint, and the others
commit together. 3. If that transaction fails as a whole (a full disk, an I/O error), each batch
in a transaction of its own. A group of one batch is written alone.

What every caller is promised: its batch is applied whole or not at all, in the order the jobs
were queued (a later write of a task, submission or live document wins), and it learns the
outcome of exactly its own batch; a refused batch never takes another with it. A group holding a
barrier is written as a barrier as a whole (durable when the callers are told); a group of lazy
batches may be written lazily (a power cut may lose it until the next barrier); a batch written
alone, at its own level. Every transaction is fenced: a store that lost ownership writes nothing.
The primitives raise a `StorageError` for what concerns the store rather than the transaction
(ownership lost: `LockLost`; the store closed; a commit whose outcome cannot be learnt): every
caller of the group not yet told gets it, and nothing is tried again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from ..errors import CommitFailed, StorageError
from .rows import EncodedBatch
from .writer import Job, WriterThread, finish_all

C = TypeVar("C")


class Transactions(Protocol):
    """A backend's primitives, on its writer thread's connection. The same name means the same
    thing in every backend. `commits` counts the transactions written (a group once)."""

    location: str
    commits: int

    def refusal(self) -> StorageError | None:
        """Why nothing can be written now (the store is closed, or knows it lost ownership), else None."""
        ...

    def write(self, rows: EncodedBatch) -> None:
        """One fenced transaction that writes `rows` and commits, at `rows.barrier`'s level."""
        ...

    def begin(self, barrier: bool) -> None:
        """Begin a fenced transaction, written as a barrier if `barrier`."""
        ...

    def apply(self, rows: EncodedBatch) -> None:
        """Write `rows` inside the transaction (the backend's one copy of its upsert SQL)."""
        ...

    def savepoint(self) -> None: ...

    def rollback_to_savepoint(self) -> None: ...

    def release_savepoint(self) -> None: ...

    def commit(self) -> None:
        """Commit the transaction `begin` began."""
        ...

    def rollback(self, failure: BaseException) -> None:
        """Undo whatever `failure` left of a transaction (nothing left: nothing to do)."""
        ...

    def refused(self, failure: Exception) -> bool:
        """Whether `failure` refuses the rows just applied for what they hold, the transaction
        still usable once rolled back to its savepoint."""
        ...

    def translate(self, failure: Exception) -> StorageError:
        """The error a caller whose batch `failure` refused or rolled back is given."""
        ...

    def settle(self, attempt: Callable[[], None]) -> None:
        """Run `attempt`, which commits at most one transaction, and make sure of its outcome
        (PostgreSQL: after a broken connection, whether it landed; run again if it did not)."""
        ...


class GroupCommitter(WriterThread[C]):
    """A store's writer thread whose groups of commit jobs are written by this policy on the
    store's primitives (`_writes`)."""

    _writes: Transactions

    @property
    def commits(self) -> int:
        """Transactions written (a group commit counts once)."""
        return self._writes.commits

    def _write_group(self, group: list[Job]) -> None:
        commit_group(self._writes, group)


def merged(batches: Sequence[EncodedBatch]) -> EncodedBatch:
    """The rows of `batches` as one, as if written one after another: the last write of a task,
    submission or live document wins, in the place of its first write (a submission keeps the
    order it was first committed in); entries are kept as they are (a seq written twice is
    refused). A barrier if one of them is."""
    if len(batches) == 1:
        return batches[0]
    return EncodedBatch(
        tuple({t.id: t for b in batches for t in b.tasks}.values()),
        tuple(e for b in batches for e in b.entries),
        tuple({s[0]: s for b in batches for s in b.submissions}.values()),
        tuple({d[0]: d for b in batches for d in b.live}.values()),
        any(b.barrier for b in batches),
        tuple(x for b in batches for x in b.inbox),
    )


def commit_group(tx: Transactions, group: list[Job]) -> None:
    """Write the commit jobs of `group` (see the module) and finish each exactly once with its
    own outcome. Never raises: an unexpected error fails the jobs not yet told."""
    waiting = group  # the jobs not finished yet
    try:
        refusal = tx.refusal()
        if refusal is not None:
            _fail(group, refusal)
            return
        jobs: list[Job] = []
        batches: list[EncodedBatch] = []
        for job in group:
            encoded = job.encode(tx.location)  # a job refused here is finished
            if encoded is not None:
                jobs.append(job)
                batches.append(encoded)
        waiting = jobs
        if len(jobs) > 1:
            errors = _write_together(tx, batches)
            if errors is not None:
                for job, error in zip(jobs, errors, strict=True):
                    job.error = error
                waiting = []
                finish_all(jobs)
                return
        for i, (job, encoded) in enumerate(zip(jobs, batches, strict=True)):
            waiting = jobs[i:]
            job.error = _write_alone(tx, encoded)
            job.finish()
        waiting = []
    except StorageError as exc:
        _fail(waiting, exc)
    except BaseException as exc:  # noqa: BLE001 - a bug here must not leave callers waiting forever
        tx.rollback(exc)
        error = CommitFailed(f"A commit to {tx.location} failed: {type(exc).__name__}: {exc}", location=tx.location)
        error.__cause__ = exc
        _fail(waiting, error)


def _write_together(tx: Transactions, batches: list[EncodedBatch]) -> list[StorageError | None] | None:
    """Steps 1 and 2: each batch's error (None: committed), or None when the group's
    transaction failed as a whole (nothing of it written)."""
    rows = merged(batches)
    errors: list[StorageError | None] = [None] * len(batches)
    if _transaction(tx, lambda: tx.write(rows)) is None:
        return errors
    if _transaction(tx, lambda: _each_in_savepoint(tx, batches, rows.barrier, errors)) is None:
        return errors
    return None


def _each_in_savepoint(tx: Transactions, batches: list[EncodedBatch], barrier: bool,
                       errors: list[StorageError | None]) -> None:
    tx.begin(barrier)
    for i, rows in enumerate(batches):
        tx.savepoint()
        try:
            tx.apply(rows)
            errors[i] = None
        except Exception as exc:
            if not tx.refused(exc):
                raise
            tx.rollback_to_savepoint()
            errors[i] = tx.translate(exc)
        tx.release_savepoint()
    tx.commit()


def _write_alone(tx: Transactions, rows: EncodedBatch) -> StorageError | None:
    """Step 3: one batch in a transaction of its own; its error, None when committed."""
    failure = _transaction(tx, lambda: tx.write(rows))
    return None if failure is None else tx.translate(failure)


def _transaction(tx: Transactions, attempt: Callable[[], None]) -> Exception | None:
    """One transaction through `tx.settle`: None when it committed, else why it did not (it is
    rolled back). A `StorageError` is about the store, not this transaction: raised."""
    try:
        tx.settle(attempt)
    except Exception as exc:
        tx.rollback(exc)
        if isinstance(exc, StorageError):
            raise
        return exc
    return None


def _fail(jobs: list[Job], error: BaseException) -> None:
    for job in jobs:
        job.error = error
    finish_all(jobs)
