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

import itertools
from typing import TYPE_CHECKING, Any

from ..._frozen import evolve
from ...engine.instructions import dynamic
from ...models.fallback import member_of, model_name
from ...records import (
    EMPTY_USAGE,
    Answered,
    AssistantEntry,
    Done,
    GenerationLive,
    Outcome,
    Run,
    RunFailure,
    Running,
    StoredEntry,
    Submission,
    Task,
    Terminal,
    Unanswered,
    UnansweredReason,
    UserEntry,
)
from ...records.model_settings import NO_SETTINGS, merge
from .. import cancel, tool, usage
from . import request
from .records import KIND, GenerationInput, Prepare, Request, ToolRound, job_of

if TYPE_CHECKING:
    from ...engine.head import Change
    from ...engine.runtime import Runtime


def begin_run(rt: Runtime, change: Change, conversation_id: str, subs: list[Submission]) -> Task:
    """In `change`: the inputs placed and the run's generation task, created `running` in its
    first request (`prepare` for a deferred model, whose job is submitted from there, when an
    instruction section is code, which runs there, and when a usage limit is set, which is checked
    there before the request): the commit that acknowledges the inputs is also
    the barrier before the request is sent, one commit less per turn. Its runner starts right
    after this commit and first checks whether a compaction must come before the request (then
    it moves back to `prepare`)."""
    ids = tuple(s.id for s in subs)
    primary = member_of(rt.model_for(conversation_id, change), 0)  # a run starts on a FallbackModel's first
    deferred_model = rt.settings.stream.deferred and primary.deferred
    prepared = deferred_model or dynamic(rt.instructions_for(conversation_id, change)) or request.limited(rt)
    settings = merge(rt.settings.model_defaults, subs[0].model_settings)
    first: Prepare | Request = Prepare(1) if prepared else Request(1, settings.as_options())
    task = rt.new_task(change, conversation_id=conversation_id, kind=KIND,
                       input=GenerationInput(ids, settings if settings != NO_SETTINGS else None), checkpoint=first,
                       state=Running())
    for sub in subs:
        seq = change.append(conversation_id, UserEntry(sub.text, sub.id, sub.parts))
        change.put_submission(evolve(sub, seq=seq, task_id=task.id))
    generation = None if prepared else GenerationLive(1)
    run = Run(task.id, ids, EMPTY_USAGE if rt.settings.usage_limits is not None else None)
    change.edit_live(conversation_id, run=run, generation=generation, tools=(), run_failure=None)
    if isinstance(first, Request):
        usage.count(rt, change, conversation_id, requests=1, model=model_name(primary))
    return task


def end_run(rt: Runtime, change: Change, task: Task, outcome: Outcome, *, reason: UnansweredReason | None = None,
            detail: str = "", answer: tuple[int, AssistantEntry] | None = None, output: Any = None) -> None:
    """Settle the run of generation `task`: `reason` None means answered (done), by `answer` (the
    final assistant entry and its seq, which the inputs' `Answered` status carries, with `output`,
    a structured answer's JSON value). A deferred job still open is cancelled afterwards, as work
    of its own recorded in this change. A run ended `archived` archives its conversation in this
    change, answering the inputs queued in it the same way (`archive`); otherwise the next run
    takes the inputs queued meanwhile that share the first one's output schema and model settings
    (a run answers with one of each)."""
    cid = task.conversation_id
    assert isinstance(task.input, GenerationInput)
    job = job_of(task.checkpoint)
    if job is not None and not isinstance(outcome, Done):  # an answered job is finished
        cancel.owe(rt, change, cid, job, task.id)
    if reason is not None:
        status: Answered | Unanswered = Unanswered(reason, detail)
    else:
        status = Answered() if answer is None else Answered(answer[1].text, answer[0], output)
    first = None
    for sid in task.input.submission_ids:
        sub = rt.submission(sid)
        if sub is not None:
            first = first if first is not None else sub.text
            change.put_submission(evolve(sub, status=status))
    change.put_task(evolve(task, state=Terminal(outcome)), progress=False)
    failure = None if reason is None else RunFailure(task.id, task.input.submission_ids, reason, detail, first)
    change.edit_live(cid, run=None, generation=None, tools=(), run_failure=failure)
    if reason == "archived":  # the conversation is archived by this commit: nothing queued runs
        archive(rt, change, cid, detail)
        return
    queued = rt.queued(cid)
    if queued:
        same = list(itertools.takewhile(lambda s: (s.output, s.model_settings) == (queued[0].output,
                                                                                    queued[0].model_settings), queued))
        begin_run(rt, change, cid, same)


def archive(rt: Runtime, change: Change, conversation_id: str, detail: str) -> None:
    """In `change`: the conversation archived, and every input queued in it answered
    `unanswered{archived}` (with `detail`): an expected exit, nothing charged."""
    for sub in rt.queued(conversation_id):
        change.put_submission(evolve(sub, status=Unanswered("archived", detail)))
    change.edit_live(conversation_id, archived=True)


async def close_calls(rt: Runtime, change: Change, task: Task, text: str, code: str) -> list[int]:
    """Answer every call of `task`'s unfinished tool round: ended tools with their result, the
    others with an error result `text` (keeping committed partial output). Their runners are
    cancelled first, so nothing else commits for them. Returns the ids of tool tasks ended here."""
    phase = task.checkpoint
    if not isinstance(phase, ToolRound):
        return []
    for tid in phase.pending:
        await tool.halt_child(rt, rt.task(tid))  # a sub-agent's child run is stopped in the same commit
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
    children = []
    for call, tid in zip(phase.calls, phase.pending, strict=True):
        child = change.written(tid) or rt.task(tid) or await rt.ended_child(tid)
        result, ended_here = tool.close_call(change, child, call, text, code)
        if ended_here and ended is not None:
            ended.append(tid)
        seq = change.append(task.conversation_id, result)
        appended.append(StoredEntry(task.conversation_id, seq, result))
        closed = change.written(tid) or child
        if closed is not None:
            children.append(closed)
    usage.count(rt, change, task.conversation_id, tool_calls=len(phase.calls),
                tool_seconds=usage.tool_runtime(children))
    return appended


def round_closable(rt: Runtime, task: Task, ending: int) -> bool:
    """Whether tool task `ending`, about to end, is the last of its generation `task`'s round, so
    that its ending commit can carry the round's close (see `GenerationKind.close_round`): the
    generation waits on the round, is not being stopped or recovered, and every other tool task
    of the round has ended."""
    phase = task.checkpoint
    return (isinstance(phase, ToolRound) and ending in phase.pending and task.stop is None
            and task.restarts == 0 and not any(rt.task(t) is not None for t in phase.pending if t != ending))
