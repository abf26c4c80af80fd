"""The harness for programs that are not async: the same harness, run on an event loop in a
background thread, behind blocking calls.

    import durable.sync

    with durable.sync.open_harness("agent.sqlite", model=model) as h:
        sub = h.root.submit("Hello")      # returns once the input is committed to the file
        print(sub.answer())               # blocks until the run settles

Entering the `with` block starts one event-loop thread (trio by default, `backend="asyncio"`
selectable) through anyio's blocking portal and opens the harness on it; every call below runs
the async call of the same name there and blocks until it returns, so the semantics are those of
`durable.open_harness`: `submit` returns after the commit, `wait` blocks until the submission
settles (also one made by an earlier process), `follow` is an iterator of committed live
documents. Leaving the block, also by an exception, is a clean close; the thread has ended when
`__exit__` returns. Exceptions reach the caller with their own classes.

Tools stay `async` functions (they run on the harness's event loop, as does a `report`
callback). One harness may be used from several threads; each call blocks only its caller.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from contextlib import ExitStack
from types import TracebackType
from typing import Any, Literal, TypeVar, overload

from anyio.from_thread import BlockingPortal, start_blocking_portal

from . import _open
from .content import Content
from .engine import conversation as _conversation, harness as _async
from .engine.clock import Clock
from .engine.harness import HarnessState, Wake
from .engine.history import Format
from .engine.instructions import Instruction
from .engine.reports import ReportCallback
from .engine.stream_events import SubmissionEvent
from .errors import HarnessClosed
from .models.protocol import Model
from .records import ConversationInfo, Live, ModelSettings, StoredEntry, Submission, SubmissionStatus, Task, UsageTotals
from .settings import Settings, WhenBusy
from .storage.protocol import Storage
from .storage.sqlite.store import Synchronous
from .tools import Tool

T = TypeVar("T")
Backend = Literal["trio", "asyncio"]

_END = object()  # what `follow`'s step returns when the async stream ended


def open_harness(
    storage: Storage | str | os.PathLike[str],
    *,
    model: Model,
    tools: Iterable[Tool] = (),
    settings: Settings | None = None,
    clock: Clock | None = None,
    report: ReportCallback | None = None,
    synchronous: Synchronous = "EXTERNAL",
    backend: Backend = "trio",
    deps: Any = None,
    instructions: Iterable[Instruction] = (),
    output: Any = None,
) -> Harness:
    """A blocking harness on `storage`: use as `with`. The arguments are those of
    `durable.open_harness`, and `backend` chooses the event loop the harness runs on. Opening
    (at `with`) raises what opening the async harness raises (`SessionLocked`, `SchemaTooNew`,
    `NotASession`...). Instruction sections stay async functions (they run on the event loop)."""

    def make() -> _async.Harness:
        return _open.open_harness(storage, model=model, tools=tools, settings=settings, clock=clock, report=report,
                                  synchronous=synchronous, deps=deps, instructions=instructions, output=output)

    return Harness(make, backend)


class Harness:
    """A harness run on a background event-loop thread (see the module docstring). Make one with
    `durable.sync.open_harness`."""

    def __init__(self, make: Callable[[], _async.Harness], backend: Backend = "trio") -> None:
        self._make = make
        self._backend = backend
        self._stack: ExitStack | None = None
        self._portal: BlockingPortal | None = None
        self._harness: _async.Harness | None = None

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> Harness:
        if self._harness is not None:
            raise RuntimeError("A durable.sync harness can be entered only once")
        with ExitStack() as stack:  # when opening fails, the event loop stops and its thread ends here
            portal = stack.enter_context(start_blocking_portal(self._backend))
            # After the harness closed, calls still blocked in other threads (a `wait()`) are
            # cancelled: they raise `HarnessClosed` instead of holding the thread open forever.
            stack.callback(portal.call, portal.stop, True)
            harness = portal.call(self._make)
            stack.enter_context(portal.wrap_async_context_manager(harness))
            self._stack = stack.pop_all()
        self._portal, self._harness = portal, harness
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool | None:
        return self._finish(exc_type, exc, tb)

    def close(self) -> None:
        """Clean close (what leaving the `with` block does): the harness closes, the event-loop
        thread ends. Idempotent."""
        self._finish(None, None, None)

    def _finish(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                tb: TracebackType | None) -> bool | None:
        stack, self._stack = self._stack, None
        self._portal = None
        if stack is None:
            return None
        return stack.__exit__(exc_type, exc, tb)

    # ------------------------------------------------------------------ plumbing

    @property
    def harness(self) -> _async.Harness:
        """The async harness behind this one (its coroutines must run on `portal`)."""
        if self._harness is None:
            raise HarnessClosed("A durable.sync harness is used before its `with` block opened it")
        return self._harness

    @property
    def portal(self) -> BlockingPortal:
        """The blocking portal of the event-loop thread the harness runs on."""
        if self._portal is None:
            location = self._harness.storage.location if self._harness is not None else "its session file"
            state = "closed" if self._harness is not None else "not open yet"
            raise HarnessClosed(f"The harness on {location} is {state}; it accepts no more work")
        return self._portal

    def _call(self, func: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run the coroutine function `func` on the event-loop thread; block until it returns."""
        result: T = self._through_portal(func, *args)
        return result

    def _run(self, func: Callable[..., T], *args: Any) -> T:
        """Run the plain function `func` on the event-loop thread (where the harness's state lives)."""
        result: T = self._through_portal(func, *args)
        return result

    def _through_portal(self, func: Callable[..., Any], *args: Any) -> Any:
        portal = self.portal
        try:
            return portal.call(func, *args)
        except concurrent.futures.CancelledError:
            pass  # the harness closed while this call waited (another thread left the block)
        except RuntimeError:
            if self._portal is portal:
                raise  # a RuntimeError of the call itself
        raise HarnessClosed(f"The harness on {self.harness.storage.location} closed while this call was waiting")

    # ------------------------------------------------------------------ host API

    @property
    def state(self) -> HarnessState:
        return self.harness.state

    def conversation(self, conversation_id: str = "root", *,
                     model_settings: ModelSettings | None = None) -> Conversation:
        return Conversation(self, self.harness.conversation(conversation_id, model_settings=model_settings))

    @property
    def root(self) -> Conversation:
        return self.conversation("root")

    def resume(self) -> None:
        """Start running every task that is not terminal. Idempotent."""
        self._call(self.harness.resume)

    def task(self, task_id: int) -> Task | None:
        """The task as committed."""
        return self._call(self.harness.task, task_id)

    def wait_for_task(self, task_id: int) -> Task:
        """Block until the task is terminal (resumes the harness); return its record."""
        return self._call(self.harness.wait_for_task, task_id)

    def tasks(self, *, kind: str | None = None, state: str | None = None,
              conversation_id: str | None = None) -> list[Task]:
        """Tasks by kind and/or state tag ("pending", "running", "sleeping", "waiting", "terminal")."""

        async def find() -> list[Task]:
            return await self.harness.tasks(kind=kind, state=state, conversation_id=conversation_id)

        return self._call(find)

    def wake(self) -> Wake:
        """Whether work is active, and when the next durable timer fires."""
        return self._run(self.harness.wake)

    def usage(self) -> UsageTotals:
        """What every conversation of this session used so far (see `durable.Harness.usage`)."""
        return self._run(self.harness.usage)

    def conversations(self) -> list[ConversationInfo]:
        """Every conversation of this session, by id, as committed (see `durable.Harness.conversations`)."""
        return self._run(self.harness.conversations)

    def submit_tool_result(self, call_id: str, content: str | Content | Sequence[str | Content], *,
                           is_error: bool = False) -> None:
        """Answer a client tool call, with text or parts (`durable.Harness.submit_tool_result`;
        `ToolResultRejected` for an unknown or answered call)."""

        async def submit() -> None:
            await self.harness.submit_tool_result(call_id, content, is_error=is_error)

        self._call(submit)

    def approve(self, call_id: str, arguments: Mapping[str, Any] | None = None) -> None:
        """Approve a tool call waiting for a decision, with edited `arguments` or the model's
        (`durable.Harness.approve`; `ApprovalRejected` for a call that waits for none or invalid
        arguments, changing nothing)."""

        async def approve() -> None:
            await self.harness.approve(call_id, arguments)

        self._call(approve)

    def deny(self, call_id: str, reason: str = "") -> None:
        """Deny a tool call waiting for a decision; the model reads why (`durable.Harness.deny`)."""

        async def deny() -> None:
            await self.harness.deny(call_id, reason)

        self._call(deny)


class Conversation:
    """A conversation of a `durable.sync` harness; `h.root` is the root conversation."""

    def __init__(self, harness: Harness, conversation: _conversation.Conversation) -> None:
        self._h = harness
        self._conv = conversation
        self.id = conversation.id

    def submit(self, text: str | Content | Sequence[str | Content], *, when_busy: WhenBusy | None = None,
               id: str | None = None, output: Any = None,
               model_settings: ModelSettings | None = None) -> SubmissionHandle:
        """Commit a user input (durable when this returns) and start or queue its run; see
        `durable.Conversation.submit` for parts (`durable.Image`, `durable.File`), `when_busy`,
        `id` (a retry-safe, caller-chosen id), `output` (the type of a structured answer) and
        `model_settings`."""

        async def submit() -> _conversation.SubmissionHandle:
            return await self._conv.submit(text, when_busy=when_busy, id=id, output=output,
                                           model_settings=model_settings)

        return SubmissionHandle(self._h, self._h._call(submit))

    def abort(self) -> None:
        """Abort the active run (if any), keeping its partial answer."""
        self._h._call(self._conv.abort)

    def compact(self) -> int:
        """Start a compaction of this conversation; returns its task id."""
        return self._h._call(self._conv.compact)

    def archive(self) -> None:
        """Archive the conversation (see `durable.Conversation.archive`)."""
        self._h._call(self._conv.archive)

    def unarchive(self) -> None:
        """Let an archived conversation take input again."""
        self._h._call(self._conv.unarchive)

    def fork(self, new_id: str, at_seq: int | None = None) -> Conversation:
        """A new conversation with this one's history up to `at_seq` (see `durable.Conversation.fork`)."""
        return Conversation(self._h, self._h._call(self._conv.fork, new_id, at_seq))

    def seed(self, messages: Any, *, format: Format | None = None) -> int:
        """Import a history into this idle, empty conversation (see `durable.Conversation.seed`)."""

        async def seed() -> int:
            return await self._conv.seed(messages, format=format)

        return self._h._call(seed)

    def live(self) -> Live:
        """The live document as committed."""
        return self._h._run(self._conv.live)

    def usage(self) -> UsageTotals:
        """What this conversation used so far, as committed (see `durable.Conversation.usage`)."""
        return self._h._run(self._conv.usage)

    def follow(self) -> Generator[Live, None, None]:
        """Every committed change of the live document, in commit order, as an iterator that blocks
        for the next one; it ends when the harness closes. Leave it early with `break` (or
        `close()` it)."""
        return _blocking(self._h, self._conv.follow)

    def entries(self, from_seq: int = 1, to_seq: int | None = None) -> list[StoredEntry]:
        """The committed entries from `from_seq` to `to_seq` (inclusive; None: the last)."""
        return self._h._call(self._conv.entries, from_seq, to_seq)

    def submission(self, submission_id: str) -> SubmissionHandle:
        """The submission of that id (made by this process or an earlier one)."""
        return SubmissionHandle(self._h, self._conv.submission(submission_id))


class SubmissionHandle:
    """A submitted input. `wait()` blocks until it settled; `answer()` returns the answer's text."""

    def __init__(self, harness: Harness, handle: _conversation.SubmissionHandle) -> None:
        self._h = harness
        self._handle = handle
        self.id = handle.id

    def get(self) -> Submission:
        """The submission as committed (`UnknownSubmission` when there is none)."""
        return self._h._call(self._handle.get)

    def wait(self) -> SubmissionStatus:
        """Block until the submission settles; returns `Answered(text, seq)` or
        `Unanswered(reason, detail)`."""
        return self._h._call(self._handle.wait)

    def stream(self) -> Generator[SubmissionEvent, None, None]:
        """`durable.SubmissionHandle.stream()` as an iterator that blocks for the next event; it
        ends after the `SettledEvent`, or when the harness closes."""
        return _blocking(self._h, self._handle.stream)

    @overload
    def answer(self) -> str: ...

    @overload
    def answer(self, output: type[T]) -> T: ...

    def answer(self, output: Any = None) -> Any:
        """Block until the submission settles and return the answer's text, or given the type it
        was submitted with, the answer as that type; raises `SubmissionUnanswered` (with `reason`
        and `detail`) when its run ended without one."""
        return self._h._call(self._handle.answer, output)


def _blocking(h: Harness, make: Callable[[], AsyncIterator[T]]) -> Generator[T, None, None]:
    """The async iterator `make()` makes, iterated on the event loop, as a blocking iterator; it
    ends when the harness closes."""
    # A task on the event loop forwards every item into a thread-safe queue, so a close that
    # lands between two reads still lets this thread read what was committed before it.
    items: queue.SimpleQueue[Any] = queue.SimpleQueue()
    stop = threading.Event()

    async def forward() -> None:
        stream = make()
        try:
            async for item in stream:
                items.put(item)
                if stop.is_set():
                    break
        except BaseException as exc:
            items.put(exc)
            raise
        finally:
            items.put(_END)
            await stream.aclose()  # type: ignore[attr-defined]  # an async generator

    future = h.portal.start_task_soon(forward)
    try:
        while True:
            item = items.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                if isinstance(item, HarnessClosed) or not isinstance(item, Exception):
                    return
                raise item
            yield item
    finally:
        stop.set()
        if not future.done():
            future.cancel()


__all__ = ["Backend", "Conversation", "Harness", "SubmissionHandle", "open_harness"]
