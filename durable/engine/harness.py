"""The harness: owns a session store, runs its tasks, and is the host's handle on everything.

Lifecycle: `async with Harness(storage, model=...) as h:` opens the store (refusing a second
owner), and in one commit charges every task the previous process left `running` (recovery).
Nothing runs until `resume()`; submitting or waiting resumes implicitly. Leaving the block is a
clean close: running invocations are cancelled, their in-flight commits complete, and their
tasks are written back `pending` with their checkpoint and their `restarts` unchanged.

Scheduling: every non-terminal task has at most one *runner* (an anyio task in the harness's task
group) that drives it through its kind's state machine. A runner that sleeps or waits holds no
durable claim: only `running` in the file means "an invocation owns it".

The harness never imports the task kinds; they are handed in (see `durable.open_harness`).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Protocol

import anyio
import attrs
from attrs import frozen

from ..codec import CodecError
from ..errors import (
    ConversationBusy,
    HarnessClosed,
    HarnessError,
    LockLost,
    StorageClosed,
    StorageError,
    UnknownSubmission,
    UnknownTask,
)
from ..records import (
    Faulted,
    Live,
    Pending,
    Queued,
    Running,
    Sleeping,
    StoredEntry,
    Submission,
    SubmissionStatus,
    Task,
    ErrorInfo,
    ErrorDetail,
    Terminal,
    Waiting,
    ToolInput,
)
from ..settings import Settings
from ..storage.protocol import Storage
from . import recovery
from .clock import Clock, SystemClock
from .reports import ErrorReport, Reporter, ReportCallback, TaskFaulted, TaskRef
from .session import Change, Session
from .tools import Tool, ToolRegistry


class TaskKind(Protocol):
    """A kind of task: drives one task until it is terminal, sleeping or waiting."""

    name: str

    async def run(self, rt: Runtime, task: Task) -> None: ...


@frozen
class Wake:
    active: bool  # some task is running or ready to run
    next_timer: float | None  # the earliest durable deadline (clock seconds), if any


@attrs.define
class _Runner:
    scope: anyio.CancelScope
    done: anyio.Event


def _storage_error(exc: BaseException) -> StorageError | None:
    """The StorageError behind `exc`, also when it comes wrapped in an exception group."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            found = _storage_error(sub)
            if found is not None:
                return found
    return None


class Runtime:
    """What task code sees of the harness."""

    def __init__(self, harness: Harness) -> None:
        self._h = harness
        self.session = harness.session
        self.model = harness.model
        self.tools = harness.tools
        self.clock = harness.clock
        self.report = harness.report
        self.kinds = harness.kinds

    @property
    def settings(self) -> Any:
        return self._h.settings

    def now(self) -> float:
        return self.clock.now()

    def change(self) -> Change:
        return self.session.change()

    async def commit(self, change: Change) -> None:
        """Commit, then start runners for the tasks this change made runnable."""
        await change.commit()
        for task in change.batch.tasks:
            if not task.terminal:
                self._h._spawn(task.id)

    def new_task(self, change: Change, *, conversation_id: str, kind: str, input: Any,
                 checkpoint: Any = None, parent_id: int | None = None, state: Any = Pending()) -> Task:
        now = self.now()
        task = Task(self.session.new_task_id(), conversation_id, kind, input, state, checkpoint,
                    parent_id=parent_id, created_at=now, updated_at=now)
        return change.put_task(task, progress=False)

    async def sleep_until(self, deadline: float, name: str) -> None:
        await self.clock.sleep_until(deadline, name)

    async def wait_tasks(self, task_ids: Iterable[int]) -> None:
        for tid in task_ids:
            await self.session.task_done_event(tid).wait()

    async def cancel_runner(self, task_id: int) -> None:
        await self._h._cancel_runner(task_id)

    async def restart_runner(self, task_id: int) -> None:
        """Cancel the task's runner (its in-flight commit completes) and start a new one, which
        reads the task afresh from the head."""
        await self._h._cancel_runner(task_id)
        self._h._spawn(task_id)


class Harness:
    """See the module docstring. Prefer `durable.open_harness(...)`, which wires the task kinds."""

    def __init__(
        self,
        storage: Storage,
        *,
        model: Any,
        kinds: Mapping[str, TaskKind],
        tools: Iterable[Tool] = (),
        settings: Settings | Any = None,
        clock: Clock | None = None,
        report: ReportCallback | None = None,
    ) -> None:
        self.storage = storage
        self.model = model
        self.kinds = dict(kinds)
        self.tools = ToolRegistry(tools)
        self.settings = settings if settings is not None else Settings()
        self.clock = clock or SystemClock()
        self.report = Reporter(report)
        self.session: Session = None  # type: ignore[assignment]
        self._tg: anyio.abc.TaskGroup = None  # type: ignore[assignment]
        self._runners: dict[int, _Runner] = {}
        self._state = "new"  # new -> open -> resumed -> closing -> closed | crashed
        self.rt: Runtime = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Harness:
        opened = await self.storage.open()
        try:
            self.session = Session(self.storage, opened, self.clock.now)
            self.rt = Runtime(self)
            await recovery.charge_interrupted(self.session)
        except BaseException:
            await self.storage.close()
            raise
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._state = "open"
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        try:
            if self._state in ("open", "resumed"):
                with anyio.CancelScope(shield=True):
                    await self.close()
        finally:
            self._tg.cancel_scope.cancel()
            try:
                suppressed = await self._tg.__aexit__(*exc)
            except BaseExceptionGroup as group:
                # The runners never let an error out, so a group holding only the body's own
                # exception is unwrapped: the caller gets what it raised, not an exception group.
                if exc[1] is not None and len(group.exceptions) == 1 and group.exceptions[0] is exc[1]:
                    return False
                raise
        return suppressed

    async def resume(self) -> None:
        """Start running every task that is not terminal. Idempotent."""
        self._check_open()
        if self._state == "resumed":
            return
        self._state = "resumed"
        for tid in sorted(self.session.tasks):
            self._spawn(tid)

    async def close(self) -> None:
        """Clean close: cancel running invocations, write their tasks back `pending` (no charge),
        release the file. Idempotent."""
        if self._state not in ("open", "resumed"):
            return
        self._state = "closing"
        with anyio.CancelScope(shield=True):
            runners = list(self._runners.values())
            for runner in runners:
                runner.scope.cancel()
            for runner in runners:
                await runner.done.wait()
            change = self.session.change()
            for task in list(self.session.tasks.values()):
                if isinstance(task.state, Running):
                    written_back = getattr(self.kinds.get(task.kind), "written_back", None)
                    task = written_back(task) if written_back else attrs.evolve(task, state=Pending())
                    change.put_task(task, progress=False)
            try:
                if change:
                    await change.commit()
            finally:
                self.session.close_followers()
                await self.storage.close()
                self._state = "closed"

    def _abandon(self) -> None:
        """Stop everything without writing (what a crash leaves). For `durable.testing`."""
        self._state = "crashed"
        self.session.close_followers()
        self._tg.cancel_scope.cancel()

    def _check_open(self) -> None:
        if self._state not in ("open", "resumed"):
            raise HarnessClosed(f"The harness on {self.storage.location} is {self._state}; it accepts no more work")

    # ------------------------------------------------------------------ runners

    def _spawn(self, task_id: int) -> None:
        if self._state != "resumed" or task_id in self._runners:
            return
        task = self.session.tasks.get(task_id)
        if task is None:
            return
        runner = _Runner(anyio.CancelScope(), anyio.Event())
        self._runners[task_id] = runner
        self._tg.start_soon(self._run, task_id, runner)

    async def _run(self, task_id: int, runner: _Runner) -> None:
        try:
            with runner.scope:
                task = self.session.tasks.get(task_id)
                if task is not None:
                    kind = self.kinds.get(task.kind)
                    await self._drive(task_id, task, kind)
        finally:
            if self._runners.get(task_id) is runner:
                del self._runners[task_id]
            runner.done.set()

    async def _drive(self, task_id: int, task: Task, kind: TaskKind | None) -> None:
        """Run the task's kind. A refused commit (disk full, I/O error) is an infrastructure
        failure: reported, then the task runs again from what the file holds after a backoff,
        so work goes on once the cause is gone. A value that can never be stored, an unknown
        kind or a bug in task code faults the task."""
        delay = 0.05
        while True:
            try:
                if kind is None:
                    raise HarnessError(f"Task {task_id} has kind {task.kind!r}, which this harness does not know")
                await kind.run(self.rt, task)
                return
            except Exception as exc:  # noqa: BLE001 - sorted below; cancellation is not caught
                err = _storage_error(exc)
                if err is None or isinstance(err.__cause__, CodecError):
                    await self._fault(task_id, exc)  # a bug in task code, or a value never storable
                    return
                if isinstance(err, (LockLost, StorageClosed)):
                    self.report(ErrorReport(f"Task {task_id} ({task.kind}) stopped: {err}", TaskRef.of(task), repr(err)))
                    return
                self.report(ErrorReport(f"Task {task_id} ({task.kind}) could not commit and will try again: {err}",
                                        TaskRef.of(task), repr(err)))
                await anyio.sleep(delay)
                delay = min(delay * 2, 5.0)
                current = self.session.tasks.get(task_id)
                if current is None:
                    return
                task = current

    async def _fault(self, task_id: int, exc: Exception) -> None:
        task = self.session.tasks.get(task_id)
        if task is None:
            return
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]  # type: ignore[assignment]
        message = f"Task {task_id} ({task.kind}) raised {type(exc).__name__}: {exc}"
        self.report(ErrorReport(message, TaskRef.of(task), repr(exc)))
        kind = self.kinds.get(task.kind)
        hook = getattr(kind, "fault", None)
        change = self.session.change()
        error = ErrorInfo(message, ErrorDetail("exception"))
        if hook is not None:
            hook(self.rt, change, task, error)
        else:
            change.put_task(attrs.evolve(task, state=Terminal(Faulted(error))))
        try:
            await self.rt.commit(change)
        except StorageError as err:  # it stays as the file holds it; a reopen runs it again
            self.report(ErrorReport(f"Task {task_id} ({task.kind}) could not be marked faulted: {err}",
                                    TaskRef.of(task), repr(err)))
            return
        self.report(TaskFaulted(TaskRef.of(task), "exception", message))

    async def _cancel_runner(self, task_id: int) -> None:
        runner = self._runners.get(task_id)
        if runner is not None:
            runner.scope.cancel()
            await runner.done.wait()

    # ------------------------------------------------------------------ host API

    def conversation(self, conversation_id: str = "root") -> Conversation:
        return Conversation(self, conversation_id)

    @property
    def root(self) -> Conversation:
        return self.conversation("root")

    async def task(self, task_id: int) -> Task | None:
        """The task as committed (the head for live tasks, the file for ended ones)."""
        self._check_open()
        return await self.storage.get_task(task_id)

    async def wait_for_task(self, task_id: int) -> Task:
        """Wait until the task is terminal (resumes the harness); return its record."""
        await self.resume()
        await self.session.task_done_event(task_id).wait()
        task = await self.storage.get_task(task_id)
        if task is None:
            raise UnknownTask(f"Task {task_id} does not exist in {self.storage.location}")
        return task

    async def tasks(self, *, kind: str | None = None, state: str | None = None,
                    conversation_id: str | None = None) -> list[Task]:
        """Tasks by kind and/or state tag ("pending", "running", "sleeping", "waiting", "terminal")."""
        self._check_open()
        return await self.storage.find_tasks(kind=kind, state=state, conversation_id=conversation_id)

    def wake(self) -> Wake:
        """Whether work is active, and when the next durable timer fires."""
        active = False
        deadlines = []
        for task in self.session.tasks.values():
            if isinstance(task.state, (Pending, Running)):
                active = True
            elif isinstance(task.state, Sleeping):
                deadlines.append(task.state.until)
            elif isinstance(task.state, Waiting) and isinstance(task.input, ToolInput) and task.input.deadline:
                deadlines.append(task.input.deadline)
        return Wake(active, min(deadlines) if deadlines else None)

    async def submit_tool_result(self, call_id: str, content: str, *, is_error: bool = False) -> None:
        """Answer a client tool call. Raises `ToolResultRejected` for an unknown call, a call that
        is not a client tool's, or one already answered."""
        self._check_open()
        await self.resume()
        await self.kinds["tool"].submit_client_result(self.rt, call_id, content, is_error)  # type: ignore[attr-defined]


class Conversation:
    """A conversation of a harness; `harness.root` is the root conversation."""

    def __init__(self, harness: Harness, conversation_id: str) -> None:
        self._h = harness
        self.id = conversation_id

    async def submit(self, text: str, *, when_busy: str | None = None) -> SubmissionHandle:
        """Commit a user input (durable when this returns) and start or queue its run.

        `when_busy` (default `settings.when_busy`) says what to do while a run is active:
        "queue" answers it after the run, "interrupt" stops the run now, "reject" raises
        `ConversationBusy`."""
        h = self._h
        h._check_open()
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"An input for conversation {self.id!r} must be non-empty text")
        policy = when_busy or h.settings.when_busy
        if policy not in ("queue", "interrupt", "reject"):
            raise ValueError(f"when_busy must be 'queue', 'interrupt' or 'reject', not {policy!r}")
        await h.resume()
        gen = h.kinds["generation"]
        conv = h.session.conversation(self.id)
        run = conv.live.run
        if run is not None and policy == "reject":
            raise ConversationBusy(
                f"Conversation {self.id!r} is busy (run of task {run.task_id}); the input was not accepted"
            )
        sub = Submission(f"sub_{uuid.uuid4().hex[:16]}", self.id, text, created_at=h.clock.now())
        change = h.session.change()
        if run is None and not conv.queued:
            gen.begin_run(h.rt, change, self.id, [sub])  # type: ignore[attr-defined]
        else:
            change.put_submission(sub)
        await h.rt.commit(change)
        if run is not None and policy == "interrupt":
            await gen.stop_run(h.rt, self.id, reason="interrupted")  # type: ignore[attr-defined]
        return SubmissionHandle(h, sub.id)

    async def abort(self) -> None:
        """Abort the active run (if any): its abort handler keeps the partial answer, answers
        unstarted tool calls as aborted and ends the run `unanswered{reason: aborted}`."""
        self._h._check_open()
        await self._h.resume()
        await self._h.kinds["generation"].stop_run(self._h.rt, self.id, reason="aborted")  # type: ignore[attr-defined]

    async def compact(self) -> int:
        """Start a compaction of this conversation; returns its task id."""
        self._h._check_open()
        await self._h.resume()
        return await self._h.kinds["compaction"].start(self._h.rt, self.id, "manual")  # type: ignore[attr-defined]

    def live(self) -> Live:
        """The live document as committed."""
        return self._h.session.conversation(self.id).committed_live

    def follow(self) -> AsyncIterator[Live]:
        """Every committed change of the live document, in commit order (ends at close)."""
        return self._h.session.follow(self.id)

    async def entries(self, from_seq: int = 1, to_seq: int | None = None) -> list[StoredEntry]:
        self._h._check_open()
        return await self._h.storage.get_entries(self.id, from_seq, to_seq)

    def submission(self, submission_id: str) -> SubmissionHandle:
        return SubmissionHandle(self._h, submission_id)


class SubmissionHandle:
    """A submitted input. `await wait()` returns its result once settled (also in a later process)."""

    def __init__(self, harness: Harness, submission_id: str) -> None:
        self._h = harness
        self.id = submission_id

    async def get(self) -> Submission:
        sub = await self._h.storage.get_submission(self.id)
        if sub is None:
            raise UnknownSubmission(f"Submission {self.id} does not exist in {self._h.storage.location}")
        return sub

    async def wait(self) -> SubmissionStatus:
        """Wait until the submission settles; returns `Answered()` or `Unanswered(reason, detail)`."""
        sub = await self.get()
        if isinstance(sub.status, Queued):
            await self._h.resume()
            await self._h.session.settled_event(self.id).wait()
            sub = await self.get()
        return sub.status


__all__ = ["Harness", "Conversation", "SubmissionHandle", "Runtime", "TaskKind", "Wake"]
