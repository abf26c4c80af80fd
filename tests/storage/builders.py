"""Small record builders for the storage tests: readable values with only what a test varies."""

from __future__ import annotations

import base64
import random
from typing import Any

from durable.records import (
    AssistantEntry,
    CompactionEntry,
    Live,
    Pending,
    Queued,
    Run,
    State,
    StoredEntry,
    Submission,
    SubmissionStatus,
    Task,
    ToolCall,
    UserEntry,
)
from durable.tasks.compaction import CompactionInput
from durable.tasks.generation.records import GenerationInput
from durable.tasks.tool import ToolInput


def task(
    task_id: int,
    *,
    kind: str = "generation",
    state: State = Pending(),
    conversation_id: str = "root",
    parent_id: int | None = None,
    **more: Any,
) -> Task:
    inputs = {
        "generation": GenerationInput(submission_ids=(f"s{task_id}",)),
        "tool": ToolInput(ToolCall(id=f"call_{task_id}", name="grep", arguments='{"pattern": "x"}')),
        "compaction": CompactionInput(trigger="manual"),
    }
    return Task(task_id, conversation_id, kind, inputs[kind], state, parent_id=parent_id, **more)


def user(seq: int, text: str | None = None, conversation_id: str = "root") -> StoredEntry:
    return StoredEntry(conversation_id, seq, UserEntry(text if text is not None else f"input {seq}"))


def assistant(seq: int, text: str = "answer", conversation_id: str = "root") -> StoredEntry:
    return StoredEntry(conversation_id, seq, AssistantEntry(text, "stop"))


def compaction(seq: int, first_kept_seq: int, conversation_id: str = "root") -> StoredEntry:
    return StoredEntry(conversation_id, seq, CompactionEntry(f"summary up to {first_kept_seq}", first_kept_seq))


def submission(
    submission_id: str, *, status: SubmissionStatus = Queued(), conversation_id: str = "root", seq: int | None = None
) -> Submission:
    return Submission(submission_id, conversation_id, f"text of {submission_id}", seq=seq, status=status)


def busy(task_id: int, *inputs: str) -> Live:
    return Live(run=Run(task_id=task_id, inputs=inputs))


def noise(n: int, seed: int = 0) -> str:
    """`n` characters that do not compress (base64 of random bytes, the same for a seed): a long
    body of it is stored as it is, never packed (`durable.storage.packing`), so it fills a disk."""
    return base64.b64encode(random.Random(seed).randbytes(n)).decode()[:n]
