"""A sub-agent's call: the tool task hands its call to a child conversation and waits for it.

    pending/tool_progress -> waiting/subagent | end      (one commit: the child's run begins)
    waiting/subagent -> end                              (the child's input settled)

The call's runner checks the depth (`settings.subagent_depth`), then in one commit (a barrier)
begins the child's run, in the conversation `"<parent>/<tool>-<task id>"` (derived from the call:
a crash before that commit begins it again, after it finds it begun, never a second child), with
the call's `task` argument as its input `"subagent-<task id>"`, links the child to the call
(`Live.parent`), and moves the call to `waiting/subagent` (`Delegated`), its tool slot naming the
child. A waiting call is never charged and never billed as tool runtime; the child's tasks run
and are charged by their own rules, and its usage rolls up (`durable.tasks.usage`). When the
child's input settles, the call ends with its answer (JSON text for a structured one), or with an
error result naming the child and why it ended unanswered (`subagent_unanswered`). When the
parent's run is stopped (abort, interrupt, restart limit), the commit that answers the call as
aborted also marks the child's run stopped (`stop_child`): its abort handler runs next, in this
process or after a crash.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Protocol

from ..._frozen import evolve, frozen
from ...records import Answered, Checkpoint, ParentCall, Submission, Task, ToolResultEntry, Waiting
from ...tools import Tool
from .records import ToolProgress, edit_slot, error_result, input_of

if TYPE_CHECKING:
    from ...engine.head import Change
    from ...engine.runtime import Runtime

SUBAGENT_TOO_DEEP = ("Sub-agent {tool} was not started: conversation {conversation!r} is at depth {depth}, and "
                     "sub-agents may nest {limit} deep (settings.subagent_depth)")
SUBAGENT_UNANSWERED = "Sub-agent {tool} (conversation {conversation!r}) ended without an answer ({reason}): {detail}"


@frozen
class Delegated(Checkpoint):
    """Phase `subagent`: the call waits (`waiting`, never charged) since `since` for the answer
    to input `submission_id` of its child conversation `conversation_id`."""

    conversation_id: str
    submission_id: str
    since: float


class RunStarter(Protocol):
    """What the delegation needs of the generation kind: beginning a run in a change."""

    def begin_run(self, rt: Runtime, change: Change, conversation_id: str, subs: list[Submission]) -> Task: ...


def child_of(task: Task) -> str:
    """The child conversation a sub-agent's call `task` runs (derived from the call, never stored first)."""
    return f"{task.conversation_id}/{input_of(task).call.name}-{task.id}"


async def delegate(rt: Runtime, task: Task, tool: Tool, args: dict[str, object], starter: RunStarter,
                   end: EndCall) -> Task | None:
    """Begin the child's run and make the call wait for it, in one commit; or end the call with
    an error result when the parent is as deep as sub-agents may nest."""
    agent = tool.agent
    assert agent is not None, f"tool {tool.name} is not a sub-agent"
    cid = task.conversation_id
    link = rt.live(cid).parent
    depth = link.depth if link is not None else 0
    limit = rt.settings.subagent_depth
    if depth >= limit:
        msg = SUBAGENT_TOO_DEEP.format(tool=tool.name, conversation=cid, depth=depth, limit=limit)
        await end(rt, task, error_result(task, msg, "subagent_depth"))
        return None
    child, sid, now = child_of(task), f"subagent-{task.id}", rt.now()
    change = rt.change()
    change.edit_live(child, parent=ParentCall(cid, task.id, input_of(task).call.id, agent.name, depth + 1))
    starter.begin_run(rt, change, child, [Submission(sid, child, str(args["task"]), created_at=now,
                                                     output=agent.output)])
    task = change.put_task(evolve(task, state=Waiting(), checkpoint=Delegated(child, sid, now)))
    edit_slot(change, cid, task.id, status="waiting", conversation=child)
    await rt.commit(change)  # a barrier: the child's first request is sent once this is on disk
    return task


class EndCall(Protocol):
    async def __call__(self, rt: Runtime, task: Task, result: ToolResultEntry) -> None: ...


async def await_child(rt: Runtime, task: Task, end: EndCall) -> Task | None:
    """The `subagent` phase: wait until the child's input settles, then end the call with its
    answer or an error result saying why there is none. Run again after any restart."""
    phase = task.checkpoint
    assert isinstance(phase, Delegated)
    sub = await rt.settled(phase.submission_id)
    current = rt.task(task.id)
    if sub is None or not sub.settled or current is None or not isinstance(current.checkpoint, Delegated):
        return None  # ended meanwhile (the parent stopped), or the harness is stopping
    call = input_of(current).call
    status = sub.status
    if isinstance(status, Answered):
        content = status.text if status.output is None else json.dumps(status.output, ensure_ascii=False)
        result = ToolResultEntry(call.id, call.name, content)
    else:
        msg = SUBAGENT_UNANSWERED.format(tool=call.name, conversation=phase.conversation_id,
                                         reason=getattr(status, "reason", "unknown"),
                                         detail=getattr(status, "detail", ""))
        result = error_result(current, msg, "subagent_unanswered")
    await end(rt, evolve(current, checkpoint=ToolProgress()), result)
    return None


async def halt_child(rt: Runtime, task: Task | None) -> int | None:
    """Before a commit that ends the sub-agent's call `task` early: cancel the runner of its
    child's run (its in-flight commit completes) and return that run's task, which `stop_child`
    marks stopped in the same commit. None: not a waiting sub-agent call, or no run active."""
    if task is None or not isinstance(task.checkpoint, Delegated):
        return None
    run = rt.live(task.checkpoint.conversation_id).run
    if run is None:
        return None
    await rt.cancel_runner(run.task_id)
    return run.task_id


def stop_child(change: Change, task: Task) -> None:
    """In `change`, which ends the waiting sub-agent call `task` early: mark its child's active run
    stopped (aborted). Its runner, started by the commit, runs its abort handler, which stops the
    child's own calls and sub-agents in turn; after a crash, the mark is found on the file."""
    phase = task.checkpoint
    if not isinstance(phase, Delegated):
        return
    run = change.live(phase.conversation_id).run
    if run is None:
        return
    gen = change.task(run.task_id)
    if gen.stop is None and not gen.terminal:
        change.put_task(evolve(gen, stop="aborted"), progress=False)


__all__ = ["SUBAGENT_TOO_DEEP", "SUBAGENT_UNANSWERED", "Delegated", "EndCall", "RunStarter", "await_child",
           "child_of", "delegate", "halt_child", "stop_child"]
