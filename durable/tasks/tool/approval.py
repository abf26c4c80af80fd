"""Tool approval: a call that needs a person's decision before it runs.

    waiting/approval -> pending/tool_progress | end

A tool defined with `approval=True` has its calls created at `waiting/approval` in the commit
that starts the round (a barrier: the host is asked once it is on disk); with `approval=check`
the call's runner validates the arguments, asks `check(args, ctx)` (sync or async, bounded by
`CHECK_SECONDS`; if it raises, the call gets an error result naming the tool) and commits
`waiting/approval` when it says so. A waiting call is not running, so it is never charged and
survives any number of restarts; its runner only holds the deadline timer `approval:<task id>`
when `settings.approval_timeout` was set as it began waiting (then it is denied at the deadline,
"no decision within N s"). `live.approvals` shows each waiting call, kept exact by every commit.

A decision (`Harness.approve` / `Harness.deny`, the same from `durable.sync` and, through the
inbox, from `durable.remote`) is one host commit, a barrier, made before the tool runs: approved,
the task goes `pending` with the arguments to run with (`ToolProgress.arguments`; edited ones
are validated against the schema first) and its runner runs it; denied, it ends with the error
result "The user denied tool T: reason" (diagnostic `denied`) and the round closes as after any
ending. Anything else (an unknown call, one that does not ask, one decided or ended, invalid
edited arguments) is `ApprovalRejected`, and nothing changes.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._frozen import evolve
from ...errors import ApprovalRejected
from ...records import Task, Waiting
from ...tools import ArgumentError, Tool, ToolContext, parse_arguments
from .records import (
    APPROVAL_CHECK_FAILED,
    APPROVAL_CHECK_SLOW,
    DECISION_ENDED,
    DECISION_INVALID,
    DECISION_NOT_ASKED,
    DECISION_TWICE,
    DECISION_UNCHECKABLE,
    DECISION_UNKNOWN,
    DENIED_CODES,
    Approval,
    ToolProgress,
    input_of,
    show_approval,
)

if TYPE_CHECKING:
    from ...engine.head import Change
    from ...engine.runtime import Runtime

CHECK_SECONDS = 10.0
"""How long (event-loop seconds) a tool's approval check may take before the call is given up."""


def new_approval(rt: Runtime, tool: Tool | None) -> Approval:
    """A wait beginning now, with the deadline `settings.approval_timeout` gives (if any) and the
    tool's schema (what an edit of the call is checked against, by a process without the tool)."""
    now, limit = rt.now(), rt.settings.approval_timeout
    schema = None if tool is None else json.dumps(tool.parameters, sort_keys=True, ensure_ascii=False)
    return Approval(now, None if limit is None else now + limit, schema)


async def asks(rt: Runtime, task: Task, tool: Tool, arguments: str) -> bool | str:
    """Whether this call waits for a decision: `tool.approval` itself, or what its check says of
    the (validated) arguments; a sentence for the model when the check raised or hung."""
    check = tool.approval
    if isinstance(check, bool):
        return check
    inp = input_of(task)
    ctx = ToolContext(task.id, inp.call.id, task.conversation_id, task.restarts + 1, rt.deps)
    try:
        with rt.fail_after(CHECK_SECONDS):
            answer = check(json.loads(arguments) if arguments.strip() else {}, ctx)
            if inspect.isawaitable(answer):
                answer = await answer
    except TimeoutError:
        return APPROVAL_CHECK_SLOW.format(tool=tool.name, seconds=CHECK_SECONDS)
    except Exception as exc:  # noqa: BLE001 - the model reads it as an error result
        return APPROVAL_CHECK_FAILED.format(tool=tool.name, error=f"{type(exc).__name__}: {exc}")
    return bool(answer)


def begin_waiting(rt: Runtime, change: Change, task: Task, tool: Tool) -> Task:
    """In `change`: the task waits for a decision (and the live document shows it). A barrier:
    the host is asked once it is committed."""
    approval = new_approval(rt, tool)
    task = change.put_task(evolve(task, state=Waiting(), checkpoint=approval))
    show_approval(change, task, approval)
    change.barrier = True
    return task


def waiting_call(rt: Runtime, call_id: object) -> Task | None:
    """The live tool task of call `call_id`, if any."""
    for task in rt.live_tasks(kind="tool"):
        if input_of(task).call.id == call_id:
            return task
    return None


async def refusal(rt: Runtime, call_id: object, task: Task | None) -> ApprovalRejected:
    """Why call `call_id` (live as `task`, or not live) cannot be decided. Looking for an ended
    call reads the kind's ended tasks: an error path only."""
    cid = str(call_id)
    if task is None:
        for ended in await rt.ended_tasks("tool"):
            call = input_of(ended).call
            if call.id == call_id:
                progress = ended.checkpoint if isinstance(ended.checkpoint, ToolProgress) else ToolProgress()
                codes = {d.code for d in progress.result.diagnostics} if progress.result else set()
                if codes & set(DENIED_CODES):
                    how = "denied"
                elif progress.arguments is not None:
                    how = "approved (and it has ended)"
                else:
                    return ApprovalRejected(DECISION_ENDED.format(call_id=cid, tool=call.name), call_id=cid,
                                            tool=call.name)
                return ApprovalRejected(DECISION_TWICE.format(call_id=cid, tool=call.name, how=how), call_id=cid,
                                        tool=call.name)
        return ApprovalRejected(DECISION_UNKNOWN.format(call_id=cid), call_id=cid)
    name = input_of(task).call.name
    if isinstance(task.checkpoint, ToolProgress) and task.checkpoint.arguments is not None:
        return ApprovalRejected(DECISION_TWICE.format(call_id=cid, tool=name, how="approved"), call_id=cid, tool=name)
    return ApprovalRejected(DECISION_NOT_ASKED.format(call_id=cid, tool=name), call_id=cid, tool=name)


def edited_arguments(rt: Runtime, task: Task, arguments: Mapping[str, Any] | str | None) -> str:
    """The arguments an approved call runs with: the model's, or `arguments` (a JSON object, or
    its text) once valid against the tool's schema. Raises `ApprovalRejected` naming the call."""
    call = input_of(task).call
    if arguments is None:
        return call.arguments
    tool = rt.tools_for(task.conversation_id).get(call.name)
    if tool is None:
        raise ApprovalRejected(DECISION_UNCHECKABLE.format(call_id=call.id, tool=call.name), call_id=call.id,
                               tool=call.name)
    try:
        text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        why: object = f"the edited arguments are not a JSON object ({exc})"
    else:
        try:
            parse_arguments(tool, text)
            return text
        except ArgumentError as exc:  # the sentence names the tool, each problem's path and keyword
            why = exc
    raise ApprovalRejected(DECISION_INVALID.format(call_id=call.id, tool=call.name, why=why), call_id=call.id,
                           tool=call.name)


__all__ = ["CHECK_SECONDS", "asks", "begin_waiting", "edited_arguments", "new_approval", "refusal", "waiting_call"]
