"""The harness: the host's handle on a session. It owns the store, the commit line, the
scheduler and the runtime, and offers the host API; it never imports the task kinds (they are
handed in by `durable.open_harness`, with the run service the host operations go through).

Lifecycle (`HarnessState`): `async with Harness(storage, model=...) as h:` opens the store
(refusing a second owner) and, in one commit, charges every task the previous process left
`running` (recovery). Nothing runs until `resume()`; submitting or waiting resumes implicitly.
Leaving the block is a clean close: running invocations are cancelled, their in-flight commits
complete, and their tasks are written back as their kind says (`pending`, checkpoint and
`restarts` unchanged): a close is not a crash. `abandon()` stops everything without writing, as
a crash would (for crash tests).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Generic

import anyio
import anyio.abc

from .._frozen import frozen
from ..codec import exception_leaves
from ..content import Content, content_parts
from ..errors import ApprovalRejected, DiskFull, HarnessClosed, HarnessError, StorageError, UnknownTask, UnknownTaskKind
from ..inputs import check_conversation_id
from ..models.protocol import Model, check_settings
from ..prices import in_force
from ..records import (
    EMPTY_USAGE,
    ConversationInfo,
    ModelSettings,
    Pending,
    Running,
    Sleeping,
    Submission,
    Task,
    TaskInput,
    UsageTotals,
    Waiting,
)
from ..settings import Settings
from ..storage.protocol import InboxDecision, Storage
from ..tools import DepsT, Tool, ToolRegistry
from . import inbox, ownership, recovery, retention
from .clock import Clock, SystemClock
from .conversation import Conversation, listed, output_schema
from .instructions import Instruction, checked_instructions
from .integrity import IntegrityCheck
from .kinds import RunService, TaskKind
from .progress import ProgressFlusher
from .reports import ErrorReport, ReportCallback, Reporter
from .runtime import Runtime
from .scheduler import Scheduler
from .session import Session

_CHECK_DELAY = 1.0  # seconds from resume to the background integrity check


class HarnessState(enum.Enum):
    """The lifecycle of a harness (`Harness.state`): new, open (recovery done), resumed (runners
    run), closing, closed; or crashed (abandoned without writing, or died while opening)."""

    NEW = "new"
    OPEN = "open"  # opened, recovery done, nothing running yet
    RESUMED = "resumed"  # runners run
    CLOSING = "closing"
    CLOSED = "closed"
    CRASHED = "crashed"  # abandoned without writing (a crash test), or died while opening


_ACCEPTING = (HarnessState.OPEN, HarnessState.RESUMED)


@frozen
class Wake:
    """What `Harness.wake()` returns: whether work is active, and when the next durable timer fires."""

    active: bool  # some task is running or ready to run
    next_timer: float | None  # the earliest durable deadline (clock seconds), if any


class Harness(Generic[DepsT]):
    """See the module docstring. Prefer `durable.open_harness(...)`, which wires the task kinds.
    `deps` (typed: `Harness[MyDeps]`) is handed to tools (`ToolContext.deps`) and instruction
    sections (`PrepareContext.deps`), never stored. `instructions`: the sections after
    `settings.system_prompt` (see `durable.engine.instructions`). `output`: the type every input
    is answered as unless its `submit` gives one (structured output; its JSON schema, `output`
    here, is stored with each input)."""

    def __init__(
        self,
        storage: Storage,
        *,
        model: Model,
        kinds: Sequence[TaskKind],
        runs: RunService,
        tools: Iterable[Tool] = (),
        settings: Settings | None = None,
        clock: Clock | None = None,
        report: ReportCallback | None = None,
        deps: DepsT = None,  # type: ignore[assignment]  # None for a harness without dependencies
        instructions: Iterable[Instruction] = (),
        output: Any = None,
    ) -> None:
        self.storage = storage
        self.deps: DepsT = deps
        self.instructions = checked_instructions(instructions)
        self.output: dict[str, Any] | None = None if output is None else output_schema(output)
        self.model = model
        self.kinds: dict[str, TaskKind] = {}
        for kind in kinds:
            if kind.name in self.kinds:
                raise HarnessError(f"Task kind {kind.name!r} is given twice to the harness on {storage.location}")
            self.kinds[kind.name] = kind
        self.runs = runs
        self.tools = ToolRegistry(tools)
        self.settings = settings if settings is not None else Settings()
        check_settings(model, self.settings.model_defaults, self.tools.specs, self.output is not None)
        self.clock = clock or SystemClock()
        self.report = Reporter(report)
        self._state = HarnessState.NEW
        self._session: Session | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._inbox_scope = anyio.CancelScope()
        self._scheduler: Scheduler | None = None
        self._rt: Runtime | None = None
        self._broken: StorageError | None = None
        self._integrity = IntegrityCheck()

    @property
    def state(self) -> HarnessState:
        return self._state

    @property
    def session(self) -> Session:
        if self._session is None:
            raise HarnessClosed(f"The harness on {self.storage.location} is {self._state.value}; it was never opened")
        return self._session

    @property
    def rt(self) -> Runtime:
        if self._rt is None:
            raise HarnessClosed(f"The harness on {self.storage.location} is {self._state.value}; it was never opened")
        return self._rt

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Harness[DepsT]:
        opened = await self.storage.open()
        for warning in opened.warnings:
            self.report(ErrorReport(warning, topic="disk"))
        try:
            tables = {name: kind.transitions for name, kind in self.kinds.items()}
            self._session = Session(self.storage, opened, self.clock.now, tables,
                                    disk_full_patience=self.settings.disk_full_patience)
            self._session.idle.keep = self.settings.keep_idle_context
            await recovery.charge_interrupted(self._session)
        except BaseException:
            await self.storage.close()
            raise
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        progress = ProgressFlusher()
        self._rt = Runtime(self._session, model=self.model, tools=self.tools, settings=self.settings,
                           clock=self.clock, report=self.report, progress=progress, deps=self.deps,
                           instructions=self.instructions)
        self._scheduler = Scheduler(self._rt, self.kinds, self.report, self._tg, self._break)
        self._tg.start_soon(self._scheduler.serve)  # on trio, the nursery of its runners
        self._tg.start_soon(ownership.watch, self.storage, self._break)  # a lost lease breaks the harness
        self._tg.start_soon(progress.run)  # streams' progress flushes, on one schedule
        self._state = HarnessState.OPEN
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._tg is not None
        try:
            if self._state in _ACCEPTING:
                with anyio.CancelScope(shield=True):
                    await self.close()
        finally:
            self._tg.cancel_scope.cancel()
            try:
                suppressed = await self._tg.__aexit__(*exc)
            except BaseExceptionGroup as group:
                # The runners let nothing but a BaseException out (a KeyboardInterrupt or a
                # SystemExit raised by a tool or a model: the harness was closed cleanly above),
                # so a group of one error is unwrapped: the caller gets what was raised.
                # A cancellation next to it (the scope around the harness expired during close)
                # is left out: it is delivered again at the caller's next checkpoint.
                leaves = list(exception_leaves(group))
                cancelled = anyio.get_cancelled_exc_class()
                errors = [leaf for leaf in leaves if not isinstance(leaf, cancelled)] or leaves
                if len(errors) == 1:
                    if errors[0] is exc[1]:
                        return False
                    raise errors[0] from None
                raise
        return suppressed

    async def resume(self) -> None:
        """Start running every task that is not terminal. Idempotent. Raises the store's error
        once the harness stopped for it (a full disk that lasted, a lost file): every host call
        that starts or waits for work resumes first."""
        self._check_open()
        self._raise_if_broken()
        if self._state is HarnessState.RESUMED:
            return
        self._state = HarnessState.RESUMED
        assert self._scheduler is not None and self._tg is not None
        self._scheduler.start()
        self._tg.start_soon(self._watch_inbox)
        if self.settings.check_integrity:
            self._tg.start_soon(self._check_in_background)

    async def close(self) -> None:
        """Clean close: cancel running invocations, write their tasks back as their kinds say
        (no charge), release the file. Idempotent. A harness its store stopped (`DiskFull`,
        `LockLost`) writes nothing back: its running tasks are charged as cut off at the next open."""
        if self._state not in _ACCEPTING:
            return
        self._state = HarnessState.CLOSING
        session, scheduler = self.session, self._scheduler
        assert scheduler is not None
        with anyio.CancelScope(shield=True):
            session.stop_retrying()  # a commit being tried again (a full disk) gives up now
            self._inbox_scope.cancel()
            await scheduler.stop()
            change = session.change()
            # Stopped by its store: nothing written back, so work it dropped (a stream whose request
            # was sent) is charged as cut off at the next open, never sent again uncharged.
            for task in list(session.tasks.values()) if self._broken is None else ():
                kind = self.kinds.get(task.kind)
                if isinstance(task.state, Running) and kind is not None:
                    change.put_task(kind.written_back(task), progress=False)
            try:
                if change:
                    await session.commit(change)
            finally:
                session.close_followers()
                await self.storage.close()
                self._state = HarnessState.CLOSED
            # A full disk, which every wait has met, lets close return (the tasks stay as the file
            # holds them); a store lost for good (a lost lock) is raised, as its waits did.
            if self._broken is not None and not isinstance(self._broken, DiskFull):
                raise self._broken

    async def _watch_inbox(self) -> None:
        """Inputs and decisions other processes put in the store's inbox (`durable.remote`,
        `durable console`); cancelled as `close` begins (its polls are timers no close waits on)."""
        with self._inbox_scope:
            await inbox.watch(self.storage, self._place_remote, self.report, self._decide_remote)

    async def _check_in_background(self) -> None:
        # A second after resuming: the first turn of a freshly opened session does not share
        # the machine with a read of the whole file (measured: 16-46 ms of a 6.8 MB file).
        await anyio.sleep(_CHECK_DELAY)
        if self._state in _ACCEPTING:  # not abandoned (a crash test) or closed before it started
            await self.check_integrity()

    async def check_integrity(self) -> list[str]:
        """Check the store for damage (SQLite's `integrity_check`, indexes included, in slices
        beside the commits, never holding them up) and return the problems; once per harness
        (later calls wait for that check).
        Damage is reported (`ErrorReport`, logged on `durable.storage`) rather than silently
        used: runs that meet it end `unanswered{storage_error}`, others go on. A resumed harness
        starts this by itself a second after it resumed, unless `settings.check_integrity` is
        False; a close cancels it."""
        self._check_open()
        return await self._integrity.run(self.storage, self.report)

    def _break(self, err: StorageError) -> None:
        """The store lost its file, or refuses for good: stop every runner and end every wait
        with `err`."""
        if self._broken is not None:
            return
        self._broken = err
        self.session.stop_retrying()
        if self._scheduler is not None:
            self._scheduler.cancel_all()
        self.session.release_waiters()

    def _raise_if_broken(self) -> None:
        if self._broken is not None:
            raise self._broken

    def abandon(self) -> None:
        """Stop everything without writing anything, as a crash would: the file keeps what was
        committed, running tasks stay `running`. For crash tests (`durable.testing`); the store
        must still be released by the caller."""
        self._state = HarnessState.CRASHED
        if self._session is not None:
            self._session.close_followers()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    async def _place_remote(self, sub: Submission) -> None:
        """Place an input from the store's inbox (durable.engine.inbox): queued behind an active run."""
        await self.conversation(sub.conversation_id)._place(sub, "queue", {}, remote=True)

    async def _decide_remote(self, decision: InboxDecision) -> None:
        """Apply a decision from the store's inbox (durable.remote) as `approve` / `deny` would, its
        row consumed by the deciding commit; a refused one is reported and its row dropped."""
        try:
            await self.runs.decide(self.rt, decision.call_id, approve=decision.approve, arguments=decision.arguments,
                                   reason=decision.reason, inbox=decision.id)
        except ApprovalRejected as exc:
            self.report(ErrorReport(f"A decision from the inbox of {self.storage.location} was not applied: {exc}",
                                    raw=exc, topic="task"))
            change = self.session.change()
            change.consume_inbox(decision.id)
            await self.session.commit(change)

    def _check_open(self) -> None:
        if self._state not in _ACCEPTING:
            raise HarnessClosed(
                f"The harness on {self.storage.location} is {self._state.value}; it accepts no more work")

    # ------------------------------------------------------------------ host API

    async def prune(self, *, ended_before: float | None = None, keep_last: int = 0) -> retention.PruneReport:
        """Delete ended conversations, but the `keep_last` newest (docs/spec.md §6; `retention`)."""
        return await retention.prune(self, ended_before=ended_before, keep_last=keep_last)

    def conversation(self, conversation_id: str = "root", *,
                     model_settings: ModelSettings | None = None) -> Conversation:
        """The conversation `conversation_id` (created by its first input). Raises `InvalidInput`
        for an id that is not a non-empty `str`, or that holds a NUL or a lone surrogate (it could
        not be stored as UTF-8 text): refused here, before anything is written. `model_settings`
        are merged over the harness's for every input submitted through this handle (and stored
        with each); one the model cannot honour is `UnsupportedModelSetting`, raised here."""
        check_conversation_id(conversation_id)
        return Conversation(self, conversation_id, model_settings)

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
        self._raise_if_broken()
        task = await self.storage.get_task(task_id)
        if task is None:
            raise UnknownTask(f"Task {task_id} does not exist in {self.storage.location}")
        return task

    async def tasks(self, *, kind: str | None = None, state: str | None = None,
                    conversation_id: str | None = None) -> list[Task]:
        """Tasks by kind and/or state tag ("pending", "running", "sleeping", "waiting", "terminal")."""
        self._check_open()
        return await self.storage.find_tasks(kind=kind, state=state, conversation_id=conversation_id)

    def usage(self) -> UsageTotals:
        """What every conversation of this session used so far, as committed (the sum of their
        own usage, sub-agents' conversations included, each once; costed with `settings.prices`):
        read from the live documents the harness holds, never from history."""
        self._check_open()
        return in_force(self.settings.prices).priced(sum((c.committed_live.usage for c in self.session.convs.values()),
                                                         EMPTY_USAGE))

    def conversations(self) -> list[ConversationInfo]:
        """Every conversation of this session, by id, as committed: see `durable.engine.conversation.listed`."""
        self._check_open()
        return listed(self)

    def wake(self) -> Wake:
        """Whether work is active, and when the next durable timer fires."""
        active = False
        deadlines = []
        for task in self.session.tasks.values():
            if isinstance(task.state, (Pending, Running)):
                active = True
            elif isinstance(task.state, Sleeping):
                deadlines.append(task.state.until)
            elif isinstance(task.state, Waiting) and (kind := self.kinds.get(task.kind)) is not None:
                deadline = kind.deadline(task)
                if deadline is not None:
                    deadlines.append(deadline)
        return Wake(active, min(deadlines) if deadlines else None)

    def set_tools(self, tools: Iterable[Tool]) -> None:
        """Offer `tools` to the model from its next request on (an MCP server's tool list changed,
        say). A call already made keeps its committed intent and replay policy; a later call of a
        tool no longer offered gets an "Unknown tool" error result. Raises `ToolDefinitionError`
        for a name given twice, changing nothing."""
        self.tools.replace(tools)

    async def start_task(self, kind: str, input: TaskInput, *, conversation_id: str = "root") -> int:
        """Start a task of `kind` (one of this harness's kinds) with `input`, at the position its
        kind's `initial` gives; committed (durable) when this returns. Returns its id: wait for
        it with `wait_for_task`. Raises `UnknownTaskKind` for a kind the harness does not have,
        and `IllegalTransition` when the kind does not start a task where `initial` says."""
        self._check_open()
        check_conversation_id(conversation_id)
        found = self.kinds.get(kind)
        if found is None:
            raise UnknownTaskKind(f"The harness on {self.storage.location} has no task kind {kind!r} "
                                  f"(it has {', '.join(self.kinds)})")
        await self.resume()
        state, checkpoint = found.initial(input)
        change = self.rt.change()
        task = self.rt.new_task(change, conversation_id=conversation_id, kind=kind, input=input,
                                checkpoint=checkpoint, state=state)
        await self.rt.commit(change, retry=False)
        return task.id

    async def submit_tool_result(self, call_id: str, content: str | Content | Sequence[str | Content], *,
                                 is_error: bool = False) -> None:
        """Answer a client tool call with text, or a list of strings, `durable.Image`s and
        `durable.File`s (`AttachmentTooLarge` past `settings.max_attachment_bytes`, before anything
        is committed). Raises `ToolResultRejected` for an unknown call, a call that is not a client
        tool's, or one already answered."""
        self._check_open()
        made = content_parts(content, f"the result of tool call {call_id}", self.settings.max_attachment_bytes)
        await self.resume()
        await self.runs.submit_client_result(self.rt, call_id, made, is_error)

    async def approve(self, call_id: str, arguments: Mapping[str, Any] | None = None) -> None:
        """Approve the tool call `call_id`, which waits for a person's decision (`live.approvals`;
        a tool defined with `approval=`): committed before the tool runs, then it runs, with
        `arguments` (a JSON object: edited arguments, validated against the tool's schema) or,
        None, with the model's. Raises `ApprovalRejected`, changing nothing, for invalid edited
        arguments, or a call that waits for no decision: unknown, not asking, already decided or
        ended (an abort or an interrupt answers a waiting call as aborted)."""
        self._check_open()
        await self.resume()
        await self.runs.decide(self.rt, call_id, approve=True, arguments=arguments)

    async def deny(self, call_id: str, reason: str = "") -> None:
        """Deny the tool call `call_id`, which waits for a person's decision: it is not run, and
        the model reads "The user denied tool T: reason" (diagnostic `denied`); the run goes
        on. Committed when this returns. Raises `ApprovalRejected` as `approve` does."""
        self._check_open()
        await self.resume()
        await self.runs.decide(self.rt, call_id, approve=False, reason=reason)


__all__ = ["Harness", "HarnessState", "Wake"]
