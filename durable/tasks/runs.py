"""Runs: a generation answering a set of inputs, from the commit that starts it to the one
that settles it.

`begin_run` places the inputs (user entries, submissions bound to the task) and creates the
generation task, in the caller's change. `end_run` settles every input of the run exactly once,
ends the task, resets the live document, records the cancel of a deferred job the run leaves open
as owed (a `cancel` task: the run never waits on the provider to end) and, in the same commit,
begins the next run for inputs queued meanwhile. `close_calls` gives every tool call of an
unfinished round exactly one result when a run ends early (abort, interrupt, restart limit).
"""

from __future__ import annotations

from .._frozen import evolve
from ..engine.runtime import Runtime
from ..engine.session import Change
from ..records import (
    Aborted,
    Answered,
    AssistantEntry,
    CancelInput,
    Checkpoint,
    DeferredJob,
    Diagnostic,
    Done,
    GenerationInput,
    GenerationLive,
    Outcome,
    Pending,
    Poll,
    Prepare,
    Request,
    Retry,
    Run,
    RunFailure,
    Running,
    StoredEntry,
    Submission,
    Task,
    Terminal,
    ToolProgress,
    ToolResultEntry,
    ToolRound,
    Unanswered,
    UnansweredReason,
    UserEntry,
)
from ._provider import provider_of


def begin_run(rt: Runtime, change: Change, conversation_id: str, subs: list[Submission]) -> Task:
    """In `change`: the inputs placed and the run's generation task, created `running` in its
    first request (`prepare` for a deferred model, whose job is submitted from there): the commit
    that acknowledges the inputs is also the barrier before the request is sent, one commit less
    per turn. Its runner starts right after this commit and first checks whether a compaction
    must come before the request (then it moves back to `prepare`)."""
    ids = tuple(s.id for s in subs)
    deferred_model = rt.settings.stream.deferred and getattr(rt.model, "deferred", False)
    first: Prepare | Request = Prepare(1) if deferred_model else Request(1, dict(rt.settings.model_options))
    task = rt.new_task(change, conversation_id=conversation_id, kind="generation",
                       input=GenerationInput(ids), checkpoint=first, state=Running())
    for sub in subs:
        seq = change.append(conversation_id, UserEntry(sub.text, sub.id))
        change.put_submission(evolve(sub, seq=seq, task_id=task.id))
    generation = None if deferred_model else GenerationLive(1)
    change.edit_live(conversation_id, run=Run(task.id, ids), generation=generation, tools=(), run_failure=None)
    return task


def job_of(checkpoint: Checkpoint | None) -> DeferredJob | None:
    """The deferred job a generation's checkpoint holds, if any."""
    return checkpoint.job if isinstance(checkpoint, (Poll, Retry)) else None


def end_run(rt: Runtime, change: Change, task: Task, outcome: Outcome, *, reason: UnansweredReason | None = None,
            detail: str = "", answer: tuple[int, AssistantEntry] | None = None) -> None:
    """Settle the run of generation `task`: `reason` None means answered (done), by `answer` (the
    final assistant entry and its seq, which the inputs' `Answered` status carries). A deferred
    job still open is cancelled afterwards, as work of its own recorded in this change."""
    cid = task.conversation_id
    assert isinstance(task.input, GenerationInput)
    job = job_of(task.checkpoint)
    if job is not None and not isinstance(outcome, Done):  # an answered job is finished
        rt.new_task(change, conversation_id=cid, kind="cancel",
                    input=CancelInput(job, task.id, provider_of(rt.model)), state=Pending())
    if reason is not None:
        status: Answered | Unanswered = Unanswered(reason, detail)
    else:
        status = Answered() if answer is None else Answered(answer[1].text, answer[0])
    first = None
    for sid in task.input.submission_ids:
        sub = rt.session.submissions.get(sid)
        if sub is not None:
            first = first if first is not None else sub.text
            change.put_submission(evolve(sub, status=status))
    change.put_task(evolve(task, state=Terminal(outcome)), progress=False)
    failure = None if reason is None else RunFailure(task.id, task.input.submission_ids, reason, detail, first)
    change.edit_live(cid, run=None, generation=None, tools=(), run_failure=failure)
    queued = [rt.session.submissions[s] for s in rt.session.conversation(cid).queued if s in rt.session.submissions]
    if queued:
        begin_run(rt, change, cid, queued)


async def close_calls(rt: Runtime, change: Change, task: Task, text: str, code: str) -> list[int]:
    """Answer every call of `task`'s unfinished tool round: ended tools with their result, the
    others with an error result `text` (keeping committed partial output). Their runners are
    cancelled first, so nothing else commits for them. Returns the ids of tool tasks ended here."""
    phase = task.checkpoint
    if not isinstance(phase, ToolRound):
        return []
    for tid in phase.pending:
        await rt.cancel_runner(tid)
    ended: list[int] = []
    await answer_calls(rt, change, task, text, code, ended)
    return ended


async def answer_calls(rt: Runtime, change: Change, task: Task, text: str, code: str,
                       ended: list[int] | None = None) -> list[StoredEntry]:
    """Append in `change` one result per call of `task`'s tool round, in call order: the result
    of each tool task that ended (in the head, or in `change` itself), else an error result
    `text`, ending that tool task (its id added to `ended`). Returns the appended entries."""
    phase = task.checkpoint
    assert isinstance(phase, ToolRound), f"task {task.id} has no tool round"
    appended = []
    for call, tid in zip(phase.calls, phase.pending, strict=True):
        child = (change.written(tid) or rt.session.tasks.get(tid) or rt.session.ended_children.pop(tid, None)
                 or await rt.session.storage.get_task(tid))
        found = child.checkpoint if child is not None else None
        progress = found if isinstance(found, ToolProgress) else ToolProgress()
        result = progress.result
        if result is None:
            content = text + (f"\nPartial output:\n{progress.output}" if progress.output else "")
            result = ToolResultEntry(call.id, call.name, content, True, (Diagnostic("error", code, text),))
            if child is not None and not child.terminal:
                change.put_task(evolve(child, state=Terminal(Aborted()),
                                       checkpoint=evolve(progress, result=result)))
                if ended is not None:
                    ended.append(tid)
        seq = change.append(task.conversation_id, result)
        appended.append(StoredEntry(task.conversation_id, seq, result))
    return appended


def round_closable(rt: Runtime, task: Task, ending: int) -> bool:
    """Whether tool task `ending`, about to end, is the last of its generation `task`'s round, so
    that its ending commit can carry the round's close (see `GenerationKind.close_round`): the
    generation waits on the round, is not being stopped or recovered, and every other tool task
    of the round has ended."""
    phase = task.checkpoint
    return (isinstance(phase, ToolRound) and ending in phase.pending and task.stop is None
            and task.restarts == 0 and not any(t in rt.session.tasks for t in phase.pending if t != ending))
