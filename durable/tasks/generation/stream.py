"""One streamed attempt of a generation: the request sent, the answer read event by event, its
partial (text and reasoning) committed coalesced into the live document (never a checkpoint:
streaming does not clear `restarts`), and what it came to: the final message (`finish`), a context overflow (`overflow`,
which compacts; None without compaction) or a failed attempt (`attempt_failed`).

Every event is checked at the model boundary (`check_event`) before anything of it is committed;
a silent stream past `stream.stream_silence`, a builtin `TimeoutError` or `ConnectionError`
become retryable `ModelError`s. No request is sent on behalf of an owner that may have lost its
lease (`rt.before_external_work`).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING

from ..._frozen import evolve
from ...models.protocol import (
    FinalMessage,
    ModelError,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
    check_event,
)
from ...records import GenerationLive, PartialMessage, Task, ToolCall, Usage
from . import members
from .attempts import attempt_failed, failure_of
from .records import Request

if TYPE_CHECKING:
    from ...engine.runtime import Runtime

Finish = Callable[["Runtime", Task, FinalMessage, int], Awaitable[Task | None]]
Overflow = Callable[["Runtime", Task, ModelError], Awaitable[Task | None]]


async def answer(rt: Runtime, task: Task, request: ModelRequest, finish: Finish,
                 overflow: Overflow | None) -> Task | None:
    """Send `request` for generation `task` (in `request`, committed) and stream its answer."""
    phase = task.checkpoint
    assert isinstance(phase, Request)
    cid = task.conversation_id
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    usage: Usage | None = None

    async def flush() -> None:
        change = rt.change(barrier=False)  # a partial answer: nothing outside waits for it
        gen = change.live(cid).generation or GenerationLive(phase.attempt)
        message = PartialMessage("".join(text), tuple(calls), usage or gen.message.usage, "".join(reasoning))
        change.edit_live(cid, generation=evolve(gen, message=message))
        await rt.commit(change)

    silence = rt.settings.stream.stream_silence
    model = members.current(rt, task)
    provider = members.provider(rt, task)
    final: FinalMessage | None = None
    failure: ModelError | None = None
    # No request is sent on behalf of an owner that may have lost its lease.
    await rt.before_external_work(f"The model request of task {task.id}")
    # Leaving the progress stream waits for a flush in flight; the final commit below carries the rest.
    async with rt.progress.stream(rt.settings.progress.persist_within, flush) as progress:

        async def take(event: object) -> bool:
            """Keep one event of the stream; True when it is the last (the final message)."""
            nonlocal usage, final
            event = check_event(event, provider)  # junk fails the attempt, never a commit
            if isinstance(event, TextDelta):
                text.append(event.text)
                await progress.update()
            elif isinstance(event, ReasoningDelta):
                reasoning.append(event.text)
                await progress.update()
            elif isinstance(event, ToolCallEvent):
                calls.append(event.call)
            elif isinstance(event, UsageEvent):
                usage = event.usage
            else:
                final = event
                return True
            return False

        try:
            async with aclosing(model.stream(request)) as stream:  # type: ignore[type-var]  # an AsyncIterator with aclose
                done = False
                while not done:
                    # One silence scope for the stream, not one per event: its deadline is set
                    # while an event is awaited and lifted while one is kept, so nothing else in
                    # it can be cancelled. Renewed only when it fired as an event came.
                    late: object = None
                    with rt.move_on_after(silence if silence else math.inf) as quiet:
                        while True:
                            if silence:
                                quiet.deadline = rt.loop_time() + silence
                            try:
                                event = await stream.__anext__()
                            except StopAsyncIteration:
                                done = True
                                break
                            except TimeoutError as exc:  # the model's own (a read timeout): not the silence above
                                raise ModelError(f"The model request timed out ({exc or type(exc).__name__})",
                                                 kind="timeout", provider=provider) from None
                            except ConnectionError as exc:
                                raise ModelError(f"The connection to the model failed: {exc}", kind="connection",
                                                 provider=provider) from None
                            if silence:
                                if isinstance(event, (TextDelta, ReasoningDelta)):
                                    # Keeping it may wait (a progress flush): lifted, nothing of
                                    # that is cancelled. Any other event is kept without a
                                    # checkpoint, so nothing can cancel it: the deadline stays
                                    # until the next event is awaited.
                                    quiet.deadline = math.inf
                                if quiet.cancel_called:  # it fired as the event came: kept outside it
                                    late = event
                                    break
                            if await take(event):
                                done = True
                                break
                    if quiet.cancelled_caught:
                        raise ModelError(f"The model stream was silent for {silence:g} s", kind="timeout",
                                         provider=provider)
                    if late is not None and await take(late):
                        done = True
        except ModelError as exc:
            failure = exc
    if failure is None and final is None:
        failure = ModelError("The model stream ended without a final message", kind="connection",
                             provider=provider)
    if failure is not None:
        if failure.kind == "context_overflow" and overflow is not None:
            return await overflow(rt, task, failure)
        partial = PartialMessage("".join(text), (), usage or Usage(), "".join(reasoning))
        return await attempt_failed(rt, task, failure_of(failure), final_reason="model_error",
                                    retry_after=failure.retry_after, partial=partial, raw=failure,
                                    retryable=failure.retryable)
    assert final is not None
    return await finish(rt, task, final, phase.attempt)


__all__ = ["answer"]
