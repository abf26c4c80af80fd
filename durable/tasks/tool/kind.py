"""The tool task: one call of a tool, owned by the generation that asked for it.

    pending/tool_progress -> running | waiting/approval | end   (unsafe: `running` right before it runs)
    running/tool_progress -> pending | end        (a crash or a clean close puts it back `pending`)
    waiting/tool_progress -> end                  (a client tool: the host answers, or its deadline)
    waiting/approval -> pending/tool_progress | end   (a person's decision: `durable.tasks.tool.approval`)
    pending/tool_progress -> waiting/subagent -> end   (a sub-agent's call: `durable.tasks.tool.subagent`)

Its intent (the call, its replay policy, a client tool's deadline, its timeout) is committed when
the task is created, before anything runs. Streamed output is committed coalesced, without clearing
`restarts`, stamping the row's `updated_at` at most every `OUTPUT_STAMP` seconds. The task ends
with its result for the model in its checkpoint; its parent appends a round's results in call order
(`RoundParent`). After a crash: at the restart limit the call gets an error result
(`restart_limit`); below it a `safe` tool runs again (past its deadline: "timed out"), an `unsafe`
one gets "Tool T was interrupted and may have partially run" (past its deadline: "timed out ... and
may have partially run"). Committed partial output is kept in every error result. Bad arguments and
`RetryTool` ask the model to call again, at most `max_retries` times per run (counted from the
run's committed results), then "out of retries". A `timeout` is a durable deadline from the stored
start (`tool_timeout:<task id>`): the call is cancelled then.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from ..._frozen import evolve
from ...content import Blobs, Parts
from ...engine import tracing
from ...engine.kinds import Resumed, TaskKind
from ...engine.transitions import END, Transitions
from ...errors import RetryTool, ToolResultRejected
from ...records import (
    Checkpoint,
    Done,
    ErrorDetail,
    ErrorInfo,
    Failed,
    FailureReason,
    Outcome,
    Pending,
    Running,
    Task,
    Terminal,
    ToolResultEntry,
    Waiting,
)
from ...texts import times_in_a_row
from ...tools import ArgumentError, Tool, ToolApi, ToolContext, parse_arguments
from . import approval, subagent
from .records import (
    KIND,
    TOOL_AT_LIMIT,
    TOOL_DENIED,
    TOOL_DENIED_WITHOUT_REASON,
    TOOL_MAY_HAVE_RUN,
    TOOL_NOT_DECIDED,
    TOOL_RUNS_AGAIN,
    TOOL_TIMED_OUT,
    TOOL_TIMEOUT,
    TOOL_TIMEOUT_UNSAFE,
    Approval,
    ToolInput,
    ToolProgress,
    deadline_of,
    drop_approval,
    edit_slot,
    error_result,
    input_of,
    progress_of,
    result_of,
)
from .rounds import RoundParent, retry_result, siblings_written

if TYPE_CHECKING:
    from ...engine.runtime import Runtime

OUTPUT_STAMP = 1.0
"""Seconds after which a flush of a tool's output stamps its row's `updated_at` again (the time
a crash takes as the interrupt: `_mark_started`, `_end_cut_off`); a flush sooner leaves the row as
it was, so that a long output grows by appends beside the file (`durable.storage.sqlite.partials`)."""


class ToolKind(TaskKind):
    """Tool calls (see the module docstring)."""

    name = KIND
    input = ToolInput
    checkpoints: ClassVar[dict[str, type[Checkpoint]]] = {"tool_progress": ToolProgress, "approval": Approval,
                                                          "subagent": subagent.Delegated}
    transitions = Transitions(
        start=["pending/tool_progress", "running/tool_progress", "waiting/tool_progress", "waiting/approval"],
        moves={"pending/tool_progress": ["running/tool_progress", "waiting/approval", "waiting/subagent", END],
               "running/tool_progress": ["pending/tool_progress", END],
               "waiting/tool_progress": [END],
               "waiting/approval": ["pending/tool_progress", END],
               "waiting/subagent": [END]},
    )
    warm = True

    def __init__(self, parent: RoundParent | None = None) -> None:
        self.phases = {ToolProgress: self._run, Approval: self._await_decision,
                       subagent.Delegated: lambda rt, task: subagent.await_child(rt, task, self._answer)}
        self.parent = parent  # the kind whose rounds these calls are (the generation)
        self.abandoned: set[int] = set()  # plain `def` calls cancelled while their thread ran on

    async def _answer(self, rt: Runtime, task: Task, result: ToolResultEntry) -> None:
        await self._finish(rt, task, result, Done())

    async def resume_interrupted(self, rt: Runtime, task: Task, restarts: int) -> Resumed:
        inp = input_of(task)
        if inp.replay == "unsafe" and not inp.client:
            msg = await self._end_cut_off(rt, task)
            return Resumed(None, "not_rerun", msg)
        deadline = deadline_of(task)
        if deadline is not None and inp.timeout is not None and rt.now() >= deadline:
            msg = TOOL_TIMEOUT.format(tool=inp.call.name, seconds=inp.timeout)  # not run again: it is too late
            await self._fail(rt, task, msg, "timeout", ended_at=task.updated_at)
            return Resumed(None, "not_rerun", msg)
        return Resumed(task, "interrupted", TOOL_RUNS_AGAIN.format(tool=inp.call.name))

    async def end_at_limit(self, rt: Runtime, task: Task, restarts: int, past: bool) -> str:
        msg = TOOL_AT_LIMIT.format(tool=input_of(task).call.name, times=times_in_a_row(restarts))
        await self._fail(rt, task, msg, "restart_limit", ended_at=task.updated_at)
        return msg

    async def _end_cut_off(self, rt: Runtime, task: Task) -> str:
        """End an unsafe call cut off in its execute (by a crash, or a clean close): it may have
        partially run; past its deadline, it timed out as well."""
        deadline, inp = deadline_of(task), input_of(task)
        if deadline is not None and inp.timeout is not None and rt.now() >= deadline:
            msg = TOOL_TIMEOUT_UNSAFE.format(tool=inp.call.name, seconds=inp.timeout)
            await self._fail(rt, task, msg, "timeout", ended_at=task.updated_at)
        else:
            msg = TOOL_MAY_HAVE_RUN.format(tool=inp.call.name)
            await self._fail(rt, task, msg, "interrupted", ended_at=task.updated_at)
        return msg

    async def _run(self, rt: Runtime, task: Task) -> Task | None:
        inp, progress = input_of(task), progress_of(task)
        name = inp.call.name
        if progress.started:
            # A clean close cut this unsafe tool off in the middle of its execute: a close is not
            # a crash (nothing is charged), but the tool may have partially run all the same.
            await self._end_cut_off(rt, task)
            return None
        if inp.client:
            await self._wait_for_client(rt, task)
            return None
        tools = rt.tools_for(task.conversation_id)
        tool = tools.get(name)
        if tool is None or (tool.execute is None and tool.agent is None):
            known = ", ".join(t.name for t in tools) or "none"
            msg = f"Unknown tool {name} (known tools: {known})"
            await self._finish(rt, task, error_result(task, msg, "unknown_tool"), Done())
            return None
        arguments = inp.call.arguments if progress.arguments is None else progress.arguments
        try:
            args = parse_arguments(tool, arguments)
        except ArgumentError as exc:
            await self._finish(rt, task, await retry_result(rt, task, tool, str(exc), "invalid_arguments"), Done())
            return None
        if progress.arguments is None and tool.approval is not False and not isinstance(task.state, Running):
            asked = await approval.asks(rt, task, tool, arguments)
            if isinstance(asked, str):
                await self._finish(rt, task, error_result(task, asked, "approval_error"), Done())
                return None
            if asked:
                change = rt.change()
                task = approval.begin_waiting(rt, change, task, tool)
                await rt.commit(change)
                return task  # its `approval` phase waits for the decision
        if tool.agent is not None and self.parent is not None:  # runs a child conversation
            return await subagent.delegate(rt, task, tool, args, self.parent, self._answer)
        deadline = deadline_of(task)
        if deadline is not None and rt.now() >= deadline:  # a safe tool run again past its deadline
            await self._timed_out(rt, task, tool)
            return None
        task = await self._mark_started(rt, task)
        await self._execute(rt, task, tool, args)
        return None

    async def _mark_started(self, rt: Runtime, task: Task) -> Task:
        """Commit `running` (a barrier: an unsafe tool's intent is on disk before it runs) and, on
        the first start, when it started: kept across restarts, it is what a timeout and the
        tool's runtime are measured from. Not progress: `restarts` is not cleared."""
        progress = progress_of(task)
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
            # The row keeps its `updated_at` (then a long output grows by appends only: no
            # transaction) unless it is `OUTPUT_STAMP` seconds old: a crash's interrupt time, the
            # call's last commit, is at most that much earlier than its last flush.
            stamp = rt.now() - current.updated_at >= OUTPUT_STAMP
            change.put_task(evolve(current, checkpoint=evolve(progress_of(current), output=text)), progress=False,
                            stamp=stamp)
            edit_slot(change, cid, task.id, output=text)
            await rt.commit(change)

        progress = rt.progress.stream(rt.settings.progress.output_interval, flush)

        async def emit(text: str) -> None:
            if finished is None:  # a thread's output after its call was abandoned is dropped
                output.append(text)
                await progress.update()

        ctx = ToolContext(task.id, input_of(task).call.id, cid, task.restarts + 1, rt.deps)
        name = tool.name
        assert tool.execute is not None, f"tool {name} is a client tool; the harness does not run it"
        run = partial(tool.execute, args, ToolApi(emit), ctx)

        deadline = deadline_of(task)
        await rt.before_external_work(f"Tool {name} (task {task.id})")
        finished: bool | None = None
        failure, retry = None, None
        made = result_of("", name, 1)  # the result: text, parts, bytes to store (empty until it returns)
        self.abandoned |= {task.id} if tool.threaded else set()  # until it returns (see `written_back`)
        async with progress:  # leaving it waits for a flush in flight; the ending below carries the rest
            try:
                if deadline is None:
                    finished, value = True, await run()
                else:  # cancelled at the deadline, measured from the stored start
                    finished, value = await rt.until(deadline, f"tool_timeout:{task.id}", run)
                made = result_of(value, name, rt.settings.max_attachment_bytes)
            except RetryTool as exc:
                retry = str(exc) or f"Tool {name} asks to be called again"
            except Exception as exc:  # noqa: BLE001 - the model reads it as an error result
                failure = f"Tool {name} failed: {type(exc).__name__}: {exc}"
            finally:
                finished = finished is not False  # from here on, output is dropped
        self.abandoned.discard(task.id)
        current = rt.task(task.id) or task
        current = evolve(current, checkpoint=evolve(progress_of(current), output="".join(output)))
        if not finished:
            await self._timed_out(rt, current, tool, cut_off=tool.threaded)
        elif retry is not None:
            await self._finish(rt, current, await retry_result(rt, current, tool, retry, "retry"), Done())
        elif failure is not None:
            await self._finish(rt, current, error_result(current, failure, "tool_error"), Done())
        else:
            result = ToolResultEntry(input_of(current).call.id, name, made[0], parts=made[1])
            await self._finish(rt, current, result, Done(), blobs=made[2])

    async def _timed_out(self, rt: Runtime, task: Task, tool: Tool, cut_off: bool = False) -> None:
        inp = input_of(task)
        assert inp.timeout is not None
        template = TOOL_TIMEOUT_UNSAFE if inp.replay == "unsafe" or cut_off else TOOL_TIMEOUT
        await self._fail(rt, task, template.format(tool=tool.name, seconds=inp.timeout), "timeout")

    # ------------------------------------------------------------------ approval

    async def _await_decision(self, rt: Runtime, task: Task) -> Task | None:
        """The `approval` phase: nothing runs until a person decides (`decide`), unless a
        deadline was set: then the call is denied when it comes."""
        phase = task.checkpoint
        assert isinstance(phase, Approval)
        if phase.deadline is None:
            return None
        await rt.sleep_until(phase.deadline, f"approval:{task.id}")
        current = rt.task(task.id)
        if current is None or not isinstance(current.checkpoint, Approval):
            return None
        msg = TOOL_NOT_DECIDED.format(tool=input_of(current).call.name, seconds=phase.deadline - phase.since)
        await self._fail(rt, current, msg, "denied", code="approval_timeout")
        return None

    async def decide(self, rt: Runtime, call_id: str, *, approve: bool, arguments: Any = None,
                     reason: str = "", inbox: str | None = None) -> None:
        """The host's decision on a call waiting for one (see `durable.tasks.tool.approval`):
        committed (a barrier) when this returns; `ApprovalRejected` and nothing changed otherwise.
        If cancelled, a decision whose commit started still completes. `inbox`: the store's inbox
        row it came from (`durable.remote`), consumed by the deciding commit."""
        task = approval.waiting_call(rt, call_id)
        if task is None or not isinstance(task.checkpoint, Approval):
            raise await approval.refusal(rt, call_id, task)
        text = approval.edited_arguments(rt, task, arguments) if approve else None
        try:
            await rt.cancel_runner(task.id)  # its deadline timer must not deny the call meanwhile
            current = rt.task(task.id)
            if current is None or not isinstance(current.checkpoint, Approval):
                raise await approval.refusal(rt, call_id, current)  # ended by its deadline, an abort
            if text is not None:
                cid = current.conversation_id
                change = rt.change()
                change.put_task(evolve(current, state=Pending(), checkpoint=ToolProgress(arguments=text)))
                drop_approval(change, cid, current.id)
                edit_slot(change, cid, current.id, status="running")
                if inbox is not None:
                    change.consume_inbox(inbox)
                await rt.commit(change, retry=False)  # its runner starts: the tool runs
            else:
                tool = input_of(current).call.name
                msg = (TOOL_DENIED.format(tool=tool, reason=reason) if reason
                       else TOOL_DENIED_WITHOUT_REASON.format(tool=tool))
                await self._fail(rt, current, msg, "denied", retry=False, inbox=inbox)
        except BaseException:
            # Refused, or cancelled: a call still waiting gets its timer back (a call another
            # decision moved on keeps the runner that decision started).
            if rt.task(task.id) is not None:
                rt.ensure_runner(task.id)
            raise

    # ------------------------------------------------------------------ client tools

    async def _wait_for_client(self, rt: Runtime, task: Task) -> None:
        inp = input_of(task)
        assert inp.deadline is not None
        if await rt.wait_task_until(task.id, inp.deadline, f"client_tool:{task.id}"):
            return  # answered by the host
        current = rt.task(task.id)
        if current is None:
            return
        await self._finish(rt, current, error_result(current, TOOL_TIMED_OUT, "timeout"),
                           Failed(ErrorInfo(f"Tool {inp.call.name} execution timed out", ErrorDetail("timeout"))))

    async def submit_client_result(self, rt: Runtime, call_id: str, content: Parts, is_error: bool) -> None:
        for task in rt.live_tasks(kind=self.name):
            inp = input_of(task)
            if inp.call.id == call_id:
                if not inp.client:
                    raise ToolResultRejected(
                        f"Tool call {call_id} ({inp.call.name}) is not a client tool call; the harness runs it")
                result = ToolResultEntry(call_id, inp.call.name, content[0], is_error, parts=content[1])
                await self._finish(rt, task, result, Done(), retry=False, blobs=content[2])
                return
        raise ToolResultRejected(
            f"No client tool call {call_id} is waiting for a result (unknown, or already answered)")

    def written_back(self, task: Task) -> Task:
        """How a clean close leaves a running tool task: `pending`; an unsafe call that was executing
        (or a plain `def` one, whose thread runs on) marked started, so the next open does not run it again."""
        inp = input_of(task)
        if (inp.replay == "unsafe" and not inp.client) or task.id in self.abandoned:
            return evolve(task, state=Pending(), checkpoint=evolve(progress_of(task), started=True))
        return evolve(task, state=Pending())

    async def _fail(self, rt: Runtime, task: Task, msg: str, reason: FailureReason, *, code: str | None = None,
                    retry: bool = True, inbox: str | None = None, ended_at: float | None = None) -> None:
        """End the call with the error result `msg` (diagnostic `code`, default `reason`): failed."""
        await self._finish(rt, task, error_result(task, msg, code or reason),
                           Failed(ErrorInfo(msg, ErrorDetail(reason))), retry=retry, inbox=inbox, ended_at=ended_at)

    async def _finish(self, rt: Runtime, task: Task, result: ToolResultEntry, outcome: Outcome, *, retry: bool = True,
                      inbox: str | None = None, ended_at: float | None = None, blobs: Blobs | None = None) -> None:
        """Commit the task's ending with `result`. Task code's endings are lazy commits (a result
        lost to a power cut is redone as after a crash), except that the last tool of a round to
        end carries the round's close, and with it the next request, in the same commit (a
        barrier). A host's decision (`retry=False`: a client tool's result, a denial) is a
        barrier: the host is told. `blobs`: the bytes of the result's images and files, stored
        in the same commit."""
        parent = rt.task(task.parent_id) if task.parent_id is not None else None
        rounds = self.parent
        if rounds is not None and parent is not None and rounds.closable(rt, parent, task.id):
            parent = await siblings_written(rt, rounds.round_of(parent), parent, task.id)
        change = rt.change(barrier=not retry)
        change.put_attachments(blobs or {})
        # `ended_at`: when the call ended, if not now (a call cut off: the interrupt).
        progress = evolve(progress_of(task), result=result, ended_at=rt.now() if ended_at is None else ended_at)
        ended = change.put_task(evolve(task, state=Terminal(outcome), checkpoint=progress))
        edit_slot(change, task.conversation_id, task.id, output=progress.output,
                  status="error" if result.is_error else "done")
        drop_approval(change, task.conversation_id, task.id)
        if inbox is not None:  # a decision from durable.remote: its inbox row goes with this commit
            change.consume_inbox(inbox)
        if rounds is not None and parent is not None and rounds.closable(rt, parent, ended.id):
            await rounds.close_round(rt, change, parent)
        await rt.commit(change, retry=retry)

    # ------------------------------------------------------------------ what others see

    @classmethod
    def deadline(cls, task: Task) -> float | None:
        if isinstance(task.checkpoint, Approval):
            return task.checkpoint.deadline
        return input_of(task).deadline if isinstance(task.state, Waiting) else None

    @classmethod
    def describe(cls, task: Task) -> str:
        inp = input_of(task)
        waits = ", waiting for approval" if isinstance(task.checkpoint, Approval) and not task.terminal else ""
        return f"tool {inp.call.name}, {inp.replay}{waits}"

    @classmethod
    def phase_label(cls, task: Task) -> str | None:
        if isinstance(task.checkpoint, subagent.Delegated):
            return "subagent"
        return "approval" if isinstance(task.checkpoint, Approval) else None

    @classmethod
    def details(cls, task: Task) -> dict[str, Any]:
        inp = input_of(task)
        shown: dict[str, Any] = {"name": inp.call.name, "call_id": inp.call.id, "replay": inp.replay,
                                 "client": inp.client}
        if inp.timeout is not None:
            shown["timeout"] = inp.timeout
        phase = task.checkpoint
        if isinstance(phase, Approval):
            shown["approval"] = {"since": phase.since, "deadline": phase.deadline}
        elif isinstance(phase, ToolProgress) and phase.arguments is not None:
            shown["approved_arguments"] = phase.arguments
        elif isinstance(phase, subagent.Delegated):
            shown["subagent"] = {"conversation": phase.conversation_id, "input": phase.submission_id,
                                 "since": phase.since}
        return {"tool": shown}

    @classmethod
    def check(cls, task: Task) -> list[str]:
        inp = input_of(task)
        if isinstance(task.state, Waiting) and inp.client and inp.deadline is None:
            return [f"Task {task.id} (tool) waits for the host without a deadline"]
        if isinstance(task.checkpoint, Approval) and not task.terminal and not isinstance(task.state, Waiting):
            return [f"Task {task.id} (tool) asks for a decision but is {type(task.state).__name__.lower()}, not "
                    f"waiting"]
        # Judged by when the ending was committed (`updated_at`) when that is later than `ended_at`:
        # a call found past its deadline after a crash counts its runtime to the interrupt.
        progress = progress_of(task)
        outcome, start, ended = task.outcome, progress.started_at, max(progress.ended_at or 0.0, task.updated_at)
        if (isinstance(outcome, Failed) and outcome.error.detail.reason == "timeout" and not inp.client
                and inp.timeout is not None and start is not None and ended - start < inp.timeout):
            return [f"Task {task.id} (tool) timed out {ended - start:g} s after its start, before its timeout of "
                    f"{inp.timeout:g} s"]
        return []


__all__ = ["ToolKind"]
