"""The run service: the host operations that start and stop work, for the harness's host API.

It is the task layer's side of `durable.engine.kinds.RunService`: submitting starts a run
(`runs.begin_run`), an abort, an interrupt or an archive marks the run's generation stopped and
restarts its runner in the abort handler (an archive without a run is one commit), a manual
compaction starts a compaction task, a client tool's result ends its tool task, and a decision
on a call waiting for approval moves or ends it (`durable.tasks.tool.approval`).
Host commits are not retried: a refusal reaches the caller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._frozen import evolve
from ..content import Parts
from ..records import StopMark, Submission, Task
from .compaction import CompactionKind
from .generation import runs
from .generation.records import RUN_ARCHIVED
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

    async def archive(self, rt: Runtime, conversation_id: str) -> None:
        """Archive the conversation: an active run is stopped `archived` (its abort handler ends it
        and archives the conversation in the ending commit); without one, one commit archives it and
        answers its queued inputs. Returns once the archive is committed."""
        while not rt.live(conversation_id).archived:
            run = rt.live(conversation_id).run
            task = rt.task(run.task_id) if run else None
            if task is None:
                change = rt.change()
                runs.archive(rt, change, conversation_id, RUN_ARCHIVED)
                await rt.commit(change, retry=False)
                return
            if task.stop is None:
                await self.stop_run(rt, conversation_id, "archived")
            await rt.wait_tasks([task.id])  # an abort or interrupt under way ends first; then again

    async def unarchive(self, rt: Runtime, conversation_id: str) -> None:
        """Let the conversation take input again (one commit; nothing when it is not archived)."""
        if rt.live(conversation_id).archived:
            change = rt.change()
            change.edit_live(conversation_id, archived=False)
            await rt.commit(change, retry=False)

    async def compact(self, rt: Runtime, conversation_id: str) -> int:
        return await self._compaction.start(rt, conversation_id, "manual", retry=False)

    async def submit_client_result(self, rt: Runtime, call_id: str, content: Parts, is_error: bool) -> None:
        await self._tool.submit_client_result(rt, call_id, content, is_error)

    async def decide(self, rt: Runtime, call_id: str, *, approve: bool, arguments: Any = None,
                     reason: str = "", inbox: str | None = None) -> None:
        await self._tool.decide(rt, call_id, approve=approve, arguments=arguments, reason=reason, inbox=inbox)


__all__ = ["StandardRunService"]
