"""The tool task: one call of a tool, owned by the generation that asked for it.

    pending/tool_progress -> running | end        (an unsafe tool commits `running` right before it runs)
    running/tool_progress -> pending | end        (a crash or a clean close puts it back `pending`)
    waiting/tool_progress -> end                  (a client tool: the host answers, or its deadline)

Its intent (the call, its replay policy, a client tool's deadline) is committed when the task is
created, before anything runs. Streamed output is committed coalesced into the checkpoint and
the live tool slot, without clearing `restarts`. The task ends with its result for the model in
its checkpoint; its parent appends the results of a round in call order (`RoundParent`).

After a crash: at the restart limit the call gets an error result with the `restart_limit`
diagnostic and the task fails; below it a `safe` tool runs again, an `unsafe` one gets "Tool T
was interrupted and may have partially run". Committed partial output is kept in the result.
Bad arguments, an unknown tool and an exception in `execute` are error results the model reads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from attrs import field

from .._frozen import OMITTED_WHEN_DEFAULT, evolve, frozen
from ..engine import tracing
from ..engine.kinds import Resumed, TaskKind
from ..engine.transitions import END, Transitions
from ..errors import ToolResultRejected
from ..records import (
    Aborted,
    Checkpoint,
    Diagnostic,
    Done,
    ErrorDetail,
    ErrorInfo,
    Failed,
    Outcome,
    Pending,
    Replay,
    Running,
    Task,
    TaskInput,
    Terminal,
    ToolCall,
    ToolResultEntry,
    ToolSlot,
    Waiting,
)
from ..texts import times_in_a_row
from ..tools import ArgumentError, Tool, ToolApi, ToolContext, parse_arguments

if TYPE_CHECKING:
    from ..engine.head import Change
    from ..engine.runtime import Runtime

TOOL_AT_LIMIT = "Tool {tool} was interrupted {times}; it is not run again"
TOOL_MAY_HAVE_RUN = "Tool {tool} was interrupted and may have partially run"
TOOL_RUNS_AGAIN = "Tool {tool} runs again (replay safe)"
TOOL_TIMED_OUT = "Tool execution timed out"


@frozen
class ToolInput(TaskInput):
    """The committed intent of one tool call: what runs and whether it may run again."""

    call: ToolCall
    replay: Replay = "unsafe"
    client: bool = False
    deadline: float | None = None


@frozen
class ToolProgress(Checkpoint):
    """A tool's committed partial output and, once it ended, the result for the model."""

    output: str = ""
    result: ToolResultEntry | None = None
    started: bool = False  # an unsafe tool's execute was cut off by a clean close
    started_at: float | None = None  # when `execute` first started (clock seconds), kept across restarts
    ended_at: float | None = None  # when the call got its result (cut off by a crash: when it was cut off)
    # Seconds the call spent cut off before it ran again (from its last commit to its restart):
    # not runtime. Stored only when not 0.
    paused: float = field(default=0.0, metadata=OMITTED_WHEN_DEFAULT)


class RoundParent(Protocol):
    """What the tool kind asks of the kind whose task started a round of tool calls (the
    generation): the last tool to end writes the round's close in its own ending commit."""

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
    and the live document's tool slots. Returns their ids, and whether a client tool is handed to
    the host (then `change` must be a barrier)."""
    ids, slots = [], []
    for call in calls:
        tool = rt.tools.get(call.name)
        client = bool(tool and tool.client)
        deadline = rt.now() + rt.settings.client_tool_timeout if client else None
        # A safe tool is created `running` (its runner starts after this commit; if cut off first,
        # it just runs again). An unsafe one commits `running` itself right before it executes, so
        # a crash before that never counts as "may have partially run".
        safe = tool is not None and tool.replay == "safe" and not client
        state = Waiting(client=True) if client else (Running() if safe else Pending())
        child = rt.new_task(change, conversation_id=parent.conversation_id, kind=ToolKind.name,
                            input=ToolInput(call, tool.replay if tool else "unsafe", client, deadline),
                            checkpoint=ToolProgress(started_at=rt.now() if safe else None), parent_id=parent.id,
                            state=state)
        ids.append(child.id)
        slots.append(ToolSlot(call.id, call.name, child.id, status="waiting" if client else "running"))
    change.edit_live(parent.conversation_id, generation=None, tools=tuple(slots))
    return ids, any(s.status == "waiting" for s in slots)


def close_call(change: Change, child: Task | None, call: ToolCall, text: str,
               code: str) -> tuple[ToolResultEntry, bool]:
    """The result of one call of a round being closed: the ended tool task's result, else an
    error result `text` (keeping committed partial output), ending the tool task in `change` if
    it is still live. Returns the result and whether the task was ended here."""
    progress = _progress(child) if child is not None else ToolProgress()
    if progress.result is not None:
        return progress.result, False
    content = text + (f"\nPartial output:\n{progress.output}" if progress.output else "")
    result = ToolResultEntry(call.id, call.name, content, True, (Diagnostic("error", code, text),))
    if child is None or child.terminal:
        return result, False
    change.put_task(evolve(child, state=Terminal(Aborted()),
                           checkpoint=evolve(progress, result=result, ended_at=change.head.now())))
    return result, True


class ToolKind(TaskKind):
    """Tool calls (see the module docstring)."""

    name = "tool"
    input = ToolInput
    checkpoints: ClassVar[dict[str, type[Checkpoint]]] = {"tool_progress": ToolProgress}
    transitions = Transitions(
        start=["pending/tool_progress", "running/tool_progress", "waiting/tool_progress"],
        moves={"pending/tool_progress": ["running/tool_progress", END],
               "running/tool_progress": ["pending/tool_progress", END],
               "waiting/tool_progress": [END]},
    )
    warm = True

    def __init__(self, parent: RoundParent | None = None) -> None:
        self.phases = {ToolProgress: self._run}
        self.parent = parent  # the kind whose rounds these calls are (the generation)

    async def resume_interrupted(self, rt: Runtime, task: Task, restarts: int) -> Resumed:
        inp = _input(task)
        if inp.replay == "unsafe" and not inp.client:
            msg = TOOL_MAY_HAVE_RUN.format(tool=inp.call.name)
            await self._finish(rt, task, _error(task, msg, "interrupted"),
                               Failed(ErrorInfo(msg, ErrorDetail("interrupted"))), ended_at=task.updated_at)
            return Resumed(None, "not_rerun", msg)
        return Resumed(task, "interrupted", TOOL_RUNS_AGAIN.format(tool=inp.call.name))

    async def end_at_limit(self, rt: Runtime, task: Task, restarts: int, past: bool) -> str:
        msg = TOOL_AT_LIMIT.format(tool=_input(task).call.name, times=times_in_a_row(restarts))
        await self._finish(rt, task, _error(task, msg, "restart_limit"),
                           Failed(ErrorInfo(msg, ErrorDetail("restart_limit"))), ended_at=task.updated_at)
        return msg

    async def _run(self, rt: Runtime, task: Task) -> Task | None:
        inp = _input(task)
        name = inp.call.name
        if _progress(task).started:
            # A clean close cut this unsafe tool off in the middle of its execute: a close is not
            # a crash (nothing is charged), but the tool may have partially run all the same.
            msg = TOOL_MAY_HAVE_RUN.format(tool=name)
            await self._finish(rt, task, _error(task, msg, "interrupted"),
                               Failed(ErrorInfo(msg, ErrorDetail("interrupted"))), ended_at=task.updated_at)
            return None
        if inp.client:
            await self._wait_for_client(rt, task)
            return None
        tool = rt.tools.get(name)
        if tool is None or tool.execute is None:
            known = ", ".join(t.name for t in rt.tools) or "none"
            msg = f"Unknown tool {name} (known tools: {known})"
            await self._finish(rt, task, _error(task, msg, "unknown_tool"), Done())
            return None
        try:
            args = parse_arguments(tool, inp.call.arguments)
        except ArgumentError as exc:
            await self._finish(rt, task, _error(task, str(exc), "invalid_arguments"), Done())
            return None
        task = await self._mark_started(rt, task)
        await self._execute(rt, task, tool, args)
        return None

    async def _mark_started(self, rt: Runtime, task: Task) -> Task:
        """Commit `running` (a barrier: an unsafe tool's intent is on disk before it runs) and, on
        the first start, when it started: kept across restarts, it is what a timeout and the
        tool's runtime are measured from. Not progress: `restarts` is not cleared."""
        progress = _progress(task)
        if progress.started_at is not None:
            if isinstance(task.state, Running):
                return task
            # Run again after a crash or a clean close cut it off: from its last commit (the
            # interrupt; a charge keeps `updated_at`) to now it did not run.
            progress = evolve(progress, paused=progress.paused + max(0.0, rt.now() - task.updated_at))
            change = rt.change()
            task = change.put_task(evolve(task, state=Running(), checkpoint=progress), progress=False)
            await rt.commit(change)
            return task
        change = rt.change()
        task = change.put_task(evolve(task, state=Running(), checkpoint=evolve(progress, started_at=rt.now())),
                               progress=False)
        await rt.commit(change)
        return task

    @tracing.tool_call
    async def _execute(self, rt: Runtime, task: Task, tool: Tool, args: Any) -> None:
        cid = task.conversation_id
        output: list[str] = []  # a safe tool run again starts its output afresh

        async def flush() -> None:
            change = rt.change(barrier=False)  # streamed output: nothing outside waits for it
            current = change.task(task.id)
            text = "".join(output)
            change.put_task(evolve(current, checkpoint=evolve(_progress(current), output=text)), progress=False)
            _edit_slot(change, cid, task.id, output=text)
            await rt.commit(change)

        progress = rt.progress.stream(rt.settings.progress.output_interval, flush)

        async def emit(text: str) -> None:
            output.append(text)
            await progress.update()

        ctx = ToolContext(task.id, _input(task).call.id, cid, task.restarts + 1, rt.deps)
        name = tool.name
        execute = tool.execute
        assert execute is not None, f"tool {name} is a client tool; the harness does not run it"
        await rt.before_external_work(f"Tool {name} (task {task.id})")
        async with progress:  # leaving it waits for a flush in flight; the ending below carries the rest
            try:
                value = await execute(args, ToolApi(emit), ctx)
                content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
                failure = None
            except Exception as exc:  # noqa: BLE001 - the model reads it as an error result
                failure = f"Tool {name} failed: {type(exc).__name__}: {exc}"
        current = rt.task(task.id) or task
        current = evolve(current, checkpoint=evolve(_progress(current), output="".join(output)))
        if failure is None:
            result = ToolResultEntry(_input(current).call.id, name, content)
        else:
            result = _error(current, failure, "tool_error")
        await self._finish(rt, current, result, Done())

    # ------------------------------------------------------------------ client tools

    async def _wait_for_client(self, rt: Runtime, task: Task) -> None:
        inp = _input(task)
        assert inp.deadline is not None
        if await rt.wait_task_until(task.id, inp.deadline, f"client_tool:{task.id}"):
            return  # answered by the host
        current = rt.task(task.id)
        if current is None:
            return
        await self._finish(rt, current, _error(current, TOOL_TIMED_OUT, "timeout"),
                           Failed(ErrorInfo(f"Tool {inp.call.name} execution timed out", ErrorDetail("timeout"))))

    async def submit_client_result(self, rt: Runtime, call_id: str, content: str, is_error: bool) -> None:
        for task in rt.live_tasks(kind=self.name):
            inp = _input(task)
            if inp.call.id == call_id:
                if not inp.client:
                    raise ToolResultRejected(
                        f"Tool call {call_id} ({inp.call.name}) is not a client tool call; the harness runs it")
                result = ToolResultEntry(call_id, inp.call.name, content, is_error)
                await self._finish(rt, task, result, Done(), retry=False)
                return
        raise ToolResultRejected(
            f"No client tool call {call_id} is waiting for a result (unknown, or already answered)")

    def written_back(self, task: Task) -> Task:
        """How a clean close leaves a running tool task: `pending`, and for an unsafe tool that
        was executing, marked started, so the next open does not run it a second time."""
        inp = _input(task)
        if inp.replay == "unsafe" and not inp.client:
            return evolve(task, state=Pending(), checkpoint=evolve(_progress(task), started=True))
        return evolve(task, state=Pending())

    async def _finish(self, rt: Runtime, task: Task, result: ToolResultEntry, outcome: Outcome, *,
                      retry: bool = True, ended_at: float | None = None) -> None:
        """Commit the task's ending with `result`. Task code's endings are lazy commits (a result
        lost to a power cut is redone as after a crash), except that the last tool of a round to
        end carries the round's close, and with it the next request, in the same commit (a
        barrier). A host's client-tool result (`retry=False`) is a barrier: the host is told.
        `ended_at`: when the call ended, if not now (a call cut off: the interrupt)."""
        parent = rt.task(task.parent_id) if task.parent_id is not None else None
        rounds = self.parent
        if rounds is not None and parent is not None and rounds.closable(rt, parent, task.id):
            parent = await _siblings_written(rt, rounds.round_of(parent), parent, task.id)
        change = rt.change(barrier=not retry)
        progress = evolve(_progress(task), result=result, ended_at=rt.now() if ended_at is None else ended_at)
        ended = change.put_task(evolve(task, state=Terminal(outcome), checkpoint=progress))
        _edit_slot(change, task.conversation_id, task.id, output=progress.output,
                   status="error" if result.is_error else "done")
        if rounds is not None and parent is not None and rounds.closable(rt, parent, ended.id):
            await rounds.close_round(rt, change, parent)
        await rt.commit(change, retry=retry)

    # ------------------------------------------------------------------ what others see

    @classmethod
    def deadline(cls, task: Task) -> float | None:
        return _input(task).deadline if isinstance(task.state, Waiting) else None

    @classmethod
    def describe(cls, task: Task) -> str:
        inp = _input(task)
        return f"tool {inp.call.name}, {inp.replay}"

    @classmethod
    def details(cls, task: Task) -> dict[str, Any]:
        inp = _input(task)
        return {"tool": {"name": inp.call.name, "call_id": inp.call.id, "replay": inp.replay, "client": inp.client}}

    @classmethod
    def check(cls, task: Task) -> list[str]:
        inp = _input(task)
        if isinstance(task.state, Waiting) and inp.client and inp.deadline is None:
            return [f"Task {task.id} (tool) waits for the host without a deadline"]
        return []


async def _siblings_written(rt: Runtime, siblings: tuple[int, ...], parent: Task, ending: int) -> Task | None:
    """Wait until the endings of the other tools of `parent`'s round are written, not only in the
    head: the round's close carries their results, and a sibling's ending still in flight may be
    refused and tried again after the close landed (a crash then would leave the sibling live
    with its result already in the context). Returns the parent as the head has it then."""
    for sibling in siblings:
        if sibling != ending and rt.ending_in_flight(sibling):
            await rt.wait_tasks([sibling])
    return rt.task(parent.id)


def _input(task: Task) -> ToolInput:
    assert isinstance(task.input, ToolInput), f"task {task.id} is not a tool task"
    return task.input


def _progress(task: Task) -> ToolProgress:
    return task.checkpoint if isinstance(task.checkpoint, ToolProgress) else ToolProgress()


def _error(task: Task, message: str, code: str) -> ToolResultEntry:
    call = _input(task).call
    partial = _progress(task).output
    content = message + (f"\nPartial output:\n{partial}" if partial else "")
    return ToolResultEntry(call.id, call.name, content, True, (Diagnostic("error", code, message),))


def _edit_slot(change: Change, cid: str, task_id: int, **fields: Any) -> None:
    live = change.live(cid)
    slots = tuple(evolve(s, **fields) if s.task_id == task_id else s for s in live.tools)
    if slots != live.tools:
        change.edit_live(cid, tools=slots)


__all__ = ["TOOL_AT_LIMIT", "TOOL_MAY_HAVE_RUN", "TOOL_RUNS_AGAIN", "TOOL_TIMED_OUT", "RoundParent", "ToolInput",
           "ToolKind", "ToolProgress", "close_call", "start_calls"]
