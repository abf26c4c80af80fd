"""The runtime: what task code sees of the harness, and nothing more.

Task kinds read the head through named methods (a task, a conversation's queued inputs, its
model context...), build a `Change` and commit it through `commit`, the only way task code
writes: it starts runners for the tasks the change made runnable, and retries a commit the store
refused for a passing cause instead of letting the task run again from the file. Timers, waits
and deadlines are here too, so task code imports no event loop. The runtime never exposes the
session, the store or the harness.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

import anyio

from .._frozen import evolve
from .._loop import loop
from ..errors import CorruptSession, StorageError
from ..models.protocol import Model
from ..records import Checkpoint, Live, Pending, Running, State, StoredEntry, Submission, Task, TaskInput
from ..settings import Settings
from ..tools import ToolRegistry
from ..tools.subagent import Subagent, agents
from . import ownership
from .clock import Clock
from .context import Context
from .head import Change
from .instructions import Instruction, checked_instructions
from .progress import ProgressFlusher
from .reports import ErrorReport, Reporter
from .session import Session

T = TypeVar("T")

_BLOB_CACHE = 64_000_000
"""Bytes of attachments a runtime keeps after reading them (beyond the last request's own)."""


class Runners(Protocol):
    """The scheduler, as the runtime uses it."""

    def spawn(self, task_id: int) -> None: ...

    async def cancel(self, task_id: int) -> None: ...


class Runtime:
    """See the module docstring. One per harness, made when the harness opens."""

    def __init__(self, session: Session, *, model: Model, tools: ToolRegistry, settings: Settings,
                 clock: Clock, report: Reporter, progress: ProgressFlusher, deps: Any = None,
                 instructions: Sequence[Instruction] = ()) -> None:
        self._session = session
        self.deps = deps  # the host's dependencies, handed to tools and instruction sections, never stored
        self.instructions = instructions  # the sections after settings.system_prompt (see .instructions)
        self.model = model
        self.tools = tools
        self.settings = settings
        self.clock = clock
        self.report = report
        self.location = session.storage.location  # the session's, as errors and prompt cache keys name it
        self.progress = progress  # the flush schedule of streaming progress (its task is the harness's)
        primitives = loop()  # made inside the event loop: its primitives looked up once (`durable._loop`)
        self.move_on_after: Callable[[float], anyio.CancelScope] = primitives.move_on_after
        """A block cancelled when it runs past `seconds` of the event loop's time (how long a model
        stream may stay silent); its `cancelled_caught` says whether it was."""
        self.loop_time: Callable[[], float] = primitives.current_time
        """The event loop's time (what the deadlines of `move_on_after` and `fail_after` count in)."""
        self._runners: Runners | None = None
        self._blobs: dict[str, bytes] = {}  # attachments read lately, newest last (`attachments`)
        name = getattr(model, "name", None)
        self.provider: str | None = name.split(":", 1)[0] if isinstance(name, str) else None
        """The provider part of the model's name ("openai" for "openai:gpt-4o"), as errors name it."""

    # ------------------------------------------------------------------ a conversation's agent

    def agent(self, conversation_id: str, change: Change | None = None) -> Subagent | None:
        """The sub-agent a child conversation runs as (None: a top-level conversation, or a
        sub-agent this harness no longer offers: then it runs with the harness's profile). Read
        from `change` when given (the commit that starts the child)."""
        live = change.live(conversation_id) if change is not None else self.live(conversation_id)
        if live.parent is None:
            return None
        return next((a for a in agents(self.tools) if a.name == live.parent.agent), None)

    def model_for(self, conversation_id: str, change: Change | None = None) -> Model:
        """The model a conversation's requests go to: its sub-agent's, else the harness's."""
        agent = self.agent(conversation_id, change)
        return agent.model if agent is not None and agent.model is not None else self.model

    def tools_for(self, conversation_id: str, change: Change | None = None) -> ToolRegistry:
        """The tools a conversation's model is offered: its sub-agent's own, else the harness's."""
        agent = self.agent(conversation_id, change)
        return agent.tools if agent is not None else self.tools

    def instructions_for(self, conversation_id: str, change: Change | None = None) -> Sequence[Instruction]:
        """The instruction sections of a conversation: its sub-agent's, else the harness's."""
        agent = self.agent(conversation_id, change)
        return self.instructions if agent is None else checked_instructions(agent.instructions)

    async def settled(self, submission_id: str) -> Submission | None:
        """Wait until the submission is settled and return it as committed (None: unknown here)."""
        record = await self._session.wait_settled(submission_id)
        return record if record is not None else await self._session.storage.get_submission(submission_id)

    def attach(self, runners: Runners) -> None:
        """Give the runtime the scheduler whose runners its commits start (once, at open)."""
        self._runners = runners

    def now(self) -> float:
        return self.clock.now()

    # ------------------------------------------------------------------ reading the head

    def task(self, task_id: int) -> Task | None:
        """A live task as the head has it (None once it ended)."""
        return self._session.tasks.get(task_id)

    def live_tasks(self, *, kind: str | None = None, conversation_id: str | None = None) -> list[Task]:
        """The live tasks of the head, of one kind and/or one conversation."""
        return [t for t in self._session.tasks.values()
                if (kind is None or t.kind == kind)
                and (conversation_id is None or t.conversation_id == conversation_id)]

    async def ended_child(self, task_id: int) -> Task | None:
        """A child task's ending (a tool call of a round): kept in memory while its parent lives,
        else read from the store. Once read, a parent does not read it again."""
        found = self._session.ended_children.pop(task_id, None)
        return found if found is not None else await self._session.storage.get_task(task_id)

    async def ended_tasks(self, kind: str) -> list[Task]:
        """Every ended task of `kind`, read from the store: a scan of that kind's history, for
        error paths only (a host deciding a call that may have ended long ago)."""
        return await self._session.storage.find_tasks(kind=kind, state="terminal")

    def submission(self, submission_id: str) -> Submission | None:
        """An unsettled submission as the head has it."""
        return self._session.submissions.get(submission_id)

    def queued(self, conversation_id: str) -> list[Submission]:
        """The inputs of a conversation waiting for its next run, in order."""
        subs = self._session.submissions
        return [subs[s] for s in self._session.conversation(conversation_id).queued if s in subs]

    def live(self, conversation_id: str) -> Live:
        """The conversation's live document as the head has it."""
        return self._session.conversation(conversation_id).live

    def last_seq(self, conversation_id: str) -> int:
        return self._session.conversation(conversation_id).last_seq

    def compaction(self, conversation_id: str) -> StoredEntry | None:
        """The conversation's last compaction summary, where its model context starts."""
        return self._session.conversation(conversation_id).compaction

    async def context(self, conversation_id: str) -> Context:
        """The conversation's model context (loaded once, then kept up to date by commits)."""
        return await self._session.load_context(conversation_id)

    async def attachments(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """The stored bytes of the images and files of `hashes`, by sha256, read from the store
        when a request needs them; those read lately (up to `_BLOB_CACHE` bytes) are kept, so a
        conversation that sends the same screenshot in every request reads it once. A hash the
        store does not hold is `CorruptSession` naming the file."""
        wanted = list(dict.fromkeys(hashes))
        cache = self._blobs
        missing = [h for h in wanted if h not in cache]
        storage = self._session.storage
        if missing:
            found = await storage.get_attachments(missing)
            lost = [h for h in missing if h not in found]
            if lost:
                raise CorruptSession(f"Session {storage.location} is damaged: the attachment {lost[0]} that its "
                                     f"entries reference is not stored", location=storage.location)
            cache.update(found)
        out = {h: cache.pop(h) for h in wanted}
        cache.update(out)  # the newest last
        total = sum(map(len, cache.values()))
        for h in list(cache):
            if total <= _BLOB_CACHE or h in out:
                break
            total -= len(cache.pop(h))
        return out

    # ------------------------------------------------------------------ committing

    def change(self, *, barrier: bool = True) -> Change:
        """A change to build; `barrier=False` makes it a lazy commit (see `Change`)."""
        return self._session.change(barrier=barrier)

    async def commit(self, change: Change, *, retry: bool = True) -> None:
        """Commit a change, then start runners for the tasks it made runnable. Task code commits
        with `retry`: a transient refusal is reported and the commit tried again (see
        `Session.commit`); if cancelled, the commit in flight completes and the retries stop.
        The host API commits without: the caller gets the refusal (its input was not accepted)."""

        def refused(exc: StorageError, patience: float) -> None:
            owners = ", ".join(f"task {t.id} ({t.kind})" for t in change.batch.tasks)
            if not owners:  # a partial answer or tool output: the live documents it writes
                owners = "the commit of " + (", ".join(f"conversation {c!r}'s live document" for c in change.batch.live)
                                             or "a change")
            until = "" if patience == math.inf else f"; tried again for {patience:.0f} s more while the disk stays full"
            self.report(ErrorReport(f"{owners[0].upper()}{owners[1:]} could not commit and will try again: "
                                    f"{exc}{until}", raw=repr(exc), topic="commit"))

        await self._session.commit(change, retry=refused if retry else None)
        if self._runners is not None:
            for task in change.batch.tasks:
                if not task.terminal:
                    self._runners.spawn(task.id)

    async def mark_running(self, task: Task, *, barrier: bool = False, stamp: bool = True) -> Task:
        """Commit `running` (if it is not) before work whose interruption must be charged; a
        lazy commit unless `barrier` (the work has an effect outside the process that a power
        cut must not hide: an unsafe tool). `stamp=False` keeps `updated_at` (see `Change.put_task`)."""
        if isinstance(task.state, Running):
            return task
        change = self.change(barrier=barrier)
        task = change.put_task(evolve(task, state=Running()), progress=False, stamp=stamp)
        await self.commit(change)
        return task

    def new_task(self, change: Change, *, conversation_id: str, kind: str, input: TaskInput,
                 checkpoint: Checkpoint | None = None, parent_id: int | None = None,
                 state: State = Pending()) -> Task:
        now = self.now()
        task = Task(self._session.new_task_id(), conversation_id, kind, input, state, checkpoint,
                    parent_id=parent_id, created_at=now, updated_at=now)
        return change.create_task(task)

    # ------------------------------------------------------------------ waiting and time

    async def sleep_until(self, deadline: float, name: str) -> None:
        await self.clock.sleep_until(deadline, name)

    async def wait_tasks(self, task_ids: Iterable[int]) -> None:
        """Wait until each task's ending is committed."""
        for tid in task_ids:
            await self._session.task_done_event(tid).wait()

    async def wait_task_until(self, task_id: int, deadline: float, name: str) -> bool:
        """Wait until the task's ending is committed (True) or the clock reaches `deadline`
        (False, the durable timer `name`)."""
        done = self._session.task_done_event(task_id)
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:

                async def expire() -> None:
                    await self.clock.sleep_until(deadline, name)
                    scope.cancel()

                tg.start_soon(expire)
                await done.wait()
                tg.cancel_scope.cancel()
        return not scope.cancelled_caught

    async def within(self, seconds: float, name: str, work: Callable[[], Awaitable[T]]) -> tuple[bool, T | None]:
        """Run `work` for at most `seconds` on the clock (the timer `name`): (True, its result),
        or (False, None) when the time ran out and it was cancelled."""
        return await self.until(self.now() + seconds, name, work)

    async def until(self, deadline: float, name: str, work: Callable[[], Awaitable[T]]) -> tuple[bool, T | None]:
        """Run `work` until the clock reaches `deadline` (the durable timer `name`, e.g. a tool's
        timeout measured from its stored start): (True, its result), or (False, None) when the
        deadline came first and `work` was cancelled (at once for a deadline already past). What
        `work` raises is raised as it is (not wrapped in an exception group)."""
        result: T | None = None
        raised: Exception | None = None
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:

                async def expire() -> None:
                    await self.clock.sleep_until(deadline, name)
                    scope.cancel()

                tg.start_soon(expire)
                try:
                    result = await work()
                except Exception as exc:  # noqa: BLE001 - raised below, outside the task group
                    raised = exc
                tg.cancel_scope.cancel()
        if raised is not None:
            raise raised
        return not scope.cancelled_caught, result

    @staticmethod
    def fail_after(seconds: float) -> AbstractContextManager[object]:
        """A block that raises `TimeoutError` when it runs past `seconds` of the event loop's time."""
        return anyio.fail_after(seconds)

    def ending_in_flight(self, task_id: int) -> bool:
        """Whether the task's ending is in the head but not yet written (it may still be refused)."""
        return self._session.ending_in_flight(task_id)

    async def before_external_work(self, what: str) -> None:
        """Return once the store surely owns its file or space (at once, normally): no request is
        sent and no tool runs on behalf of an owner that may have lost its lease. Raises
        `LockLost` naming `what` otherwise (see `durable.engine.ownership`)."""
        await ownership.before_external_work(self._session.storage, what)

    # ------------------------------------------------------------------ runners

    async def cancel_runner(self, task_id: int) -> None:
        """Cancel the task's runner and wait until it has stopped (its in-flight commit completes)."""
        if self._runners is not None:
            await self._runners.cancel(task_id)

    def ensure_runner(self, task_id: int) -> None:
        """Start a runner for the live task if it has none (a runner it has is left alone)."""
        if self._runners is not None:
            self._runners.spawn(task_id)

    async def restart_runner(self, task_id: int) -> None:
        """Cancel the task's runner and start a new one, which reads the task afresh from the head."""
        if self._runners is not None:
            await self._runners.cancel(task_id)
            self._runners.spawn(task_id)


__all__ = ["Runners", "Runtime"]
