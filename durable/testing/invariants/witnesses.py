"""The invariants that need a witness from outside the file (docs/spec.md §6, numbers 4 and 5, and the
model's requests of number 3): tool executions, deferred jobs at the provider, attempts sent."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ...records import Failed
from ...tasks.cancel import CancelInput
from ...tasks.tool import ToolInput, ToolProgress
from ...tasks.tool.records import DENIED_CODES
from .file_checks import Bounds
from .image import SessionImage, state_name

# ------------------------------------------------------------------ 4. executions


def check_executions(image: SessionImage, executions: Any, bounds: Bounds) -> list[str]:
    from ..observe import ExecutionLog

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
        result = task.checkpoint.result if isinstance(task.checkpoint, ToolProgress) else None
        if result is not None and any(d.code in DENIED_CODES for d in result.diagnostics):
            out.append(f"Tool {inp.call.name} ran for call {call_id} (task {task.id}), which was denied")
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


def check_jobs(image: SessionImage, jobs: Any) -> list[str]:
    from ..observe import FauxJobLedger

    ledger = jobs if isinstance(jobs, FauxJobLedger) else FauxJobLedger(jobs)
    out = []
    for key, handles in sorted(ledger.submits_by_key().items()):
        if len(handles) > 1:
            out.append(f"The deferred job of attempt {key} was submitted {len(handles)} times ({', '.join(handles)})")
    # A job whose run ended is left open only while its cancel is owed (a live cancel task), or
    # once that cancel was given up, visibly (failed: cut off too often, refused, timed out).
    owed = {t.input.job.key for t in image.tasks.values()
            if isinstance(t.input, CancelInput) and (not t.terminal or isinstance(t.outcome, Failed))}
    for job in ledger.open_jobs():
        match = _KEY_TASK.match(job.key)
        task = image.tasks.get(int(match.group(1))) if match else None
        if job.key in owed:
            continue
        if task is None:
            out.append(f"Deferred job {job.handle} (attempt {job.key}) is still open at the provider, and no task "
                       f"in the file owns it")
        elif task.terminal:
            out.append(f"Deferred job {job.handle} (attempt {job.key}) is still open at the provider, but its run "
                       f"(task {task.id}) ended {state_name(task)}")
        else:
            known = getattr(task.checkpoint, "job", None)
            if known is None or known.handle not in (None, job.handle):
                out.append(f"Deferred job {job.handle} (attempt {job.key}) is still open at the provider, but task "
                           f"{task.id} moved on without it")
    return out


# ------------------------------------------------------------------ 3. requests sent to the model


def check_requests(requests: Sequence[Any], bounds: Bounds) -> list[str]:
    """No request was sent for an attempt past `max_retries + 1` (the `requests` of a faux model)."""
    return [f"The model was sent a request for attempt {request.attempt} (key {request.key}), "
            f"past max_retries + 1 = {bounds.max_attempt}"
            for request in requests if request.attempt > bounds.max_attempt]


__all__ = ["check_executions", "check_jobs", "check_requests"]
