"""The invariants the session file alone shows (docs/spec.md §6, numbers 1, 2, 3 and 6): submissions,
tool calls (and their retries), attempts and charges, tasks and the live document (and its
approvals). Each check returns its violations, one sentence each."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import attrs

from ... import codec
from ...engine.kinds import kind_class
from ...engine.transitions import position_of
from ...records import (
    Aborted,
    Answered,
    ApprovalSlot,
    AssistantEntry,
    CompactionEntry,
    Done,
    Failed,
    Faulted,
    Live,
    Pending,
    Running,
    StoredEntry,
    ToolResultEntry,
    Unanswered,
    UserEntry,
    Waiting,
)
from ...settings import Settings
from ...tasks.generation.records import GenerationInput, ToolRound, attempt_of
from ...tasks.tool import Approval
from ...tasks.tool.records import RETRY_CODES, approval_slot
from .image import SessionImage, live_generations, state_name


@attrs.frozen
class Bounds:
    """The most permissive bounds of the settings in force: attempts per turn, restart limit,
    answers sent back for not matching their output schema."""

    max_attempt: int
    restart_limit: int
    output_retries: int = 2

    @classmethod
    def of(cls, settings: Any) -> Bounds:
        if settings is None:
            items = [Settings()]
        elif isinstance(settings, (list, tuple)):
            items = list(settings) or [Settings()]
        else:
            items = [settings]
        attempts = [(s.retry.max_retries + 1) if s.retry.enabled else 1 for s in items]
        return cls(max(attempts), max(s.restart_limit for s in items), max(s.output_retries for s in items))


# ------------------------------------------------------------------ 1. submissions


def check_submissions(image: SessionImage, runs: dict[int, list[StoredEntry]], acknowledged: list[str],
                       quiescent: bool = False) -> list[str]:
    out = []
    for sid in acknowledged:
        if sid not in image.submissions:
            out.append(f"Submission {sid} was acknowledged (submit returned) but is not in the file")
    user_entries: dict[str, list[int]] = defaultdict(list)
    for entries in image.entries.values():
        for stored in entries:
            key = stored.entry.submission_id if isinstance(stored.entry, UserEntry) else None
            owner = image.submissions.get(key) if key is not None else None
            if key is not None and (owner is None or owner.conversation_id == stored.conversation_id):
                user_entries[key].append(stored.seq)  # not a fork's copy of another conversation's input
    for sub in image.submissions.values():
        seqs = user_entries.get(sub.id, [])
        status = codec.tag_of(sub.status)
        if sub.task_id is None:
            if seqs:
                out.append(f"Submission {sub.id} was never placed in a run but has a user entry (seq {seqs[0]})")
            if sub.settled:
                if not (isinstance(sub.status, Unanswered) and sub.status.reason == "archived"):
                    out.append(f"Submission {sub.id} settled ({status}) without ever being placed in a run")
            elif not live_generations(image, sub.conversation_id):
                out.append(f"Submission {sub.id} is queued in conversation {sub.conversation_id!r}, but no run is "
                           f"active there to take it next: it would never settle")
            continue
        task = image.tasks.get(sub.task_id)
        if len(seqs) != 1:
            out.append(f"Submission {sub.id} has {len(seqs)} user entries (expected exactly one)")
        elif sub.seq is not None and seqs[0] != sub.seq:
            out.append(f"Submission {sub.id} says its user entry is seq {sub.seq}, but it is seq {seqs[0]}")
        if task is None:
            out.append(f"Submission {sub.id} is bound to task {sub.task_id}, which is not in the file")
            continue
        if not sub.settled:
            if task.terminal:
                out.append(f"Submission {sub.id} is still queued though its run (task {task.id}) ended "
                           f"{state_name(task)}: it will never settle")
            elif quiescent:
                out.append(f"Submission {sub.id} is still queued after the harness settled (its run, task "
                           f"{task.id}, is {state_name(task)})")
            continue
        if not task.terminal:
            out.append(f"Submission {sub.id} settled ({status}) while its run (task {task.id}) is still "
                       f"{state_name(task)}")
            continue
        outcome = task.outcome
        if isinstance(sub.status, Answered):
            if not isinstance(outcome, Done):
                out.append(f"Submission {sub.id} is answered, but its run (task {task.id}) ended {state_name(task)}")
            elif not any(isinstance(e.entry, AssistantEntry) and e.entry.stop_reason in ("stop", "length")
                         for e in runs.get(task.id, [])):
                out.append(f"Submission {sub.id} is answered, but its run (task {task.id}) has no final answer "
                           f"in the conversation")
        elif isinstance(sub.status, Unanswered):
            if not isinstance(outcome, (Failed, Aborted, Faulted)):
                out.append(f"Submission {sub.id} is unanswered ({sub.status.reason}), but its run (task {task.id}) "
                           f"ended {state_name(task)}")
            if not sub.status.detail:
                out.append(f"Submission {sub.id} is unanswered ({sub.status.reason}) without a detail for the user")
    return out


# ------------------------------------------------------------------ 2. tool calls


def check_tool_calls(image: SessionImage) -> list[str]:
    out = []
    in_progress = {
        (t.conversation_id, t.checkpoint.assistant_seq)
        for t in image.tasks.values()
        if t.kind == "generation" and not t.terminal and isinstance(t.checkpoint, ToolRound)
    }
    for cid, entries in image.entries.items():
        calls: dict[str, tuple[int, str]] = {}
        results: dict[str, list[int]] = defaultdict(list)
        for stored in entries:
            entry = stored.entry
            if isinstance(entry, AssistantEntry) and entry.stop_reason not in ("aborted", "error"):
                for call in entry.tool_calls:
                    if call.id in calls:
                        out.append(f"Tool call {call.id} appears in assistant entries {calls[call.id][0]} and "
                                   f"{stored.seq} of conversation {cid!r}")
                    calls[call.id] = (stored.seq, call.name)
            elif isinstance(entry, ToolResultEntry):
                results[entry.call_id].append(stored.seq)
        for call_id, (seq, name) in calls.items():
            found = results.get(call_id, [])
            if not found:
                if (cid, seq) not in in_progress:
                    out.append(f"Tool call {call_id} ({name}) of assistant entry {seq} in conversation {cid!r} "
                               f"has no result")
            elif len(found) > 1:
                out.append(f"Tool call {call_id} ({name}) of assistant entry {seq} in conversation {cid!r} has "
                           f"{len(found)} results (seqs {found})")
            elif found[0] < seq:
                out.append(f"The result of tool call {call_id} ({name}) comes before its call in conversation {cid!r}")
        for call_id, seqs in results.items():
            if call_id not in calls:
                out.append(f"The tool result at seq {seqs[0]} of conversation {cid!r} answers call {call_id}, "
                           f"which no assistant entry made")
    return out


def check_retries(image: SessionImage) -> list[str]:
    """Within a run (and since its last compaction, which forgets the results before it), a tool
    out of retries stays out: no result after its `retries_exhausted` asks for another retry."""
    out = []
    for cid, entries in image.entries.items():
        exhausted: dict[str, int] = {}
        for stored in entries:
            entry = stored.entry
            if isinstance(entry, (UserEntry, CompactionEntry)):
                exhausted = {}
            elif isinstance(entry, ToolResultEntry):
                codes = {d.code for d in entry.diagnostics}
                if codes & set(RETRY_CODES) and entry.tool_name in exhausted:
                    out.append(f"Tool {entry.tool_name} was out of retries at seq {exhausted[entry.tool_name]} of "
                               f"conversation {cid!r}, yet the result at seq {stored.seq} asks for another")
                if "retries_exhausted" in codes:
                    exhausted.setdefault(entry.tool_name, stored.seq)
    return out


# ------------------------------------------------------------------ 3. attempts and charges


def check_attempts(image: SessionImage, runs: dict[int, list[StoredEntry]], bounds: Bounds) -> list[str]:
    out = []
    for task_id, entries in runs.items():
        turn: list[AssistantEntry] = []
        turns = []
        for stored in entries:
            if isinstance(stored.entry, AssistantEntry):
                turn.append(stored.entry)
                if stored.entry.stop_reason not in ("aborted", "error"):
                    turns.append(turn)
                    turn = []
        if turn:
            turns.append(turn)
        for number, answers in enumerate(turns, 1):
            # A FallbackModel's members count their attempts each from 1, one member after the other.
            for model, attempts, on in _attempts_by_model(answers):
                if max(attempts) > bounds.max_attempt:
                    out.append(f"Turn {number} of the run of task {task_id} has an answer of attempt {max(attempts)}"
                               f"{on}, past max_retries + 1 = {bounds.max_attempt}")
                if attempts != sorted(attempts):
                    out.append(f"The attempt numbers of turn {number} of the run of task {task_id} go back{on}: "
                               f"{attempts}")
                charged = Counter(e.attempt for e in answers if e.interrupted and e.model == model)
                for attempt, n in sorted(charged.items()):
                    if n > 1:
                        out.append(f"Attempt {attempt}{on} of turn {number} of the run of task {task_id} was charged "
                                   f"as interrupted {n} times (an interruption is charged once)")
    for task in image.tasks.values():
        attempt = attempt_of(task.checkpoint)
        if task.kind == "generation" and attempt > bounds.max_attempt:
            out.append(f"Task {task.id} (generation) is at attempt {attempt}, past max_retries + 1 = "
                       f"{bounds.max_attempt}")
    return out


def _attempts_by_model(answers: list[AssistantEntry]) -> list[tuple[str | None, list[int], str]]:
    """The attempt numbers of a turn's answers per model that wrote them, in order, with the words
    naming the model in a sentence ("" when one model wrote them all)."""
    models = list(dict.fromkeys(e.model for e in answers))
    return [(m, [e.attempt for e in answers if e.model == m], f" on model {m}" if len(models) > 1 else "")
            for m in models]


# ------------------------------------------------------------------ 6. tasks and the live document


def check_tasks(image: SessionImage, *, clean_close: bool, quiescent: bool) -> list[str]:
    out = []
    tasks = image.tasks
    for task in sorted(tasks.values(), key=lambda t: t.id):
        state = task.state
        name = f"Task {task.id} ({task.kind})"
        if clean_close and isinstance(state, Running):
            out.append(f"{name} is still running after a clean close")
        if quiescent and isinstance(state, (Pending, Running)):
            out.append(f"{name} is still {codec.tag_of(state)} after the harness settled: it never finished")
        elif quiescent and not task.terminal and not (isinstance(state, Waiting) and state.on):
            # Settled means no timer is pending either: a sleeping task or a client call with a
            # deadline would have been woken by it.
            out.append(f"{name} is still {codec.tag_of(state)} after the harness settled, with no timer left "
                       f"to wake it")
        if isinstance(state, Waiting) and state.on:
            missing = [i for i in state.on if i not in tasks]
            if missing:
                out.append(f"{name} waits on tasks {missing}, which are not in the file")
            elif quiescent and all(tasks[i].terminal for i in state.on):
                out.append(f"{name} waits on tasks {list(state.on)}, which have all ended: it would wait forever")
        kind = kind_class(task.kind)
        if kind is None:
            out.append(f"{name} is of a kind this process does not know")
        else:
            if not kind.transitions.knows(task):
                out.append(f"{name} is at {'/'.join(position_of(task))}, a position its kind's table does not have")
            out.extend(kind.check(task))
        if task.parent_id is not None and not task.terminal:
            parent = tasks.get(task.parent_id)
            if parent is None or parent.terminal:
                out.append(f"{name} is still {codec.tag_of(state)}, but its run (task {task.parent_id}) ended")
        if task.kind == "generation" and not task.terminal and isinstance(task.checkpoint, ToolRound):
            for child_id in task.checkpoint.pending:
                if child_id not in tasks:
                    out.append(f"{name} waits for tool task {child_id}, which is not in the file")
    conversations = {t.conversation_id for t in tasks.values()} | set(image.live)
    for cid in sorted(conversations):
        gens = live_generations(image, cid)
        if len(gens) > 1:
            out.append(f"Conversation {cid!r} has {len(gens)} active runs (tasks {[t.id for t in gens]})")
    return out


def check_live(image: SessionImage) -> list[str]:
    out = []
    conversations = set(image.live) | {t.conversation_id for t in image.tasks.values() if t.kind == "generation"}
    for cid in sorted(conversations):
        live = image.live.get(cid, Live())
        gens = live_generations(image, cid)
        if live.run is not None:
            task = image.tasks.get(live.run.task_id)
            if task is None or task.terminal:
                how = "is not in the file" if task is None else f"ended {state_name(task)}"
                out.append(f"The live document of conversation {cid!r} shows the run of task {live.run.task_id}, "
                           f"which {how}: a UI would show it busy forever")
            elif isinstance(task.input, GenerationInput) and tuple(task.input.submission_ids) != tuple(live.run.inputs):
                out.append(f"The live document of conversation {cid!r} shows inputs {list(live.run.inputs)} for the "
                           f"run of task {task.id}, which answers {list(task.input.submission_ids)}")
        elif gens:
            out.append(f"Conversation {cid!r} has an active run (task {gens[0].id}) that its live document does "
                       f"not show")
    out += check_approvals(image)
    return out


def check_approvals(image: SessionImage) -> list[str]:
    """`live.approvals` shows exactly the tool calls waiting for a decision, as they wait."""
    out = []
    waiting: dict[str, dict[int, ApprovalSlot]] = defaultdict(dict)
    for task in image.tasks.values():
        if task.kind == "tool" and not task.terminal and isinstance(task.checkpoint, Approval):
            waiting[task.conversation_id][task.id] = approval_slot(task, task.checkpoint)
    for cid in sorted(set(image.live) | set(waiting)):
        shown = image.live.get(cid, Live()).approvals
        expected = waiting.get(cid, {})
        for slot in shown:
            if slot.task_id not in expected:
                found = image.tasks.get(slot.task_id)
                how = "is not in the file" if found is None else f"is {state_name(found)}, not waiting for a decision"
                out.append(f"The live document of conversation {cid!r} shows call {slot.call_id} ({slot.tool}) "
                           f"waiting for approval, but its task {slot.task_id} {how}")
            elif slot != expected[slot.task_id]:
                out.append(f"The live document of conversation {cid!r} shows call {slot.call_id} waiting for "
                           f"approval as {slot}, but its task holds {expected[slot.task_id]}")
        counted = Counter(slot.task_id for slot in shown)
        for task_id, slot in sorted(expected.items()):
            if counted[task_id] != 1:
                out.append(f"Tool call {slot.call_id} ({slot.tool}, task {task_id}) waits for approval, but the "
                           f"live document of conversation {cid!r} shows it {counted[task_id]} times")
    return out


__all__ = ["Bounds", "check_approvals", "check_attempts", "check_live", "check_retries", "check_submissions",
           "check_tasks", "check_tool_calls"]
