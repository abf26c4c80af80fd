"""The run service: the host operations that start and stop work, for the harness's host API.

It is the task layer's side of `durable.engine.kinds.RunService`: submitting starts a run
(`runs.begin_run`), an abort or an interrupt marks the run's generation stopped and restarts its
runner in the abort handler, a manual compaction starts a compaction task, a client tool's
result ends its tool task, and a decision on a call waiting for approval moves or ends it
(`durable.tasks.tool.approval`). Host commits are not retried: a refusal reaches the caller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._frozen import evolve
from ..content import Parts
from ..records import StopMark, Submission, Task
from .compaction import CompactionKind
from .generation import runs
from .tool import ToolKind

if TYPE_CHECKING:
    from ..engine.head import Change
    from ..engine.runtime import Runtime


class StandardRunService:
    """See the module docstring."""

    def __init__(self, tool: ToolKind, compaction: CompactionKind) -> None:
        self._tool = tool
        self._compaction = compaction

    def begin_run(self, rt: Runtime, change: Change, conversation_id: str, subs: list[Submission]) -> Task:
        return runs.begin_run(rt, change, conversation_id, subs)

    async def stop_run(self, rt: Runtime, conversation_id: str, reason: StopMark) -> None:
        """Mark the active run stopped and restart its runner in the abort handler. Returns once
        the mark is committed; does nothing when no run is active or it is already stopping."""
        run = rt.live(conversation_id).run
        task = rt.task(run.task_id) if run else None
        if task is None or task.stop is not None:
            return
        change = rt.change()
        change.put_task(evolve(task, stop=reason), progress=False)
        await rt.commit(change, retry=False)
        await rt.restart_runner(task.id)

    async def compact(self, rt: Runtime, conversation_id: str) -> int:
        return await self._compaction.start(rt, conversation_id, "manual", retry=False)

    async def submit_client_result(self, rt: Runtime, call_id: str, content: Parts, is_error: bool) -> None:
        await self._tool.submit_client_result(rt, call_id, content, is_error)

    async def decide(self, rt: Runtime, call_id: str, *, approve: bool, arguments: Any = None,
                     reason: str = "", inbox: str | None = None) -> None:
        await self._tool.decide(rt, call_id, approve=approve, arguments=arguments, reason=reason, inbox=inbox)


__all__ = ["StandardRunService"]
