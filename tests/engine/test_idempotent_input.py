"""A caller-chosen submission id makes `submit` safe to retry: the same id again is the same input
(also after the first caller's process died once the input was committed), never a second one;
the same id with another text, or in another conversation, is refused naming the id."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux

from .conftest import settings

pytestmark = pytest.mark.anyio


async def test_the_same_id_twice_is_one_input_answered_once(host):
    model = FauxModel([faux.reply("Hello")])
    async with host.open(model, settings=settings()) as h:
        first = await h.root.submit("Hi", id="client-1")
        again = await h.root.submit("Hi", id="client-1", when_busy="reject")  # no second input: nothing to reject
        assert (first.id, again.id) == ("client-1", "client-1")
        assert await again.wait() == r.Answered("Hello", 2)
        later = await h.root.submit("Hi", id="client-1")  # settled by now: found in the file
        assert await later.wait() == r.Answered("Hello", 2)
    assert await host.transcript() == ["user", "assistant:stop"]
    assert len(model.requests) == 1


async def test_concurrent_submits_of_one_id_place_one_input(host):
    model = FauxModel([faux.reply("Hello")])
    async with host.open(model, settings=settings()) as h:
        handles: list[durable.SubmissionHandle] = []

        async def submit() -> None:
            handles.append(await h.root.submit("Hi", id="same"))

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(submit)
        assert [s.id for s in handles] == ["same"] * 5
        assert await handles[0].wait() == r.Answered("Hello", 2)
    assert await host.transcript() == ["user", "assistant:stop"]


async def test_the_same_id_with_another_text_or_conversation_is_refused_and_changes_nothing(host):
    model = FauxModel([faux.reply("Hello")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("Hi", id="k1")
        assert await sub.wait() == r.Answered("Hello", 2)
        with pytest.raises(durable.InvalidInput) as other_text:
            await h.root.submit("Hello there", id="k1")
        assert str(other_text.value) == (f"Submission id 'k1' in {host.path} is taken by another input (in "
                                         f"conversation 'root', text 'Hi'); the input was not accepted")
        with pytest.raises(durable.InvalidInput, match="Submission id 'k1' .* is taken by another input"):
            await h.conversation("other").submit("Hi", id="k1")
        for bad in ("", "x" * 201, "nul\x00"):
            with pytest.raises(durable.InvalidInput, match="submission id"):
                await h.root.submit("Hi", id=bad)
    assert await host.transcript() == ["user", "assistant:stop"]


CHILD = """
import sys, anyio, durable
from durable.models import FauxModel, faux

async def main():
    async with durable.open_harness(sys.argv[1], model=FauxModel([faux.hang()])) as h:
        sub = await h.root.submit("Hi", id="order-42")
        print("acknowledged", sub.id, flush=True)
        await sub.wait()

anyio.run(main, backend="trio")
"""


async def test_a_submit_retried_after_the_callers_process_died_finds_the_acknowledged_input(tmp_path: Path):
    path = tmp_path / "s.sqlite"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "acknowledged order-42"  # the commit is on disk: then killed
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    model = FauxModel([faux.reply("Answered after the crash")])
    clock = durable.FakeClock()
    async with durable.open_harness(path, model=model, settings=settings(), clock=clock) as h:
        retried = await h.root.submit("Hi", id="order-42")
        assert retried.id == "order-42"
        await clock.wait_for_timer("retry:1")  # the interrupted attempt 1 is charged, then retried
        clock.advance(1.0)
        assert await retried.wait() == r.Answered("Answered after the crash", 2)
        assert [type(e.entry).__name__ for e in await h.root.entries()] == ["UserEntry", "AssistantEntry"]
    assert len(model.requests) == 1
