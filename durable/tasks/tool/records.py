"""The tool kind's records and sentences: a call's committed intent (`ToolInput`), its progress
and result (`ToolProgress`), a call waiting for a person's decision (`Approval`), every sentence
the kind writes, and the small helpers that read them or edit the live document's tool slots and
approvals (each edit in the commit that changes the task it shows).

The sentences are for people and the model; code recognises a situation by the diagnostic's
`code` and the outcome's `ErrorDetail.reason`, never by the text (see `durable.texts`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from attrs import field

from ..._frozen import OMITTED_WHEN_DEFAULT, evolve, frozen
from ...content import Blobs, content_parts, has_content
from ...records import ApprovalSlot, Checkpoint, Diagnostic, Part, Replay, Task, TaskInput, ToolCall, ToolResultEntry

if TYPE_CHECKING:
    from ...engine.head import Change

KIND = "tool"
"""The kind's name: its tasks' `kind`, and its input's tag."""

# ------------------------------------------------------------------ crashes and client tools
TOOL_AT_LIMIT = "Tool {tool} was interrupted {times}; it is not run again"
TOOL_MAY_HAVE_RUN = "Tool {tool} was interrupted and may have partially run"
TOOL_RUNS_AGAIN = "Tool {tool} runs again (replay safe)"
TOOL_TIMED_OUT = "Tool execution timed out"  # a client tool past settings.client_tool_timeout
# ------------------------------------------------------------------ approval
TOOL_DENIED = "The user denied tool {tool}: {reason}"
TOOL_DENIED_WITHOUT_REASON = "The user denied tool {tool}"
TOOL_NOT_DECIDED = "Tool {tool} was denied: no decision within {seconds:g} s"
APPROVAL_CHECK_FAILED = "Tool {tool} could not run: its approval check raised {error}"
APPROVAL_CHECK_SLOW = "Tool {tool} could not run: its approval check did not answer within {seconds:g} s"
# ------------------------------------------------------------------ retries and timeouts
TOOL_RETRIES_EXHAUSTED = "Tool {tool} is out of retries (max_retries={max_retries}): {why}"
TOOL_TIMEOUT = "Tool {tool} timed out after {seconds:g} s"
TOOL_TIMEOUT_UNSAFE = "Tool {tool} timed out after {seconds:g} s and may have partially run"
# ------------------------------------------------------------------ decisions refused (ApprovalRejected)
DECISION_UNKNOWN = "No tool call {call_id} is known in this session; nothing was decided"
DECISION_NOT_ASKED = "Tool call {call_id} ({tool}) does not wait for a decision; nothing was decided"
DECISION_TWICE = "Tool call {call_id} ({tool}) was already {how}; a call is decided once"
DECISION_ENDED = "Tool call {call_id} ({tool}) already ended; it can no longer be decided"
DECISION_INVALID = "Tool call {call_id} ({tool}) was not approved: {why}"
DECISION_UNCHECKABLE = ("Tool call {call_id} ({tool}) was not approved: this harness does not offer tool {tool}, so "
                        "the edited arguments cannot be checked")

RETRY_CODES = ("retry", "invalid_arguments")
"""The diagnostic codes of results that count against a tool's `max_retries` in a run."""
DENIED_CODES = ("denied", "approval_timeout")


@frozen
class ToolInput(TaskInput):
    """The committed intent of one tool call: what runs, whether it may run again, a client
    tool's deadline, and the tool's `timeout` (seconds from the stored start; None: none), kept
    with the call so that a restart measures the same deadline."""

    call: ToolCall
    replay: Replay = "unsafe"
    client: bool = False
    deadline: float | None = None
    timeout: float | None = None


@frozen
class ToolProgress(Checkpoint):
    """A tool's committed partial output and, once it ended, the result for the model.
    `arguments`: the arguments a person approved (edited, or as the model gave them), which the
    tool runs with; None when no decision was asked."""

    output: str = ""
    result: ToolResultEntry | None = None
    started: bool = False  # an unsafe tool's execute was cut off by a clean close
    started_at: float | None = None  # when `execute` first started (clock seconds), kept across restarts
    ended_at: float | None = None  # when the call got its result (cut off by a crash: when it was cut off)
    arguments: str | None = None
    # Seconds the call spent cut off before it ran again (from its last commit to its restart):
    # not runtime. Stored only when not 0.
    paused: float = field(default=0.0, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class Approval(Checkpoint):
    """Phase `approval`: the call waits (`waiting`, never charged) for a person's decision since
    `since`; when `deadline` is set (`settings.approval_timeout` at the time it began waiting)
    it is denied then. `parameters`: the tool's JSON schema then (canonical JSON text; None in
    rows written before it was kept), shown with the call (`ApprovalSlot.parameters`)."""

    since: float
    deadline: float | None = None
    parameters: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


def input_of(task: Task) -> ToolInput:
    assert isinstance(task.input, ToolInput), f"task {task.id} is not a tool task"
    return task.input


def progress_of(task: Task) -> ToolProgress:
    """The task's `ToolProgress` (an empty one while it waits for a decision)."""
    return task.checkpoint if isinstance(task.checkpoint, ToolProgress) else ToolProgress()


def deadline_of(task: Task) -> float | None:
    """When the call times out: its stored start plus its `timeout` (None: no timeout, or not started)."""
    inp, started = input_of(task), progress_of(task).started_at
    return None if inp.timeout is None or started is None else started + inp.timeout


def error_result(task: Task, message: str, code: str) -> ToolResultEntry:
    """An error result for the model, keeping the committed partial output."""
    call = input_of(task).call
    partial = progress_of(task).output
    content = message + (f"\nPartial output:\n{partial}" if partial else "")
    return ToolResultEntry(call.id, call.name, content, True, (Diagnostic("error", code, message),))


def result_of(value: Any, tool: str, limit: int) -> tuple[str, tuple[Part, ...], Blobs]:
    """What `execute` returned as a result for the model: (text, parts, bytes to store). A str is
    the text; a `durable.Image` / `durable.File`, or a list holding some (with strings), is parts;
    anything else is its JSON. An image or file over `limit` bytes raises `AttachmentTooLarge`."""
    if isinstance(value, str):
        return value, (), {}
    if has_content(value):
        return content_parts(value, f"the result of tool {tool}", limit)
    return json.dumps(value, ensure_ascii=False, default=str), (), {}


def edit_slot(change: Change, cid: str, task_id: int, **fields: Any) -> None:
    """Change the live tool slot of task `task_id` in `change`."""
    live = change.live(cid)
    slots = tuple(evolve(s, **fields) if s.task_id == task_id else s for s in live.tools)
    if slots != live.tools:
        change.edit_live(cid, tools=slots)


def approval_slot(task: Task, approval: Approval) -> ApprovalSlot:
    call = input_of(task).call
    return ApprovalSlot(call.id, call.name, call.arguments, task.id, approval.since, approval.deadline,
                        approval.parameters)


def show_approval(change: Change, task: Task, approval: Approval) -> None:
    """Add the task's pending approval to its conversation's live document (its tool slot waits)."""
    cid = task.conversation_id
    live = change.live(cid)
    change.edit_live(cid, approvals=(*(a for a in live.approvals if a.task_id != task.id),
                                     approval_slot(task, approval)))
    edit_slot(change, cid, task.id, status="waiting")


def drop_approval(change: Change, cid: str, task_id: int) -> None:
    """Remove task `task_id`'s approval from the live document, if it shows one."""
    live = change.live(cid)
    kept = tuple(a for a in live.approvals if a.task_id != task_id)
    if kept != live.approvals:
        change.edit_live(cid, approvals=kept)


__all__ = [
    "APPROVAL_CHECK_FAILED",
    "APPROVAL_CHECK_SLOW",
    "DECISION_ENDED",
    "DECISION_INVALID",
    "DECISION_NOT_ASKED",
    "DECISION_TWICE",
    "DECISION_UNCHECKABLE",
    "DECISION_UNKNOWN",
    "DENIED_CODES",
    "KIND",
    "RETRY_CODES",
    "TOOL_AT_LIMIT",
    "TOOL_DENIED",
    "TOOL_DENIED_WITHOUT_REASON",
    "TOOL_MAY_HAVE_RUN",
    "TOOL_NOT_DECIDED",
    "TOOL_RETRIES_EXHAUSTED",
    "TOOL_RUNS_AGAIN",
    "TOOL_TIMED_OUT",
    "TOOL_TIMEOUT",
    "TOOL_TIMEOUT_UNSAFE",
    "Approval",
    "ToolInput",
    "ToolProgress",
    "approval_slot",
    "deadline_of",
    "drop_approval",
    "edit_slot",
    "error_result",
    "input_of",
    "progress_of",
    "show_approval",
]
