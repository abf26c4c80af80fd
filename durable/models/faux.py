"""A scripted model for tests, the demo and users' own crash tests (no network, no key):
`FauxModel(script)` answers each request (a `stream` call, or a deferred `submit`) with the next
step of its script:

- `reply("text", reasoning="...")`, `reply("", tool_calls=[call("lookup", {"q": 1})])`: a
  streamed answer, its reasoning first (ending as one signed block: `faux_reasoning`);
- `error("Rate limited", kind="rate_limit", status_code=429, retry_after=2)`: a provider error,
  raised after `partial` text was streamed (if any);
- `error_stop("message")`: a final message with stop reason "error";
- `hang("partial text", reasoning="...")`: streams them, then never answers (until cancelled);
- any callable `f(request) -> step`: decides from the request it sees.

Reasoning, then text, is streamed in tokens of `token_size` characters at `tokens_per_second`
(None: at once), reasoning counted as `reasoning_tokens`. In deferred mode a step is bound to a
job at `submit`; `fetch` returns `StillRunning(poll_after)` until the job was fetched `polls`
times, then its final message (`hang`: `fetch` hangs; `error`: it raises). Of `ModelSettings`
it honours `stop` and `max_tokens` (ending `length`); `refuses=("seed", ...)`: settings it
cannot honour. It records the requests (images' bytes in `attachments`; the newest
`keep_requests`, default 100; `calls` counts them all; None keeps every one), stream calls and
jobs; `wait_for_requests` waits for the n-th request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import aclosing
from typing import Any, Literal

import anyio
import attrs

from .._frozen import frozen
from ..errors import UnsupportedModelSetting
from ..records import ModelStopReason, Reasoning, ToolCall, Usage
from ..records.model_settings import NO_SETTINGS, ModelSettings
from .protocol import (
    DeferredHandle,
    ErrorKind,
    FetchResult,
    FinalMessage,
    ModelError,
    ModelRequest,
    ReasoningDelta,
    StillRunning,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    UsageEvent,
    settings_of,
)


@frozen
class Reply:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: ModelStopReason | Literal[""] = ""  # "" = derived: tool_use when there are calls, else stop
    usage: Usage | None = None
    reasoning: str = ""


@frozen
class Error:
    message: str
    kind: ErrorKind = "server"
    status_code: int | None = None
    retry_after: float | None = None
    partial: str = ""


@frozen
class ErrorStop:
    message: str
    partial: str = ""


@frozen
class Hang:
    partial: str = ""
    reasoning: str = ""


Step = Reply | Error | ErrorStop | Hang | Callable[[ModelRequest], Any]

_call_counter = iter(range(1, 1 << 62))


def reply(
    text: str = "", *, tool_calls: Sequence[ToolCall] = (), stop_reason: ModelStopReason | Literal[""] = "",
    usage: Usage | None = None, reasoning: str = ""
) -> Reply:
    return Reply(text, tuple(tool_calls), stop_reason, usage, reasoning)


def call(name: str, arguments: Any = None, *, id: str | None = None, raw: str | None = None) -> ToolCall:
    """A tool call; `raw` gives the exact argument text (for invalid JSON)."""
    text = raw if raw is not None else json.dumps(arguments if arguments is not None else {})
    return ToolCall(id or f"call_{next(_call_counter)}", name, text)


def error(message: str, *, kind: ErrorKind = "server", status_code: int | None = None,
          retry_after: float | None = None, partial: str = "") -> Error:
    return Error(message, kind, status_code, retry_after, partial)


def error_stop(message: str, *, partial: str = "") -> ErrorStop:
    return ErrorStop(message, partial)


def hang(partial: str = "", *, reasoning: str = "") -> Hang:
    return Hang(partial, reasoning)


def faux_reasoning(text: str) -> tuple[Reasoning, ...]:
    """The reasoning blocks a faux answer with reasoning `text` ends with: one block of format
    "faux", signed with a digest of its text (as a provider signs its thinking)."""
    if not text:
        return ()
    return (Reasoning(text, "faux", signature="faux-" + hashlib.sha256(text.encode()).hexdigest()[:16]),)


@frozen
class _Job:
    step: Any
    fetches_needed: int
    settings: ModelSettings = NO_SETTINGS


class FauxModel:
    """See the module docstring. `deferred=True` makes the harness use submit/fetch/cancel."""

    def __init__(
        self,
        script: Sequence[Step] = (),
        *,
        tokens_per_second: float | None = None,
        token_size: int = 4,
        deferred: bool = False,
        poll_after: float = 1.0,
        polls: int = 1,
        name: str = "faux",
        context_window: int = 200_000,
        keep_requests: int | None = 100,
        refuses: Sequence[str] = (),
    ) -> None:
        self.refuses = tuple(refuses)
        self.script: list[Step] = list(script)
        self.tokens_per_second = tokens_per_second
        self.token_size = max(1, token_size)
        self.deferred = deferred
        self.poll_after = poll_after
        self.polls = max(1, polls)
        self.name = name
        self.context_window = context_window
        # The newest `keep_requests` requests (None: every one, when asked to record): a long run
        # must not keep every context it ever sent (5,000 turns held 238 MB); `calls` counts them all.
        self.requests: list[ModelRequest] = []
        self.keep_requests = keep_requests
        self.request_count = 0
        self.stream_calls = 0
        self.delivered = 0  # text chunks streamed, over all requests
        self.submitted: list[str] = []
        self.fetches: list[str] = []
        self.cancelled: list[str] = []
        self._jobs: dict[str, _Job] = {}
        self._fetch_counts: dict[str, int] = {}
        self._next = 0
        self._request_event: anyio.Event | None = None  # made by a waiter (`wait_until`), set by a record

    def check_settings(self, settings: ModelSettings, tools: tuple[ToolSpec, ...], structured: bool = False) -> None:
        """Raise `UnsupportedModelSetting` for a set field this model was told it `refuses`."""
        for option in settings.set_fields():
            if option in self.refuses:
                raise UnsupportedModelSetting(self.name, option, "the faux model was made to refuse it")

    # ------------------------------------------------------------------ scripting

    def add(self, *steps: Step) -> None:
        self.script.extend(steps)

    @property
    def calls(self) -> int:
        return self.request_count

    async def wait_for_requests(self, n: int) -> ModelRequest:
        """Wait until at least `n` requests were made; return the n-th (it must still be kept)."""
        await self.wait_until(lambda: self.request_count >= n)
        index = n - 1 - (self.request_count - len(self.requests))
        if index < 0:
            raise IndexError(f"request {n} is no longer kept (keep_requests={self.keep_requests})")
        return self.requests[index]

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        """Wait until `predicate()` holds; it is checked after every request, submit, fetch and
        cancel this model records."""
        while not predicate():
            if self._request_event is None:
                self._request_event = anyio.Event()
            await self._request_event.wait()

    def _recorded(self) -> None:
        event, self._request_event = self._request_event, None
        if event is not None:
            event.set()

    def adopt_job(self, handle: str, step: Step, *, polls: int = 1) -> None:
        """Know a job submitted by an earlier process (the provider outlives the host)."""
        self._jobs[handle] = _Job(step, polls)

    def _take(self, request: ModelRequest) -> Any:
        self.request_count += 1
        self.requests.append(request)
        if self.keep_requests is not None and len(self.requests) > self.keep_requests:
            del self.requests[: len(self.requests) - self.keep_requests]
        self._recorded()
        if self._next >= len(self.script):
            raise ModelError(
                f"The faux model's script has no step left for request {self.request_count}",
                kind="invalid_request", provider="faux",
            )
        step = self.script[self._next]
        self._next += 1
        while callable(step) and not isinstance(step, (Reply, Error, ErrorStop, Hang)):
            step = step(request)
        return step

    # ------------------------------------------------------------------ streaming

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.stream_calls += 1
        step = self._take(request)
        # Closed with the stream: an async generator left to the garbage collector is finalized
        # through the event loop (on trio a thread-safe wake-up per stream).
        async with aclosing(self._play(step, settings_of(request))) as events:
            async for event in events:
                yield event

    async def _play(self, step: Any, settings: ModelSettings = NO_SETTINGS) -> AsyncGenerator[StreamEvent, None]:
        text = step.text if isinstance(step, Reply) else step.partial
        if isinstance(step, Reply):
            step = self._honour(step, settings)
            text = step.text
        thought = getattr(step, "reasoning", "")
        events: list[StreamEvent] = [*map(ReasoningDelta, self._chunks(thought)), *map(TextDelta, self._chunks(text))]
        for event in events:
            if self.tokens_per_second:
                await anyio.sleep(1 / self.tokens_per_second)
            else:
                await anyio.lowlevel.checkpoint()
            self.delivered += 1
            self._recorded()
            yield event
        if isinstance(step, Hang):
            await anyio.sleep_forever()
        if isinstance(step, Error):
            raise ModelError(step.message, kind=step.kind, provider="faux",
                             status_code=step.status_code, retry_after=step.retry_after)
        usage = self._usage(step, text)
        if isinstance(step, ErrorStop):
            yield UsageEvent(usage)
            yield FinalMessage(text, "error", usage=usage, error=step.message)
            return
        for tc in step.tool_calls:
            yield ToolCallEvent(tc)
        yield UsageEvent(usage)
        stop: ModelStopReason = step.stop_reason or ("tool_use" if step.tool_calls else "stop")
        yield FinalMessage(text, stop, step.tool_calls, usage, reasoning=faux_reasoning(thought))

    def _honour(self, step: Reply, settings: ModelSettings) -> Reply:
        """The reply as `settings` let it be: cut before its first stop sequence, then after
        `max_tokens` tokens (ending `length`, without its tool calls)."""
        text = step.text
        for stop in settings.stop or ():
            if stop in text:
                text = text[:text.index(stop)]
        if text != step.text:
            step = attrs.evolve(step, text=text)
        limit = settings.max_tokens
        if limit is not None and len(self._chunks(text)) > limit:
            step = attrs.evolve(step, text=text[:limit * self.token_size], tool_calls=(), stop_reason="length")
        return step

    def _chunks(self, text: str) -> list[str]:
        return [text[i:i + self.token_size] for i in range(0, len(text), self.token_size)]

    def _usage(self, step: Any, text: str) -> Usage:
        if isinstance(step, Reply) and step.usage is not None:
            return step.usage
        thought = len(self._chunks(getattr(step, "reasoning", "")))
        out = len(self._chunks(text)) + sum(len(tc.arguments) // 4 + 1 for tc in getattr(step, "tool_calls", ()))
        return Usage(input_tokens=10, output_tokens=out + thought, reasoning_tokens=thought)

    # ------------------------------------------------------------------ deferred

    async def submit(self, request: ModelRequest) -> DeferredHandle:
        step = self._take(request)
        handle = f"faux-job-{len(self.submitted) + 1}"
        self.submitted.append(handle)
        self._jobs[handle] = _Job(step, self.polls, settings_of(request))
        self._recorded()
        await anyio.lowlevel.checkpoint()
        return DeferredHandle(handle, self.poll_after)

    async def fetch(self, handle: str) -> FetchResult:
        self.fetches.append(handle)
        self._recorded()
        job = self._jobs.get(handle)
        if job is None:
            raise ModelError(f"No faux job {handle}", kind="invalid_request", provider="faux", status_code=404)
        if handle in self.cancelled:
            raise ModelError(f"Faux job {handle} was cancelled", kind="invalid_request", provider="faux")
        count = self._fetch_counts[handle] = self._fetch_counts.get(handle, 0) + 1
        if isinstance(job.step, Hang):
            await anyio.sleep_forever()
        if count < job.fetches_needed:
            await anyio.lowlevel.checkpoint()
            return StillRunning(self.poll_after)
        final: FinalMessage | None = None
        async for event in self._play(job.step, job.settings):
            if isinstance(event, FinalMessage):
                final = event
        assert final is not None
        return final

    async def cancel(self, handle: str) -> None:
        self.cancelled.append(handle)
        self._recorded()
        await anyio.lowlevel.checkpoint()

    async def find(self, key: str) -> str | None:
        """Faux jobs cannot be looked up by key (as at OpenAI and Anthropic): always None. A
        `durable.testing.LedgerModel` finds them."""
        await anyio.lowlevel.checkpoint()
        return None


class HangingCancel(FauxModel):
    """A faux model whose `cancel` never returns (for abort-handler crash tests)."""

    async def cancel(self, handle: str) -> None:
        self.cancelled.append(handle)
        self._recorded()
        await anyio.sleep_forever()


__all__ = [
    "Error",
    "ErrorStop",
    "FauxModel",
    "Hang",
    "HangingCancel",
    "Reply",
    "call",
    "error",
    "error_stop",
    "faux_reasoning",
    "hang",
    "reply",
]

