"""The invariants of docs/spec.md §6, checked on a session file, in plain words.

`check_invariants(source, ...)` reads a session (a file path, an `SQLiteStorage`, a
`MemoryStorage`, or a `CrashableStorage` around one) and returns the violations it finds, one
sentence each, naming the submission, task, call or job concerned; an empty list means every
invariant holds. It only reads: a file is opened read-only (and may be open in a harness).

What the file alone shows, always checked:

1. submissions: every acknowledged id exists; a placed input has exactly one user entry; a
   queued input has a run that will take it (its own, still active, or an active one it waits
   behind); a settled input's status agrees with how its run ended, and an answered one has a
   final answer in the conversation;
2. every tool call of a (non-aborted) assistant entry has exactly one result, after it, unless
   its tool round is still in progress; no result answers a call nobody made;
3. within one model turn an attempt is charged as interrupted at most once, attempt numbers never
   go back, and no attempt passes `max_retries + 1` (from `settings`, default `Settings()`);
6. tool tasks do not outlive their run; the live document shows exactly the active run;
   with `clean_close=True` no task is `running`; with `quiescent=True` (the harness settled:
   nothing active and no timer pending) every task has ended and every input has settled, and
   no task waits on tasks that have all ended;
7. `PRAGMA integrity_check` passes, the file is a session of the current schema version, and
   every row decodes to its record (and agrees with its index columns).

What needs a witness from outside the file, checked when given:

4. `executions` (an `ExecutionLog` or its path): an unsafe tool ran at most once per call (a
   clean close included), a safe one in at most `restart_limit` attempts (one per crash; a clean
   close resumes it in the same attempt), and only for calls whose intent is in the file;
5. `jobs` (a `FauxJobLedger` or its path): no attempt key was submitted twice, and no job is
   left open at the provider once its run ended (or its task moved on without it);
3. `requests` (the `requests` of a faux model): no request was sent for an attempt past
   `max_retries + 1`.

`check_commit_history(batches)` checks what only the sequence of commits shows (the explorer
records it): a submission is settled by exactly one commit, and an interrupted attempt is charged
by at most one.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from .. import codec
from ..errors import StorageError
from ..records import (
    Aborted,
    Answered,
    AssistantEntry,
    CompactionEntry,
    Done,
    Failed,
    Faulted,
    GenerationInput,
    Live,
    Pending,
    Poll,
    Retry,
    Running,
    Sleeping,
    StoredEntry,
    Submission,
    Task,
    ToolInput,
    ToolResultEntry,
    ToolRound,
    Unanswered,
    UserEntry,
    Waiting,
)
from ..settings import Settings
from ..storage.reader import SessionReader, SessionRecords, decode_rows
from ..storage.schema import SCHEMA_VERSION
from ..tasks.attempts import attempt_of


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


# --------------------------------------------------------------------------- loading


def load_session(source: Any) -> SessionImage:
    """Read a session file path or a storage object into a `SessionImage` (read-only), through
    `durable.storage.reader`: a file is opened read-only and refused files, failed integrity
    checks and rows that do not decode become `problems` instead of exceptions."""
    from ..storage.memory import MemoryStorage
    from ..storage.sqlite import SQLiteStorage
    from .crash import CrashableStorage

    while isinstance(source, CrashableStorage):
        source = source.inner
    if isinstance(source, SQLiteStorage):
        return _load_file(source.path)
    if isinstance(source, MemoryStorage):
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
    except StorageError as exc:
        return SessionImage(path, problems=[*problems, str(exc)], readable=False)
    finally:
        reader.close()
    image = _image(decode_rows(rows, path))
    image.problems[:0] = problems
    return image


def _image(records: SessionRecords) -> SessionImage:
    return SessionImage(records.location, records.tasks, records.entries, records.submissions, records.live,
                        records.problems)


# --------------------------------------------------------------------------- the check


def check_invariants(
    source: Any,
    *,
    executions: Any = None,
    jobs: Any = None,
    requests: Sequence[Any] | None = None,
    settings: Settings | Sequence[Settings] | None = None,
    acknowledged: Iterable[str] = (),
    clean_close: bool = False,
    quiescent: bool = False,
) -> list[str]:
    """The violations of docs/spec.md §6 in `source` (see the module docstring); empty when all hold.

    `settings` gives the retry policy and restart limit in force (a sequence when successive
    harnesses used different ones: the most permissive bound applies). `acknowledged` lists
    submission ids whose `submit` returned. `clean_close=True`: the last harness closed cleanly.
    `quiescent=True`: the last harness settled (nothing active and no timer pending, so every
    task should have ended and every input settled)."""
    image = source if isinstance(source, SessionImage) else load_session(source)
    out = list(image.problems)
    if not image.readable:
        return out
    bounds = _Bounds.of(settings)
    runs = _runs(image)
    out += _check_submissions(image, runs, list(acknowledged), quiescent)
    out += _check_tool_calls(image)
    out += _check_attempts(image, runs, bounds)
    out += _check_tasks(image, clean_close=clean_close, quiescent=quiescent)
    out += _check_live(image)
    if executions is not None:
        out += _check_executions(image, executions, bounds)
    if jobs is not None:
        out += _check_jobs(image, jobs)
    if requests is not None:
        for request in requests:
            if request.attempt > bounds.max_attempt:
                out.append(f"The model was sent a request for attempt {request.attempt} (key {request.key}), "
                           f"past max_retries + 1 = {bounds.max_attempt}")
    return out


@attrs.frozen
class _Bounds:
    max_attempt: int
    restart_limit: int

    @classmethod
    def of(cls, settings: Any) -> _Bounds:
        if settings is None:
            items = [Settings()]
        elif isinstance(settings, (list, tuple)):
            items = list(settings) or [Settings()]
        else:
            items = [settings]
        attempts = [(s.retry.max_retries + 1) if s.retry.enabled else 1 for s in items]
        return cls(max(attempts), max(s.restart_limit for s in items))


def _state_name(task: Task) -> str:
    """"running", "done", "failed (restart_limit)"..."""
    state = codec.tag_of(task.state)
    if state == "terminal":
        outcome = task.state.outcome  # type: ignore[union-attr]
        state = codec.tag_of(outcome)
        if isinstance(outcome, (Failed, Faulted)):
            state += f" ({outcome.error.detail.reason})"
    return state


def _runs(image: SessionImage) -> dict[int, list[StoredEntry]]:
    """The entries of each run (generation task id), in order: from its first user entry to the
    first user entry of the next run. Compaction summaries belong to no run."""
    runs: dict[int, list[StoredEntry]] = defaultdict(list)
    for cid, entries in image.entries.items():
        current: int | None = None
        for stored in entries:
            entry = stored.entry
            if isinstance(entry, UserEntry) and entry.submission_id is not None:
                sub = image.submissions.get(entry.submission_id)
                if sub is not None and sub.task_id is not None:
                    current = sub.task_id
            if isinstance(entry, CompactionEntry) or current is None:
                continue
            runs[current].append(stored)
    return runs


def _live_generations(image: SessionImage, cid: str) -> list[Task]:
    return [t for t in image.tasks.values() if t.kind == "generation" and t.conversation_id == cid and not t.terminal]


# ------------------------------------------------------------------ 1. submissions


def _check_submissions(image: SessionImage, runs: dict[int, list[StoredEntry]], acknowledged: list[str],
                       quiescent: bool = False) -> list[str]:
    out = []
    for sid in acknowledged:
        if sid not in image.submissions:
            out.append(f"Submission {sid} was acknowledged (submit returned) but is not in the file")
    user_entries: dict[str, list[int]] = defaultdict(list)
    for entries in image.entries.values():
        for stored in entries:
            if isinstance(stored.entry, UserEntry) and stored.entry.submission_id is not None:
                user_entries[stored.entry.submission_id].append(stored.seq)
    for sub in image.submissions.values():
        seqs = user_entries.get(sub.id, [])
        status = codec.tag_of(sub.status)
        if sub.task_id is None:
            if seqs:
                out.append(f"Submission {sub.id} was never placed in a run but has a user entry (seq {seqs[0]})")
            if sub.settled:
                out.append(f"Submission {sub.id} settled ({status}) without ever being placed in a run")
            elif not _live_generations(image, sub.conversation_id):
                out.append(f"Submission {sub.id} is queued in conversation {sub.conversation_id!r}, but no run is active "
                           f"there to take it next: it would never settle")
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
                           f"{_state_name(task)}: it will never settle")
            elif quiescent:
                out.append(f"Submission {sub.id} is still queued after the harness settled (its run, task "
                           f"{task.id}, is {_state_name(task)})")
            continue
        if not task.terminal:
            out.append(f"Submission {sub.id} settled ({status}) while its run (task {task.id}) is still {_state_name(task)}")
            continue
        outcome = task.outcome
        if isinstance(sub.status, Answered):
            if not isinstance(outcome, Done):
                out.append(f"Submission {sub.id} is answered, but its run (task {task.id}) ended {_state_name(task)}")
            elif not any(isinstance(e.entry, AssistantEntry) and e.entry.stop_reason in ("stop", "length")
                         for e in runs.get(task.id, [])):
                out.append(f"Submission {sub.id} is answered, but its run (task {task.id}) has no final answer "
                           f"in the conversation")
        elif isinstance(sub.status, Unanswered):
            if not isinstance(outcome, (Failed, Aborted, Faulted)):
                out.append(f"Submission {sub.id} is unanswered ({sub.status.reason}), but its run (task {task.id}) "
                           f"ended {_state_name(task)}")
            if not sub.status.detail:
                out.append(f"Submission {sub.id} is unanswered ({sub.status.reason}) without a detail for the user")
    return out


# ------------------------------------------------------------------ 2. tool calls


def _check_tool_calls(image: SessionImage) -> list[str]:
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


# ------------------------------------------------------------------ 3. attempts and charges


def _check_attempts(image: SessionImage, runs: dict[int, list[StoredEntry]], bounds: _Bounds) -> list[str]:
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
            attempts = [e.attempt for e in answers]
            if max(attempts) > bounds.max_attempt:
                out.append(f"Turn {number} of the run of task {task_id} has an answer of attempt {max(attempts)}, "
                           f"past max_retries + 1 = {bounds.max_attempt}")
            if attempts != sorted(attempts):
                out.append(f"The attempt numbers of turn {number} of the run of task {task_id} go back: {attempts}")
            charged = Counter(e.attempt for e in answers if e.interrupted)
            for attempt, n in sorted(charged.items()):
                if n > 1:
                    out.append(f"Attempt {attempt} of turn {number} of the run of task {task_id} was charged as "
                               f"interrupted {n} times (an interruption is charged once)")
    for task in image.tasks.values():
        attempt = attempt_of(task.checkpoint)
        if task.kind == "generation" and attempt > bounds.max_attempt:
            out.append(f"Task {task.id} (generation) is at attempt {attempt}, past max_retries + 1 = {bounds.max_attempt}")
    return out


# ------------------------------------------------------------------ 6. tasks and the live document


def _check_tasks(image: SessionImage, *, clean_close: bool, quiescent: bool) -> list[str]:
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
        if isinstance(state, Waiting) and not state.on:
            inp = task.input
            if not (isinstance(inp, ToolInput) and inp.client and inp.deadline is not None):
                out.append(f"{name} waits for the host without a deadline")
        if isinstance(state, Sleeping) and not isinstance(task.checkpoint, (Retry, Poll)):
            out.append(f"{name} sleeps in phase {codec.tag_of(task.checkpoint) if task.checkpoint else None}")
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
        gens = _live_generations(image, cid)
        if len(gens) > 1:
            out.append(f"Conversation {cid!r} has {len(gens)} active runs (tasks {[t.id for t in gens]})")
    return out


def _check_live(image: SessionImage) -> list[str]:
    out = []
    conversations = set(image.live) | {t.conversation_id for t in image.tasks.values() if t.kind == "generation"}
    for cid in sorted(conversations):
        live = image.live.get(cid, Live())
        gens = _live_generations(image, cid)
        if live.run is not None:
            task = image.tasks.get(live.run.task_id)
            if task is None or task.terminal:
                how = "is not in the file" if task is None else f"ended {_state_name(task)}"
                out.append(f"The live document of conversation {cid!r} shows the run of task {live.run.task_id}, "
                           f"which {how}: a UI would show it busy forever")
            elif isinstance(task.input, GenerationInput) and tuple(task.input.submission_ids) != tuple(live.run.inputs):
                out.append(f"The live document of conversation {cid!r} shows inputs {list(live.run.inputs)} for the "
                           f"run of task {task.id}, which answers {list(task.input.submission_ids)}")
        elif gens:
            out.append(f"Conversation {cid!r} has an active run (task {gens[0].id}) that its live document does not show")
    return out


# ------------------------------------------------------------------ 4. executions


def _check_executions(image: SessionImage, executions: Any, bounds: _Bounds) -> list[str]:
    from .observe import ExecutionLog

    log = executions if isinstance(executions, ExecutionLog) else ExecutionLog(executions)
    by_call = {t.input.call.id: t for t in image.tasks.values() if isinstance(t.input, ToolInput)}
    out = []
    runs: dict[str, list[int]] = defaultdict(list)
    for execution in log.executions():
        runs[execution.call_id].append(execution.attempt)
    for call_id, attempts in sorted(runs.items()):
        task = by_call.get(call_id)
        if task is None:
            out.append(f"A tool ran for call {call_id}, but no tool task in the file holds that call "
                       f"(it ran without a committed intent)")
            continue
        inp = task.input
        assert isinstance(inp, ToolInput)
        if inp.replay == "unsafe" and len(attempts) > 1:
            out.append(f"Unsafe tool {inp.call.name} ran {len(attempts)} times for call {call_id} (task {task.id}, "
                       f"attempts {attempts})")
        elif inp.replay == "safe" and max(attempts) > bounds.restart_limit:
            # A safe tool runs again after each crash (attempt = restarts + 1); a clean close
            # resumes it without a charge, in the same attempt.
            out.append(f"Safe tool {inp.call.name} ran in attempt {max(attempts)} for call {call_id} (task "
                       f"{task.id}), past the restart limit {bounds.restart_limit}")
    return out


# ------------------------------------------------------------------ 5. deferred jobs

_KEY_TASK = re.compile(r"^g(\d+)-")


def _check_jobs(image: SessionImage, jobs: Any) -> list[str]:
    from .observe import FauxJobLedger

    ledger = jobs if isinstance(jobs, FauxJobLedger) else FauxJobLedger(jobs)
    out = []
    for key, handles in sorted(ledger.submits_by_key().items()):
        if len(handles) > 1:
            out.append(f"The deferred job of attempt {key} was submitted {len(handles)} times ({', '.join(handles)})")
    for job in ledger.open_jobs():
        match = _KEY_TASK.match(job.key)
        task = image.tasks.get(int(match.group(1))) if match else None
        if task is None:
            out.append(f"Deferred job {job.handle} (attempt {job.key}) is still open at the provider, and no task "
                       f"in the file owns it")
        elif task.terminal:
            out.append(f"Deferred job {job.handle} (attempt {job.key}) is still open at the provider, but its run "
                       f"(task {task.id}) ended {_state_name(task)}")
        else:
            known = getattr(task.checkpoint, "job", None)
            if known is None or known.handle not in (None, job.handle):
                out.append(f"Deferred job {job.handle} (attempt {job.key}) is still open at the provider, but task "
                           f"{task.id} moved on without it")
    return out


# --------------------------------------------------------------------------- commit history


def check_commit_history(batches: Iterable[Any]) -> list[str]:
    """Check a sequence of committed batches (in commit order, across harness lifetimes): every
    submission is settled by exactly one commit, and each attempt of a task is charged as
    interrupted by at most one commit."""
    out = []
    settled: dict[str, list[str]] = defaultdict(list)
    charged: Counter[tuple[int, int, int]] = Counter()  # (task, turn, attempt): attempts restart each turn
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
            if moved and isinstance(cp, Retry) and cp.error.kind == "interrupted":
                charged[(task.id, turns[task.id], cp.attempt)] += 1
            outcome = task.outcome
            if ended and isinstance(outcome, Failed) and outcome.error.detail.reason == "interrupted":
                charged[(task.id, turns[task.id], getattr(cp, "attempt", 0))] += 1
    for sid, statuses in settled.items():
        if len(statuses) > 1:
            out.append(f"Submission {sid} was settled {len(statuses)} times ({', '.join(statuses)})")
    for (task_id, turn, attempt), n in sorted(charged.items()):
        if n > 1:
            out.append(f"Attempt {attempt} of turn {turn + 1} of task {task_id} was charged as interrupted by "
                       f"{n} commits")
    return out


# --------------------------------------------------------------------------- transcripts


def describe_session(source: Any) -> str:
    """A readable dump of a session: entries, submissions, tasks and live documents."""
    from .crash import entry_kind

    image = source if isinstance(source, SessionImage) else load_session(source)
    lines = [f"session {image.location}"]
    lines += [f"  ! {p}" for p in image.problems]
    for cid, entries in sorted(image.entries.items()):
        lines.append(f"  conversation {cid!r}:")
        for stored in entries:
            e = stored.entry
            text = getattr(e, "text", None) or getattr(e, "content", None) or getattr(e, "summary", "")
            extra = ""
            if isinstance(e, AssistantEntry):
                extra = f" attempt={e.attempt}" + (f" calls={[c.name for c in e.tool_calls]}" if e.tool_calls else "")
                extra += f" error={e.error!r}" if e.error else ""
            if isinstance(e, ToolResultEntry):
                extra = f" call={e.call_id}"
            lines.append(f"    {stored.seq:>3} {entry_kind(e)} {_short(text)!r}{extra}")
    for sub in image.submissions.values():
        status = codec.tag_of(sub.status)
        if isinstance(sub.status, Unanswered):
            status += f" ({sub.status.reason}: {sub.status.detail})"
        lines.append(f"  submission {sub.id} task={sub.task_id} {status}")
    for task in sorted(image.tasks.values(), key=lambda t: t.id):
        phase = codec.tag_of(task.checkpoint) if task.checkpoint is not None else "-"
        outcome = task.outcome
        why = ""
        if isinstance(outcome, (Failed, Faulted)):
            why = f" ({outcome.error.detail.reason}: {outcome.error.message})"
        lines.append(f"  task {task.id} {task.kind} {_state_name(task)}/{phase} restarts={task.restarts}{why}")
    for cid, live in sorted(image.live.items()):
        lines.append(f"  live {cid!r}: run={live.run.task_id if live.run else None} "
                     f"failure={live.run_failure.reason if live.run_failure else None}")
    return "\n".join(lines)


def _short(text: Any, n: int = 60) -> str:
    shown = str(text or "")
    return shown if len(shown) <= n else shown[: n - 1] + "…"


__all__ = ["SessionImage", "check_commit_history", "check_invariants", "describe_session", "load_session"]
