"""Driving a harness until nothing is left to do, detected from events, never guessed from time.

`wait_idle(h)` returns when every task of the event loop is blocked (`anyio.wait_all_tasks_blocked`)
and no storage call of the harness is in flight (its storage counts them: a store's writer thread,
a `CrashableStorage`), so the head of the harness no longer moves by itself.

`settle(h, clock)` resumes the harness and then repeats: wait until idle; answer the client tool
calls (`answer`) and decide the calls waiting for approval (`decide`); if a runner is parked on
a `FakeClock` timer, move the clock to the earliest one; if nothing is active (`h.wake()`) but a
durable timer is pending (retry backoff, deferred poll, a deadline), move the clock to it (a
`FakeClock`) or sleep until it (any other clock). It stops when `h.wake()` says nothing is active and no timer
is pending. When work stays active while every task is blocked on something the test does not
control (a real-time sleep, a model that hangs), it polls in small real-time steps, and gives
up after `stuck_after` seconds without any commit: the result then says what is stuck.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from attrs import frozen

from ..engine.clock import FakeClock
from ..errors import ApprovalRejected, ToolResultRejected
from ..records import ApprovalSlot, Pending, Running, ToolCall, Waiting
from ..tasks.tool import Approval, ToolInput
from ..tasks.tool.records import approval_slot
from .crash import CrashableStorage


@frozen
class Settled:
    """How `settle` ended: `quiescent` (nothing active, no timer), or `stuck` with the reason."""

    quiescent: bool
    stuck: str = ""
    steps: int = 0
    polls: int = 0  # real-time polls made while work was active but blocked on something else


def default_answer(call: ToolCall) -> str:
    """The client tool answer `settle` gives by default."""
    return f"Client result of {call.name}"


@frozen
class Approve:
    """A decision `settle` makes on a call waiting for approval: approve it, with `arguments`
    (edited) or, None, the model's."""

    arguments: dict[str, Any] | None = None


@frozen
class Deny:
    """A decision `settle` makes on a call waiting for approval: deny it, for `reason`."""

    reason: str = ""


Decide = Callable[[ApprovalSlot], Approve | Deny | None]
"""How a host decides a call waiting for approval while settling (None: leave it waiting)."""


def default_decision(slot: ApprovalSlot) -> Approve:
    """The decision `settle` makes by default: approve, with the model's arguments."""
    return Approve()


async def wait_idle(harness: Any) -> None:
    """Wait until every task is blocked and no storage call of `harness` is in flight (a task
    waiting for the store's writer thread is blocked too: on a mock clock that autojumps, time
    would run on while the thread writes, and `settle` would find the harness stuck)."""
    storage = harness.storage
    while True:
        await anyio.wait_all_tasks_blocked()
        if isinstance(storage, CrashableStorage) and storage.crashed.is_set():
            return
        if getattr(storage, "in_flight", 0):  # a `CrashableStorage`, or a store's writer thread
            await storage.wait_quiet()
            continue
        return


def _commits(harness: Any) -> int:
    session = getattr(harness, "session", None)
    return getattr(session, "commit_count", 0) if session is not None else 0


async def settle(
    harness: Any,
    clock: Any,
    *,
    answer: Callable[[ToolCall], str | None] | None = default_answer,
    stuck_after: float = 10.0,
    max_steps: int = 100_000,
    decide: Decide | None = default_decision,
) -> Settled:
    """Drive `harness` to quiescence (see the module docstring). Returns how it ended; never
    raises for a stuck harness (the result says so). `answer(call)` gives a client tool's result
    (None: leave it waiting, so it times out at its deadline); `decide(slot)` the decision on a
    call waiting for approval (None: leave it waiting, until its deadline if it has one)."""
    await harness.resume()
    fake = isinstance(clock, FakeClock)
    poll = 0.001
    last_progress = anyio.current_time()
    last_commits = _commits(harness)
    answered: set[str] = set()
    polls = 0
    for step in range(max_steps):
        await wait_idle(harness)
        commits = _commits(harness)
        if commits != last_commits:
            last_commits, last_progress, poll = commits, anyio.current_time(), 0.001
        if answer is not None and await _answer_client_calls(harness, answer, answered):
            continue
        if decide is not None and await _decide_approvals(harness, decide, answered):
            continue
        wake = harness.wake()
        parked = [deadline for _, deadline in list(clock.timers.values())] if fake else []
        if wake.active:
            if parked:
                clock.set(max(clock.now(), min(parked)))
                continue
            if anyio.current_time() - last_progress > stuck_after:
                return Settled(False, _what_is_active(harness, stuck_after), step, polls)
            # Something runs on real time (a coalescing window, a slow tool): poll.
            polls += 1
            await anyio.sleep(poll)
            poll = min(poll * 2, 0.05)
            continue
        if wake.next_timer is not None:
            if fake:
                clock.set(max(clock.now(), wake.next_timer))
            else:
                await clock.sleep_until(wake.next_timer, "settle")
            continue
        return Settled(True, "", step, polls)
    return Settled(False, f"the harness was still busy after {max_steps} steps", max_steps, polls)


async def _answer_client_calls(harness: Any, answer: Callable[[ToolCall], str | None], answered: set[str]) -> bool:
    progressed = False
    for task in list(harness.session.tasks.values()):
        inp = task.input
        if (task.kind == "tool" and isinstance(inp, ToolInput) and inp.client and isinstance(task.state, Waiting)
                and inp.call.id not in answered):
            content = answer(inp.call)
            if content is None:
                continue
            answered.add(inp.call.id)
            try:
                await harness.submit_tool_result(inp.call.id, content)
            except ToolResultRejected:  # answered or timed out meanwhile
                continue
            progressed = True
    return progressed


async def _decide_approvals(harness: Any, decide: Decide, decided: set[str]) -> bool:
    progressed = False
    for task in list(harness.session.tasks.values()):
        phase = task.checkpoint
        if task.kind != "tool" or not isinstance(phase, Approval) or not isinstance(task.state, Waiting):
            continue
        slot = approval_slot(task, phase)
        if slot.call_id in decided:
            continue
        decision = decide(slot)
        if decision is None:
            continue
        decided.add(slot.call_id)
        try:
            if isinstance(decision, Deny):
                await harness.deny(slot.call_id, decision.reason)
            else:
                await harness.approve(slot.call_id, decision.arguments)
        except ApprovalRejected:  # decided, denied at its deadline or aborted meanwhile
            continue
        progressed = True
    return progressed


def _what_is_active(harness: Any, stuck_after: float) -> str:
    busy = [
        f"task {t.id} ({t.kind}) is {type(t.state).__name__.lower()}"
        for t in harness.session.tasks.values()
        if isinstance(t.state, (Pending, Running))
    ]
    what = ", ".join(busy) or "work is active"
    return f"the harness did not settle: {what}, and nothing was committed for {stuck_after:g} s"
