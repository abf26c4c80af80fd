"""Reading a session for the invariant checker: a `SessionImage` (every record, read in one go,
with what could not be read) and the views of it that several checks share."""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

import attrs

from ... import codec
from ...errors import StorageError
from ...records import CompactionEntry, Failed, Faulted, Live, StoredEntry, Submission, Task, UserEntry
from ...storage.rows import SessionRecords, decode_rows
from ...storage.sqlite.reader import SessionReader
from ...storage.sqlite.schema import SCHEMA_VERSION


@attrs.define
class SessionImage:
    """A session as plain records, read in one go, with what could not be read."""

    location: str
    tasks: dict[int, Task] = attrs.field(factory=dict)
    entries: dict[str, list[StoredEntry]] = attrs.field(factory=dict)
    submissions: dict[str, Submission] = attrs.field(factory=dict)
    live: dict[str, Live] = attrs.field(factory=dict)
    problems: list[str] = attrs.field(factory=list)
    readable: bool = True
    attachments: dict[str, tuple[str, int]] = attrs.field(factory=dict)  # sha256: media type, size


# --------------------------------------------------------------------------- loading


def load_session(source: Any) -> SessionImage:
    """Read a session file path or a storage object into a `SessionImage` (read-only), through
    `durable.storage.sqlite.reader`: a file is opened read-only and refused files, failed integrity
    checks and rows that do not decode become `problems` instead of exceptions."""
    from ...storage.memory import MemoryStorage
    from ...storage.postgres.store import PostgresStorage
    from ...storage.sqlite.store import SQLiteStorage
    from ..crash import CrashableStorage

    while isinstance(source, CrashableStorage):
        source = source.inner
    if isinstance(source, SQLiteStorage):
        return _load_file(source.path)
    if isinstance(source, (MemoryStorage, PostgresStorage)):  # PostgreSQL: a snapshot on a connection of its own
        return _image(decode_rows(source.stored_rows(), source.location))
    if isinstance(source, (str, os.PathLike)):
        return _load_file(os.fspath(source))
    raise TypeError(f"check_invariants reads a session file path or a storage, not a {type(source).__name__}")


def _load_file(path: str) -> SessionImage:
    try:
        reader = SessionReader(path)
    except StorageError as exc:  # missing, not a session, newer schema, damaged: said by the reader
        return SessionImage(path, problems=[str(exc)], readable=False)
    problems = []
    try:
        result = reader.integrity_check()
        if result != ["ok"]:
            problems.append(f"PRAGMA integrity_check of {path} failed: {'; '.join(result[:5])}")
        if reader.schema_version != SCHEMA_VERSION:
            problems.append(f"The session file {path} has schema version {reader.schema_version}, "
                            f"not the current {SCHEMA_VERSION}")
        with reader.snapshot():
            rows = reader.rows()
            problems += reader.context_totals()
    except StorageError as exc:
        return SessionImage(path, problems=[*problems, str(exc)], readable=False)
    finally:
        reader.close()
    image = _image(decode_rows(rows, path))
    image.problems[:0] = problems
    return image


def _image(records: SessionRecords) -> SessionImage:
    return SessionImage(records.location, records.tasks, records.entries, records.submissions, records.live,
                        records.problems, attachments=records.attachments)


# --------------------------------------------------------------------------- shared views


def state_name(task: Task) -> str:
    """"running", "done", "failed (restart_limit)"..."""
    state = codec.tag_of(task.state)
    outcome = task.outcome
    if outcome is not None:
        state = codec.tag_of(outcome)
        if isinstance(outcome, (Failed, Faulted)):
            state += f" ({outcome.error.detail.reason})"
    return state


def run_entries(image: SessionImage) -> dict[int, list[StoredEntry]]:
    """The entries of each run (generation task id), in order: from its first user entry to the
    first user entry of the next run. Compaction summaries belong to no run, nor entries a fork
    copied from another conversation."""
    runs: dict[int, list[StoredEntry]] = defaultdict(list)
    for entries in image.entries.values():
        current: int | None = None
        for stored in entries:
            entry = stored.entry
            if isinstance(entry, UserEntry) and entry.submission_id is not None:
                sub = image.submissions.get(entry.submission_id)
                if sub is not None and sub.task_id is not None:
                    # a fork's copy of another conversation's run belongs to no run of its own
                    current = sub.task_id if sub.conversation_id == stored.conversation_id else None
            if isinstance(entry, CompactionEntry) or current is None:
                continue
            runs[current].append(stored)
    return runs


def live_generations(image: SessionImage, cid: str) -> list[Task]:
    return [t for t in image.tasks.values() if t.kind == "generation" and t.conversation_id == cid and not t.terminal]


__all__ = ["SessionImage", "live_generations", "load_session", "run_entries", "state_name"]
