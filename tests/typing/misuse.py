"""Mistakes the types of durable's public API catch before anything runs: each line that ends
with an "error:" comment must be reported by mypy --strict and by pyright strict, and no other
line (tests/typing/test_typing.py). Without the types they would be errors at run time, or pass
silently as `Any`."""

from __future__ import annotations

import durable
import durable.sync
from durable.models import FauxModel


async def mistakes(h: durable.Harness, status: durable.SubmissionStatus) -> None:
    await h.root.submit("hi", when_busy="quene")  # error: not a WhenBusy
    durable.open_harness("agent.sqlite", model="gpt-4o")  # error: a string is not a Model
    durable.open_harness("agent.sqlite", model=FauxModel(), settings={"retry": 3})  # error: not Settings
    durable.Settings(when_busy="later")  # error: not a WhenBusy
    durable.sync.open_harness("agent.sqlite", model=FauxModel(), backend="curio")  # error: no such backend
    print(durable.Prepare)  # error: internal phases are not in the public namespace
    if isinstance(status, durable.Answered):
        print(status.text + 1)  # error: the answer's text is a str
    reason: durable.UnansweredReason = "timeout"  # error: not a reason a run ends unanswered
    print(reason, (await h.root.submission("s").answer()).missing)  # error: answer() is a str
    print((await h.root.submission("s").answer(int)).upper())  # error: answer(int) is an int
