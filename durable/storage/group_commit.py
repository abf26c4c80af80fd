"""The one group-commit policy of the SQL stores: how the commit jobs that queued up together on a
writer thread are written, whatever the backend; each backend supplies its primitives
(`Transactions`: fenced transactions, applying rows, savepoints, what a failure means).

1. Every batch of the group merged into one transaction (`merged`). 2. If that is refused, one
transaction again, each batch inside its own savepoint: a batch refused for what it holds (a
constraint, a value the driver cannot send) is rolled back to its savepoint, and the others
commit together. 3. If that transaction fails as a whole (a full disk, an I/O error), each batch
in a transaction of its own. A group of one batch is written alone.

Every caller's batch is applied whole or not at all, in queue order (a later write of a key
wins), and it learns the outcome of exactly its own batch; one refused for what it holds
(`CommitRefused`) never takes another with it. One that fails for a passing cause (a full disk,
an I/O error) holds back every later batch not first in line (`Batch.first_in_line`): refused with
the same error, untried, until one first in line comes, so the file never holds a later commit
without an earlier one. A group holding a barrier is written as a barrier (durable when the
callers are told); a group of lazy batches may be written lazily; a batch alone, at its own
level. Every transaction is fenced: a store that lost ownership writes nothing. A `StorageError`
from a primitive concerns the store, not the transaction (ownership lost, the store closed, a
commit whose outcome cannot be learnt): every caller not yet told gets it; nothing is retried.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from ..errors import CommitFailed, CommitRefused, StorageError
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
    store's primitives (`_writes`). `_held`: the refusal later batches are held back by."""

    _writes: Transactions
    _held: StorageError | None = None

    @property
    def commits(self) -> int:
        """Transactions written (a group commit counts once)."""
        return self._writes.commits

    def _write_group(self, group: list[Job]) -> None:
        self._held = commit_group(self._writes, group, self._held)


def merged(batches: Sequence[EncodedBatch]) -> EncodedBatch:
    """The rows of `batches` as one, as if written one after another: the last write of a task,
    submission or live document wins, in the place of its first write (a submission keeps the
    order it was first committed in); entries are kept as they are (a seq written twice is
    refused), copies of entries (a fork) made after them; a row's long texts are those of its
    last write, an attachment's bytes its first. A barrier if one of them is."""
    if len(batches) == 1:
        return batches[0]
    return EncodedBatch(
        tuple({t.id: t for b in batches for t in b.tasks}.values()),
        tuple(e for b in batches for e in b.entries),
        tuple({s[0]: s for b in batches for s in b.submissions}.values()),
        tuple({d[0]: d for b in batches for d in b.live}.values()),
        any(b.barrier for b in batches),
        tuple(x for b in batches for x in b.inbox),
        tuple({owner: long for b in batches for owner, long in b.texts}.items()),
        tuple(c for b in batches for c in b.copies),
        tuple({a[0]: a for b in reversed(batches) for a in b.attachments}.values()),  # the first write of a hash
    )


def commit_group(tx: Transactions, group: list[Job], held: StorageError | None = None) -> StorageError | None:
    """Write the commit jobs of `group` (see the module) and finish each exactly once with its
    own outcome. `held`: the refusal the batches are held back by (None: none); returns the one
    after this group. Never raises: an unexpected error fails the jobs not yet told."""
    waiting = group  # the jobs not finished yet
    try:
        refusal = tx.refusal()
        if refusal is not None:
            _fail(group, refusal)
            return held
        if held is not None:
            first = next((i for i, job in enumerate(group) if job.batch is not None and job.batch.first_in_line),
                         len(group))
            _fail(group[:first], _held_back(held, tx.location))
            waiting = group = group[first:]
            if not group:
                return held
            held = None
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
                return None
        for i, (job, encoded) in enumerate(zip(jobs, batches, strict=True)):
            waiting = jobs[i:]
            assert job.batch is not None
            if held is not None and not job.batch.first_in_line:
                job.error = _held_back(held, tx.location)
            else:
                held = None
                job.error = _write_alone(tx, encoded)
                if job.error is not None and not isinstance(job.error, CommitRefused):
                    held = job.error
            job.finish()
        waiting = []
        return held
    except StorageError as exc:
        _fail(waiting, exc)
    except BaseException as exc:  # noqa: BLE001 - a bug here must not leave callers waiting forever
        tx.rollback(exc)
        error = CommitFailed(f"A commit to {tx.location} failed: {type(exc).__name__}: {exc}", location=tx.location)
        error.__cause__ = exc
        _fail(waiting, error)
    return None


def _held_back(refusal: StorageError, location: str) -> StorageError:
    """The error of a batch held back behind one refused for a passing cause: of the same class
    (a full disk stays `DiskFull`), saying why."""
    kind = type(refusal) if isinstance(refusal, CommitFailed) else CommitFailed
    return kind(f"A commit to {location} was held back behind an earlier one that failed ({refusal})",
                location=location)


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
