"""The invariants of docs/spec.md §6, checked on a session file, in plain words.

`check_invariants(source, ...)` reads a session (a file path, an `SQLiteStorage`, a
`MemoryStorage`, or a `CrashableStorage` around one) and returns the violations it finds, one
sentence each, naming the submission, task, call or job concerned; an empty list means every
invariant holds. It only reads: a file is opened read-only (and may be open in a harness). What
the file alone shows is always checked; what needs a witness from outside the file (the tool
executions, the deferred jobs, the model's requests) is checked when the witness is given.

`check_commit_history(batches)` checks what only the sequence of commits shows (the explorer
records it): a submission is settled by exactly one commit, an interrupted attempt is charged by
at most one, and a run's committed instructions never change.

Where each part lives: reading a session into a `SessionImage` in `image`, the checks of what the
file alone shows in `file_checks`, those that need a witness in `witnesses`, the commit history in
`history`, those of instructions, structured output and usage in `features`, and
`describe_session` in `describe`; all are re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...settings import Settings
from .describe import describe_session
from .features import (
    check_attachments,
    check_outputs,
    check_reasoning,
    check_requests_sent,
    check_subagents,
    check_usage,
)
from .file_checks import (
    Bounds,
    check_attempts,
    check_live,
    check_retries,
    check_submissions,
    check_tasks,
    check_tool_calls,
)
from .history import check_commit_history
from .image import SessionImage, load_session, run_entries
from .witnesses import check_executions, check_jobs, check_requests


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
    """The violations of docs/spec.md §6 in `source`, one sentence each; empty when all hold.

    What the file alone shows, always checked:

    1. submissions: every acknowledged id exists; a placed input has exactly one user entry; a
       queued input has a run that will take it (its own, still active, or an active one it waits
       behind); a settled input's status agrees with how its run ended, and an answered one has a
       final answer in the conversation;
    2. every tool call of a (non-aborted) assistant entry has exactly one result, after it, unless
       its tool round is still in progress; no result answers a call nobody made; a tool out of
       retries in a run is not retried again in it;
    3. within one model turn an attempt is charged as interrupted at most once, attempt numbers
       never go back, and no attempt passes `max_retries + 1` (from `settings`, default
       `Settings()`);
    6. tool tasks do not outlive their run; the live document shows exactly the active run and
       the tool calls waiting for approval;
       with `clean_close=True` no task is `running`; with `quiescent=True` (the harness settled:
       nothing active and no timer pending) every task has ended and every input has settled, and
       no task waits on tasks that have all ended;
    7. `PRAGMA integrity_check` passes, the file is a session of the current schema version, and
       every row decodes to its record (and agrees with its index columns); each conversation's
       stored context totals (schema 9) agree with its rows.

    What needs a witness from outside the file, checked when given:

    4. `executions` (an `ExecutionLog` or its path): an unsafe tool ran at most once per call (a
       clean close included), a safe one in at most `restart_limit` attempts (one per crash; a
       clean close resumes it in the same attempt), only for calls whose intent is in the file,
       and never for a call that was denied;
    5. `jobs` (a `FauxJobLedger` or its path): no attempt key was submitted twice, and no job is
       left open at the provider once its run ended (or its task moved on without it);
    3. `requests` (the `requests` of a faux model): no request was sent for an attempt past
       `max_retries + 1`; a run whose instructions are committed sent exactly them; each
       conversation's usage counts at least the distinct requests its runs sent.

    What agents are built with (`features`): a structured answer matches its input's schema and
    no run sent back more answers than `output_retries`; a conversation's usage counts at least
    the tokens of every answer in it; a partial reasoning block is only on an aborted or error
    entry, and no request (of `requests`) carried one; every image or file referenced is stored.

    `settings` gives the retry policy and restart limit in force (a sequence when successive
    harnesses used different ones: the most permissive bound applies). `acknowledged` lists
    submission ids whose `submit` returned. `clean_close=True`: the last harness closed cleanly.
    `quiescent=True`: the last harness settled (nothing active and no timer pending, so every
    task should have ended and every input settled)."""
    image = source if isinstance(source, SessionImage) else load_session(source)
    out = list(image.problems)
    if not image.readable:
        return out
    bounds = Bounds.of(settings)
    runs = run_entries(image)
    out += check_submissions(image, runs, list(acknowledged), quiescent)
    out += check_tool_calls(image)
    out += check_retries(image)
    out += check_attempts(image, runs, bounds)
    out += check_tasks(image, clean_close=clean_close, quiescent=quiescent)
    out += check_live(image)
    out += check_outputs(image, runs, bounds)
    out += check_usage(image)
    out += check_reasoning(image)
    out += check_attachments(image)
    out += check_subagents(image, quiescent)
    if executions is not None:
        out += check_executions(image, executions, bounds)
    if jobs is not None:
        out += check_jobs(image, jobs)
    if requests is not None:
        out += check_requests(requests, bounds)
        out += check_requests_sent(image, requests)
    return out


__all__ = ["SessionImage", "check_commit_history", "check_invariants", "describe_session", "load_session"]
