"""A round of tool calls as the generation sees it: starting the round's tool tasks
(`start_calls`), giving a call of a round closed early its result (`close_call`), and what the
tool kind asks of the kind that started the round (`RoundParent`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from ..._frozen import evolve
from ...records import (
    Aborted,
    Checkpoint,
    Diagnostic,
    Pending,
    Running,
    State,
    Submission,
    Task,
    Terminal,
    ToolCall,
    ToolResultEntry,
    ToolSlot,
    UserEntry,
    Waiting,
)
from .approval import new_approval
from .records import (
    KIND,
    RETRY_CODES,
    TOOL_RETRIES_EXHAUSTED,
    Approval,
    ToolInput,
    ToolProgress,
    approval_slot,
    drop_approval,
    error_result,
    progress_of,
)
from .subagent import stop_child

if TYPE_CHECKING:
    from ...engine.head import Change
    from ...engine.runtime import Runtime
    from ...tools import Tool


class RoundParent(Protocol):
    """What the tool kind asks of the kind whose task started a round of tool calls (the
    generation): the last tool to end writes the round's close in its own ending commit."""

    def begin_run(self, rt: Runtime, change: Change, conversation_id: str, subs: list[Submission]) -> Task:
        """In `change`: a run answering `subs` in `conversation_id` (a sub-agent's child)."""
        ...

    def round_of(self, parent: Task) -> tuple[int, ...]:
        """The tool tasks of `parent`'s round (empty when it has none open)."""
        ...

    def closable(self, rt: Runtime, parent: Task, ending: int) -> bool:
        """Whether tool task `ending`, about to end, is the last of `parent`'s round and the
        round's close may go in its ending commit."""
        ...

    async def close_round(self, rt: Runtime, change: Change, parent: Task) -> Task:
        """Write the round's close into `change`; the parent as written."""
        ...


def start_calls(rt: Runtime, change: Change, parent: Task, calls: Sequence[ToolCall]) -> tuple[list[int], bool]:
    """In `change`: a tool task per call of `parent` (its intent committed before anything runs)
    and the live document's tool slots (and approvals). Returns their ids, and whether the host
    is handed something (a client tool, a call to decide): then `change` must be a barrier."""
    ids, slots = [], []
    cid = parent.conversation_id
    approvals = list(change.live(cid).approvals)
    for call in calls:
        tool = rt.tools_for(cid).get(call.name)
        client = bool(tool and tool.client)
        deadline = rt.now() + rt.settings.client_tool_timeout if client else None
        # A safe tool is created `running` (its runner starts after this commit; if cut off first,
        # it just runs again). An unsafe one commits `running` itself right before it executes, so
        # a crash before that never counts as "may have partially run". A call of a tool that
        # always asks waits for its decision from this commit on; one whose check may ask starts
        # `pending` (its runner asks the check), as a sub-agent's does (its runner starts the child).
        safe = tool is not None and tool.replay == "safe" and not client and tool.agent is None
        ask = tool is not None and tool.approval is True
        checkpoint: Checkpoint
        state: State
        if ask:
            checkpoint, state = new_approval(rt, tool), Waiting()
        elif client:
            checkpoint, state = ToolProgress(), Waiting(client=True)
        elif safe and tool is not None and tool.approval is False:
            checkpoint, state = ToolProgress(started_at=rt.now()), Running()
        else:
            checkpoint, state = ToolProgress(), Pending()
        inp = ToolInput(call, tool.replay if tool else "unsafe", client, deadline, tool.timeout if tool else None)
        child = rt.new_task(change, conversation_id=cid, kind=KIND, input=inp, checkpoint=checkpoint,
                            parent_id=parent.id, state=state)
        ids.append(child.id)
        slots.append(ToolSlot(call.id, call.name, child.id, status="waiting" if client or ask else "running"))
        if isinstance(checkpoint, Approval):
            approvals.append(approval_slot(child, checkpoint))
    change.edit_live(cid, generation=None, tools=tuple(slots), approvals=tuple(approvals))
    return ids, any(s.status == "waiting" for s in slots)


def close_call(change: Change, child: Task | None, call: ToolCall, text: str,
               code: str) -> tuple[ToolResultEntry, bool]:
    """The result of one call of a round being closed: the ended tool task's result, else an
    error result `text` (keeping committed partial output), ending the tool task in `change` if
    it is still live (a call waiting for a decision too: its approval leaves the live document).
    Returns the result and whether the task was ended here."""
    progress = progress_of(child) if child is not None else ToolProgress()
    if progress.result is not None:
        return progress.result, False
    content = text + (f"\nPartial output:\n{progress.output}" if progress.output else "")
    result = ToolResultEntry(call.id, call.name, content, True, (Diagnostic("error", code, text),))
    if child is None or child.terminal:
        return result, False
    stop_child(change, child)  # a sub-agent's call: its child's run stops too
    change.put_task(evolve(child, state=Terminal(Aborted()),
                           checkpoint=evolve(progress, result=result, ended_at=change.head.now())))
    drop_approval(change, child.conversation_id, child.id)
    return result, True


async def siblings_written(rt: Runtime, siblings: tuple[int, ...], parent: Task, ending: int) -> Task | None:
    """Wait until the endings of the other tools of `parent`'s round are written, not only in the
    head: the round's close carries their results, and a sibling's ending still in flight may be
    refused and tried again after the close landed (a crash then would leave the sibling live
    with its result already in the context). Returns the parent as the head has it then."""
    for sibling in siblings:
        if sibling != ending and rt.ending_in_flight(sibling):
            await rt.wait_tasks([sibling])
    return rt.task(parent.id)


async def retry_result(rt: Runtime, task: Task, tool: Tool, why: str, code: str) -> ToolResultEntry:
    """The error result of a call the model is asked to make again (`RetryTool`, invalid
    arguments): `why`, or "out of retries" once the tool was asked `max_retries` times in this
    run. Counted from the run's committed results (those after its inputs in the model context,
    a compaction in the middle of a run forgetting the ones before it): a crash forgets none."""
    used = 0
    context = await rt.context(task.conversation_id)
    for i in range(len(context) - 1, -1, -1):
        entry = context[i].entry
        if isinstance(entry, UserEntry):
            break
        if (isinstance(entry, ToolResultEntry) and entry.tool_name == tool.name
                and any(d.code in RETRY_CODES for d in entry.diagnostics)):
            used += 1
    if used >= tool.max_retries:
        why = TOOL_RETRIES_EXHAUSTED.format(tool=tool.name, max_retries=tool.max_retries, why=why)
        code = "retries_exhausted"
    return error_result(task, why, code)


__all__ = ["RoundParent", "close_call", "retry_result", "siblings_written", "start_calls"]
