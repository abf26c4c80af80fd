"""What only the sequence of commits shows (the explorer records it): a submission is settled by
exactly one commit, an interrupted attempt is charged by at most one, and a run's committed
instructions never change (`features.check_instruction_history`)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from ... import codec
from ...records import Failed, Task
from ...tasks.generation.records import Retry, ToolRound
from .features import check_instruction_history


def check_commit_history(batches: Iterable[Any]) -> list[str]:
    """Check a sequence of committed batches (in commit order, across harness lifetimes): every
    submission is settled by exactly one commit, and each attempt of a task is charged as
    interrupted by at most one commit."""
    out = []
    settled: dict[str, list[str]] = defaultdict(list)
    charged: Counter[tuple[int, tuple[int, int, int], int]] = Counter()  # (task, turn, attempt)
    turns: Counter[int] = Counter()
    last: dict[int, Task] = {}
    for batch in batches:
        for sub in {s.id: s for s in batch.submissions}.values():
            if sub.settled:
                settled[sub.id].append(codec.tag_of(sub.status))
        for task in {t.id: t for t in batch.tasks}.values():
            before = last.get(task.id)
            last[task.id] = task
            if task.kind != "generation":
                continue
            cp = task.checkpoint
            moved = before is None or before.checkpoint != cp  # only a change of phase or an ending charges
            ended = task.terminal and (before is None or not before.terminal)
            if moved and isinstance(cp, ToolRound) and not isinstance(getattr(before, "checkpoint", None), ToolRound):
                turns[task.id] += 1
            # A model turn: a request and its retries. Attempts start again at 1 after a tool round,
            # an answer sent back for not matching the output schema, and a fallback to another member.
            notes = getattr(cp, "notes", None)
            turn = (turns[task.id], getattr(notes, "output_retries", 0), getattr(notes, "model", 0))
            if moved and isinstance(cp, Retry) and cp.error.kind == "interrupted":
                charged[(task.id, turn, cp.attempt)] += 1
            outcome = task.outcome
            if ended and isinstance(outcome, Failed) and outcome.error.detail.reason == "interrupted":
                charged[(task.id, turn, getattr(cp, "attempt", 0))] += 1
    for sid, statuses in settled.items():
        if len(statuses) > 1:
            out.append(f"Submission {sid} was settled {len(statuses)} times ({', '.join(statuses)})")
    for (task_id, (rounds, sent_back, member), attempt), n in sorted(charged.items()):
        if n > 1:
            which = f"turn {rounds + 1}" + (f" (answer sent back {sent_back} times)" if sent_back else "") + (
                f" (fallback member {member})" if member else "")
            out.append(f"Attempt {attempt} of {which} of task {task_id} was charged as interrupted by {n} commits")
    return out + check_instruction_history(batches)


__all__ = ["check_commit_history"]
