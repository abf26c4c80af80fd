"""The tool task: one call of a tool, owned by the generation that asked for it.

Its intent (the call, its replay policy, a client tool's deadline) is committed when the task is
created, before anything runs; `running` is committed right before `execute`. Streamed output is
committed coalesced into the checkpoint and the live tool slot, without clearing `restarts`
(output is not completion). The task ends with its result for the model in its checkpoint; the
generation appends the results of a round in call order.

After a crash (`restarts > 0`): at the restart limit the call gets an error result with the
`restart_limit` diagnostic and the task fails; below it a `safe` tool runs again, an `unsafe` one
is not: it gets "Tool T was interrupted and may have partially run". Committed partial output is
kept in the result either way.

Bad arguments, an unknown tool and an exception in `execute` are results the model can read
(`is_error` with a diagnostic); the run continues.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

import anyio

from .._frozen import evolve
from ..engine import ownership, tracing
from ..engine.kinds import Resumed, TaskKind
from ..engine.runtime import Runtime
from ..engine.session import Change
from ..engine.transitions import Transitions
from ..errors import ToolResultRejected
from ..messages import TOOL_AT_LIMIT, TOOL_MAY_HAVE_RUN, TOOL_RUNS_AGAIN, TOOL_TIMED_OUT, times_in_a_row
from ..records import (
    Diagnostic,
    Done,
    ErrorDetail,
    ErrorInfo,
    Failed,
    Outcome,
    Pending,
    Running,
    Task,
    Terminal,
    ToolCall,
    ToolInput,
    ToolProgress,
    ToolResultEntry,
    ToolRound,
    ToolSlot,
    Waiting,
)
from ..tools import ArgumentError, Tool, ToolApi, ToolContext, parse_arguments
from .runs import round_closable

RoundCloser = Callable[[Runtime, Change, Task], Awaitable[Task]]
"""Writes a generation's tool-round close into a change (`GenerationKind.close_round`)."""


def start_tool_round(rt: Runtime, change: Change, task: Task, seq: int, calls: Sequence[ToolCall], number: int) -> Task:
    """In `change`: a tool task per call of the assistant entry `seq` (its intent committed before
    anything runs), the generation `task` waiting on them in its `tools` phase, and the live
    document's tool slots. `number` counts the run's tool rounds. Returns the generation task as
    written. Sets whether `change` is a barrier."""
    ids, slots = [], []
    for call in calls:
        tool = rt.tools.get(call.name)
        client = bool(tool and tool.client)
        deadline = rt.now() + rt.settings.client_tool_timeout if client else None
        # A safe tool is created `running` (its runner starts after this commit; if cut off first,
        # it just runs again). An unsafe one commits `running` itself right before it executes, so
        # a crash before that never counts as "may have partially run".
        state = Waiting(client=True) if client else (Running() if tool and tool.replay == "safe" else Pending())
        child = rt.new_task(change, conversation_id=task.conversation_id, kind="tool",
                            input=ToolInput(call, tool.replay if tool else "unsafe", client, deadline),
                            checkpoint=ToolProgress(), parent_id=task.id, state=state)
        ids.append(child.id)
        slots.append(ToolSlot(call.id, call.name, child.id, status="waiting" if client else "running"))
    round_ = ToolRound(seq, tuple(calls), tuple(ids), number)
    # A barrier only when a client tool is handed to the host: safe tools may run again and an
    # unsafe one commits its own barrier (`running`) before it executes.
    change.barrier = any(s.status == "waiting" for s in slots)
    task = change.put_task(evolve(task, state=Waiting(on=tuple(ids)), checkpoint=round_))
    change.edit_live(task.conversation_id, generation=None, tools=tuple(slots))
    return task


class ToolKind(TaskKind):
    """Tool calls (see the module docstring)."""

    name = "tool"
    transitions: ClassVar[Transitions] = Transitions(
        "tool",
        start={("pending", "tool_progress"), ("running", "tool_progress"), ("waiting", "tool_progress")},
        states={"pending": {"running"}, "running": {"pending"}},
        phases={},
    )

    def __init__(self, close_round: RoundCloser | None = None) -> None:
        self.phases = {ToolProgress: self._run}
        # The generation's round close, written by the last tool of a round in its ending commit.
        self.close_round = close_round

    async def resume_interrupted(self, rt: Runtime, task: Task, restarts: int) -> Resumed:
        inp = _input(task)
        if inp.replay == "unsafe" and not inp.client:
            msg = TOOL_MAY_HAVE_RUN.format(tool=inp.call.name)
            await self._finish(rt, task, self._error(task, msg, "interrupted"),
                               Failed(ErrorInfo(msg, ErrorDetail("interrupted"))))
            return Resumed(None, "not_rerun", msg)
        return Resumed(task, "interrupted", TOOL_RUNS_AGAIN.format(tool=inp.call.name))

    async def end_at_limit(self, rt: Runtime, task: Task, restarts: int) -> str:
        msg = TOOL_AT_LIMIT.format(tool=_input(task).call.name, times=times_in_a_row(restarts))
        await self._finish(rt, task, self._error(task, msg, "restart_limit"),
                           Failed(ErrorInfo(msg, ErrorDetail("restart_limit"))))
        return msg

    async def _run(self, rt: Runtime, task: Task) -> Task | None:
        inp = _input(task)
        name = inp.call.name
        if self._progress(task).started:
            # A clean close cut this unsafe tool off in the middle of its execute: a close is not
            # a crash (nothing is charged), but the tool may have partially run all the same.
            msg = TOOL_MAY_HAVE_RUN.format(tool=name)
            await self._finish(rt, task, self._error(task, msg, "interrupted"),
                               Failed(ErrorInfo(msg, ErrorDetail("interrupted"))))
            return None
        if inp.client:
            await self._wait_for_client(rt, task)
            return None
        tool = rt.tools.get(name)
        if tool is None or tool.execute is None:
            known = ", ".join(t.name for t in rt.tools) or "none"
            msg = f"Unknown tool {name} (known tools: {known})"
            await self._finish(rt, task, self._error(task, msg, "unknown_tool"), Done())
            return None
        try:
            args = parse_arguments(tool, inp.call.arguments)
        except ArgumentError as exc:
            await self._finish(rt, task, self._error(task, str(exc), "invalid_arguments"), Done())
            return None
        task = await rt.mark_running(task, barrier=True)  # an unsafe tool: its intent is on disk before it runs
        await self._execute(rt, task, tool, args)
        return None

    @tracing.tool_call
    async def _execute(self, rt: Runtime, task: Task, tool: Tool, args: Any) -> None:
        cid = task.conversation_id
        output: list[str] = []  # a safe tool run again starts its output afresh

        async def flush() -> None:
            change = rt.change(barrier=False)  # streamed output: nothing outside waits for it
            current = change.task(task.id)
            text = "".join(output)
            change.put_task(evolve(current, checkpoint=ToolProgress(text)), progress=False)
            self._edit_slot(change, cid, task.id, output=text)
            await rt.commit(change)

        progress = rt.progress.stream(rt.settings.progress.output_interval, flush)

        async def emit(text: str) -> None:
            output.append(text)
            await progress.update()

        ctx = ToolContext(task.id, _input(task).call.id, cid, task.restarts + 1)
        name = tool.name
        execute = tool.execute
        assert execute is not None, f"tool {name} is a client tool; the harness does not run it"
        # Not on behalf of an owner that may have lost its lease (durable.engine.ownership).
        await ownership.before_external_work(rt.session.storage, f"Tool {name} (task {task.id})")
        async with progress:  # leaving it waits for a flush in flight; the ending below carries the rest
            try:
                value = await execute(args, ToolApi(emit), ctx)
                content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
                failure = None
            except Exception as exc:  # noqa: BLE001 - the model reads it as an error result
                failure = f"Tool {name} failed: {type(exc).__name__}: {exc}"
        current = rt.session.tasks.get(task.id, task)
        current = evolve(current, checkpoint=ToolProgress("".join(output)))
        if failure is None:
            result = ToolResultEntry(_input(current).call.id, name, content)
        else:
            result = self._error(current, failure, "tool_error")
        await self._finish(rt, current, result, Done())

    # ------------------------------------------------------------------ client tools

    async def _wait_for_client(self, rt: Runtime, task: Task) -> None:
        inp = task.input
        assert isinstance(inp, ToolInput) and inp.deadline is not None
        deadline_at = inp.deadline
        done = rt.session.task_done_event(task.id)
        async with anyio.create_task_group() as tg:

            async def deadline() -> None:
                await rt.sleep_until(deadline_at, f"client_tool:{task.id}")
                tg.cancel_scope.cancel()

            tg.start_soon(deadline)
            await done.wait()
            tg.cancel_scope.cancel()
        current = rt.session.tasks.get(task.id)
        if current is None:  # answered by the host
            return
        msg = TOOL_TIMED_OUT
        await self._finish(rt, current, self._error(current, msg, "timeout"),
                           Failed(ErrorInfo(f"Tool {inp.call.name} execution timed out", ErrorDetail("timeout"))))

    async def submit_client_result(self, rt: Runtime, call_id: str, content: str, is_error: bool) -> None:
        for task in rt.session.tasks.values():
            if task.kind == "tool" and isinstance(task.input, ToolInput) and task.input.call.id == call_id:
                if not task.input.client:
                    raise ToolResultRejected(
                        f"Tool call {call_id} ({task.input.call.name}) is not a client tool call; the harness runs it")
                result = ToolResultEntry(call_id, task.input.call.name, content, is_error)
                await self._finish(rt, task, result, Done(), retry=False)
                return
        raise ToolResultRejected(
            f"No client tool call {call_id} is waiting for a result (unknown, or already answered)")

    def written_back(self, task: Task) -> Task:
        """How a clean close leaves a running tool task: `pending`, and for an unsafe tool that
        was executing, marked started, so the next open does not run it a second time."""
        inp = task.input
        if isinstance(inp, ToolInput) and inp.replay == "unsafe" and not inp.client:
            return evolve(task, state=Pending(), checkpoint=evolve(self._progress(task), started=True))
        return evolve(task, state=Pending())

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _progress(task: Task) -> ToolProgress:
        return task.checkpoint if isinstance(task.checkpoint, ToolProgress) else ToolProgress()

    def _error(self, task: Task, message: str, code: str) -> ToolResultEntry:
        call = _input(task).call
        partial = self._progress(task).output
        content = message + (f"\nPartial output:\n{partial}" if partial else "")
        return ToolResultEntry(call.id, call.name, content, True, (Diagnostic("error", code, message),))

    @staticmethod
    def _edit_slot(change: Change, cid: str, task_id: int, **fields: Any) -> None:
        live = change.live(cid)
        slots = tuple(evolve(s, **fields) if s.task_id == task_id else s for s in live.tools)
        if slots != live.tools:
            change.edit_live(cid, tools=slots)

    async def _finish(self, rt: Runtime, task: Task, result: ToolResultEntry, outcome: Outcome, *,
                      retry: bool = True) -> None:
        """Commit the task's ending with `result`. Task code's endings are lazy commits (a result
        lost to a power cut is redone as after a crash), except that the last tool of a round to
        end carries the round's close, and with it the next request, in the same commit (a
        barrier). A host's client-tool result (`retry=False`) is a barrier: the host is told."""
        parent = rt.session.tasks.get(task.parent_id) if task.parent_id is not None else None
        if self.close_round is not None and parent is not None and round_closable(rt, parent, task.id):
            parent = await _siblings_written(rt, parent, task.id)
        change = rt.change(barrier=not retry)
        progress = evolve(self._progress(task), result=result)
        ended = change.put_task(evolve(task, state=Terminal(outcome), checkpoint=progress))
        self._edit_slot(change, task.conversation_id, task.id, output=progress.output,
                        status="error" if result.is_error else "done")
        if self.close_round is not None and parent is not None and round_closable(rt, parent, ended.id):
            await self.close_round(rt, change, parent)
        await rt.commit(change, retry=retry)


async def _siblings_written(rt: Runtime, parent: Task, ending: int) -> Task | None:
    """Wait until the endings of the other tools of `parent`'s round are written, not only in the
    head: the round's close carries their results, and a sibling's ending still in flight may be
    refused and tried again after the close landed (a crash then would leave the sibling live
    with its result already in the context). Returns the parent as the head has it then."""
    phase = parent.checkpoint
    assert isinstance(phase, ToolRound)
    for sibling in phase.pending:
        if sibling != ending and rt.session.ending_in_flight(sibling):
            await rt.session.task_done_event(sibling).wait()
    return rt.session.tasks.get(parent.id)


def _input(task: Task) -> ToolInput:
    assert isinstance(task.input, ToolInput), f"task {task.id} is not a tool task"
    return task.input
