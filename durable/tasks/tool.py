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
from typing import Any

import anyio
import attrs

from ..engine import recovery
from ..engine.harness import Runtime
from ..engine.reports import TaskInterrupted, TaskRef
from ..engine.tools import ArgumentError, ToolApi, ToolContext, parse_arguments
from ..errors import ToolResultRejected
from ._coalesce import Coalescer
from ..records import (
    Diagnostic,
    Done,
    ErrorDetail,
    Failed,
    Outcome,
    Pending,
    Running,
    Task,
    ErrorInfo,
    Terminal,
    ToolInput,
    ToolProgress,
    ToolResultEntry,
)


class ToolKind:
    name = "tool"

    async def run(self, rt: Runtime, task: Task) -> None:
        inp = task.input
        assert isinstance(inp, ToolInput)
        name = inp.call.name
        if task.restarts:
            limit = recovery.restart_limit(rt.settings)
            n = task.restarts
            if n >= limit:
                msg = f"Tool {name} was interrupted {recovery.times_in_a_row(n)}; it is not run again"
                await self._finish(rt, task, self._error(task, msg, "restart_limit"),
                                   Failed(ErrorInfo(msg, ErrorDetail("restart_limit"))))
                rt.report(TaskInterrupted(TaskRef.of(task), "restart_limit", n, msg))
                return
            if inp.replay == "unsafe" and not inp.client:
                msg = f"Tool {name} was interrupted and may have partially run"
                await self._finish(rt, task, self._error(task, msg, "interrupted"),
                                   Failed(ErrorInfo(msg, ErrorDetail("interrupted"))))
                rt.report(TaskInterrupted(TaskRef.of(task), "not_rerun", n, msg))
                return
            rt.report(TaskInterrupted(TaskRef.of(task), "interrupted", n, f"Tool {name} runs again (replay safe)"))
        if self._progress(task).started:
            # A clean close cut this unsafe tool off in the middle of its execute: a close is not
            # a crash (nothing is charged), but the tool may have partially run all the same.
            msg = f"Tool {name} was interrupted and may have partially run"
            await self._finish(rt, task, self._error(task, msg, "interrupted"),
                               Failed(ErrorInfo(msg, ErrorDetail("interrupted"))))
            return
        if inp.client:
            await self._wait_for_client(rt, task)
            return
        tool = rt.tools.get(name)
        if tool is None or tool.execute is None:
            known = ", ".join(t.name for t in rt.tools) or "none"
            msg = f"Unknown tool {name} (known tools: {known})"
            await self._finish(rt, task, self._error(task, msg, "unknown_tool"), Done())
            return
        try:
            args = parse_arguments(tool, inp.call.arguments)
        except ArgumentError as exc:
            await self._finish(rt, task, self._error(task, str(exc), "invalid_arguments"), Done())
            return
        if not isinstance(task.state, Running):
            change = rt.change()
            task = change.put_task(attrs.evolve(task, state=Running()), progress=False)
            await change.commit()
        await self._execute(rt, task, tool, args)

    async def _execute(self, rt: Runtime, task: Task, tool: Any, args: Any) -> None:
        cid = task.conversation_id
        output: list[str] = []  # a safe tool run again starts its output afresh

        async def flush() -> None:
            change = rt.change()
            current = change.task(task.id)
            text = "".join(output)
            change.put_task(attrs.evolve(current, checkpoint=ToolProgress(text)), progress=False)
            self._edit_slot(change, cid, task.id, output=text)
            await change.commit()

        coalescer = Coalescer(rt.settings.progress.output_interval, flush)

        async def emit(text: str) -> None:
            output.append(text)
            await coalescer.update()

        ctx = ToolContext(task.id, task.input.call.id, cid, task.restarts + 1)  # type: ignore[union-attr]
        name = tool.name
        async with anyio.create_task_group() as tg:
            tg.start_soon(coalescer.run_flusher)
            try:
                value = await tool.execute(args, ToolApi(emit), ctx)
                content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
                failure = None
            except Exception as exc:  # noqa: BLE001 - the model reads it as an error result
                failure = f"Tool {name} failed: {type(exc).__name__}: {exc}"
            coalescer.settle()
            tg.cancel_scope.cancel()
        current = rt.session.tasks.get(task.id, task)
        current = attrs.evolve(current, checkpoint=ToolProgress("".join(output)))
        if failure is None:
            result = ToolResultEntry(current.input.call.id, name, content)  # type: ignore[union-attr]
        else:
            result = self._error(current, failure, "tool_error")
        await self._finish(rt, current, result, Done())

    # ------------------------------------------------------------------ client tools

    async def _wait_for_client(self, rt: Runtime, task: Task) -> None:
        inp = task.input
        assert isinstance(inp, ToolInput) and inp.deadline is not None
        done = rt.session.task_done_event(task.id)
        async with anyio.create_task_group() as tg:

            async def deadline() -> None:
                await rt.sleep_until(inp.deadline, f"client_tool:{task.id}")  # type: ignore[arg-type]
                tg.cancel_scope.cancel()

            tg.start_soon(deadline)
            await done.wait()
            tg.cancel_scope.cancel()
        current = rt.session.tasks.get(task.id)
        if current is None:  # answered by the host
            return
        msg = "Tool execution timed out"
        await self._finish(rt, current, self._error(current, msg, "timeout"),
                           Failed(ErrorInfo(f"Tool {inp.call.name} execution timed out", ErrorDetail("timeout"))))

    async def submit_client_result(self, rt: Runtime, call_id: str, content: str, is_error: bool) -> None:
        for task in rt.session.tasks.values():
            if task.kind == "tool" and isinstance(task.input, ToolInput) and task.input.call.id == call_id:
                if not task.input.client:
                    raise ToolResultRejected(
                        f"Tool call {call_id} ({task.input.call.name}) is not a client tool call; the harness runs it")
                result = ToolResultEntry(call_id, task.input.call.name, content, is_error)
                await self._finish(rt, task, result, Done())
                return
        raise ToolResultRejected(f"No client tool call {call_id} is waiting for a result (unknown, or already answered)")

    def written_back(self, task: Task) -> Task:
        """How a clean close leaves a running tool task: `pending`, and for an unsafe tool that
        was executing, marked started, so the next open does not run it a second time."""
        inp = task.input
        if isinstance(inp, ToolInput) and inp.replay == "unsafe" and not inp.client:
            return attrs.evolve(task, state=Pending(), checkpoint=attrs.evolve(self._progress(task), started=True))
        return attrs.evolve(task, state=Pending())

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _progress(task: Task) -> ToolProgress:
        return task.checkpoint if isinstance(task.checkpoint, ToolProgress) else ToolProgress()

    def _error(self, task: Task, message: str, code: str) -> ToolResultEntry:
        call = task.input.call  # type: ignore[union-attr]
        partial = self._progress(task).output
        content = message + (f"\nPartial output:\n{partial}" if partial else "")
        return ToolResultEntry(call.id, call.name, content, True, (Diagnostic("error", code, message),))

    @staticmethod
    def _edit_slot(change: Any, cid: str, task_id: int, **fields: Any) -> None:
        live = change.live(cid)
        slots = tuple(attrs.evolve(s, **fields) if s.task_id == task_id else s for s in live.tools)
        if slots != live.tools:
            change.edit_live(cid, tools=slots)

    async def _finish(self, rt: Runtime, task: Task, result: ToolResultEntry, outcome: Outcome) -> None:
        change = rt.change()
        progress = attrs.evolve(self._progress(task), result=result)
        change.put_task(attrs.evolve(task, state=Terminal(outcome), checkpoint=progress))
        self._edit_slot(change, task.conversation_id, task.id, output=progress.output,
                        status="error" if result.is_error else "done")
        await change.commit()
