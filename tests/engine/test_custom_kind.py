"""A task kind added in one module, this one, with no edit anywhere else: the engine starts it,
commits its progress, charges it when a SIGKILL cuts it off, resumes it below the restart limit,
ends it visibly at the limit, and the views and the invariant checker know it by its hooks.

`CountdownKind` counts `n` steps; each step is outside work (here: a line printed, or a call the
test records) followed by a commit of its progress (`Counted(done)`), so a crash loses at most
the step in flight."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import durable
from durable import records as r
from durable._frozen import evolve, frozen
from durable.engine.kinds import TaskKind
from durable.engine.transitions import END, Transitions
from durable.models import FauxModel
from durable.testing import check_invariants
from durable.texts import times_in_a_row

pytestmark = pytest.mark.anyio

COUNTDOWN_AT_LIMIT = "Countdown {task_id} was interrupted {times} at step {step}; it is not run again"


@frozen
class CountInput(r.TaskInput):
    n: int


@frozen
class Counted(r.Checkpoint):
    done: int = 0


class CountdownKind(TaskKind):
    """Counts to `n`, one committed step at a time (see the module docstring)."""

    name = "countdown"
    input = CountInput
    checkpoints = {"counted": Counted}  # noqa: RUF012 - a kind's declaration, read once
    transitions = Transitions(
        start=["pending/counted"],
        moves={"pending/counted": ["running/counted"], "running/counted": ["pending/counted", END]},
    )

    def __init__(self, step: Any) -> None:
        self.phases = {Counted: self._count}
        self.step = step  # async (task_id, number) -> None: the outside work of one step

    def initial(self, input: r.TaskInput) -> tuple[r.State, r.Checkpoint | None]:
        return r.Pending(), Counted(0)

    async def _count(self, rt: durable.Runtime, task: r.Task) -> r.Task | None:
        task = await rt.mark_running(task)
        assert isinstance(task.input, CountInput) and isinstance(task.checkpoint, Counted)
        done = task.checkpoint.done
        while done < task.input.n:
            await self.step(task.id, done + 1)
            done += 1
            change = rt.change()
            task = change.put_task(evolve(task, checkpoint=Counted(done)))  # progress: clears restarts
            await rt.commit(change)
        change = rt.change()
        change.put_task(evolve(task, state=r.Terminal(r.Done({"counted": done}))))
        await rt.commit(change)
        return None

    async def end_at_limit(self, rt: durable.Runtime, task: r.Task, restarts: int, past: bool) -> str:
        assert isinstance(task.checkpoint, Counted)
        detail = COUNTDOWN_AT_LIMIT.format(task_id=task.id, times=times_in_a_row(restarts),
                                           step=task.checkpoint.done + 1)
        change = rt.change()
        change.put_task(evolve(task, state=r.Terminal(r.Failed(r.ErrorInfo(detail, r.ErrorDetail("restart_limit"))))))
        await rt.commit(change)
        return detail

    @classmethod
    def describe(cls, task: r.Task) -> str:
        assert isinstance(task.input, CountInput)
        return f"countdown from {task.input.n}"

    @classmethod
    def details(cls, task: r.Task) -> dict[str, Any]:
        assert isinstance(task.input, CountInput)
        done = task.checkpoint.done if isinstance(task.checkpoint, Counted) else None
        return {"countdown": {"n": task.input.n, "done": done}}

    @classmethod
    def check(cls, task: r.Task) -> list[str]:
        assert isinstance(task.input, CountInput)
        done = task.checkpoint.done if isinstance(task.checkpoint, Counted) else 0
        return [f"Countdown {task.id} counted {done} of {task.input.n}"] if done > task.input.n else []


# A child process that starts a countdown of 3 and is SIGKILLed in its second step: step 1 is
# committed, step 2 printed (the outside work) but never committed.
CHILD = """
import sys, anyio
sys.path.insert(0, sys.argv[2])
import durable
from durable.models import FauxModel
from tests.engine.test_custom_kind import CountdownKind, CountInput

async def step(task_id, number):
    print(f"step {number}", flush=True)
    if number == 2:
        await anyio.sleep_forever()

async def main():
    async with durable.open_harness(sys.argv[1], model=FauxModel([]), kinds=[CountdownKind(step)]) as h:
        tid = await h.start_task("countdown", CountInput(3))
        print(f"task {tid}", flush=True)
        await h.wait_for_task(tid)

anyio.run(main, backend="trio")
"""


def killed_in_step_2(path: Path) -> None:
    root = str(Path(__file__).resolve().parents[2])
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), root], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    lines = []
    for line in child.stdout:  # no sleeps: the child says where it is
        lines.append(line.strip())
        if line.strip() == "step 2":
            break
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert lines == ["task 1", "step 1", "step 2"]


def open_with(path: Path, steps: list[tuple[int, int]], reports: list[Any], **settings: Any) -> durable.Harness:
    async def step(task_id: int, number: int) -> None:
        steps.append((task_id, number))

    return durable.open_harness(path, model=FauxModel([]), kinds=[CountdownKind(step)],
                                settings=durable.Settings(**settings), report=reports.append)


async def test_a_kind_defined_in_one_module_runs_to_its_end_and_commits_each_step(tmp_path):
    steps: list[tuple[int, int]] = []
    async with open_with(tmp_path / "s.sqlite", steps, []) as h:
        tid = await h.start_task("countdown", CountInput(3))
        task = await h.wait_for_task(tid)
    assert (task.kind, task.state, task.checkpoint, task.restarts) == (
        "countdown", r.Terminal(r.Done({"counted": 3})), Counted(3), 0)
    assert steps == [(1, 1), (1, 2), (1, 3)]
    assert check_invariants(tmp_path / "s.sqlite", clean_close=True, quiescent=True) == []


async def test_a_countdown_cut_off_by_a_sigkill_is_charged_and_resumes_from_its_last_committed_step(tmp_path):
    path = tmp_path / "s.sqlite"
    killed_in_step_2(path)
    steps: list[tuple[int, int]] = []
    reports: list[Any] = []
    async with open_with(path, steps, reports) as h:
        cut_off = await h.task(1)
        assert cut_off is not None and (cut_off.state, cut_off.checkpoint, cut_off.restarts) == (
            r.Pending(), Counted(1), 1)
        task = await h.wait_for_task(1)
    # Step 2 runs again (its outside work was cut off), step 1 does not; the progress cleared the charge.
    assert steps == [(1, 2), (1, 3)]
    assert (task.state, task.checkpoint, task.restarts) == (r.Terminal(r.Done({"counted": 3})), Counted(3), 0)
    assert reports == [durable.TaskInterrupted(durable.TaskRef(1, "countdown", "root"), "interrupted", 1,
                                               "The countdown task runs again")]
    assert check_invariants(path, clean_close=True, quiescent=True) == []


async def test_a_countdown_cut_off_at_the_restart_limit_ends_visibly_and_runs_no_step(tmp_path):
    path = tmp_path / "s.sqlite"
    killed_in_step_2(path)
    steps: list[tuple[int, int]] = []
    reports: list[Any] = []
    async with open_with(path, steps, reports, restart_limit=1) as h:
        task = await h.wait_for_task(1)
    detail = "Countdown 1 was interrupted once at step 2; it is not run again"
    assert steps == []
    assert task.state == r.Terminal(r.Failed(r.ErrorInfo(detail, r.ErrorDetail("restart_limit"))))
    assert reports == [durable.TaskInterrupted(durable.TaskRef(1, "countdown", "root"), "restart_limit", 1, detail)]
    assert check_invariants(path, clean_close=True, quiescent=True) == []


async def test_a_clean_close_in_the_middle_of_a_countdown_is_not_a_crash(tmp_path):
    path = tmp_path / "s.sqlite"
    gate = anyio.Event()

    async def step(task_id: int, number: int) -> None:
        if number == 2:
            gate.set()
            await anyio.sleep_forever()

    async with durable.open_harness(path, model=FauxModel([]), kinds=[CountdownKind(step)]) as h:
        tid = await h.start_task("countdown", CountInput(3))
        await gate.wait()
    steps: list[tuple[int, int]] = []
    reports: list[Any] = []
    async with open_with(path, steps, reports) as h:
        assert (await h.task(tid)).restarts == 0  # type: ignore[union-attr]
        task = await h.wait_for_task(tid)
    assert steps == [(1, 2), (1, 3)] and reports == []
    assert task.state == r.Terminal(r.Done({"counted": 3}))


async def test_the_views_describe_a_countdown_through_its_kind(tmp_path):
    from durable.cli.inspect_data import read_session
    from durable.cli.plain_view import describe_cut_off

    path = tmp_path / "s.sqlite"
    killed_in_step_2(path)
    data = read_session(path)
    (task,) = data["tasks"]
    assert (task["kind"], task["state"], task["phase"], task["restarts"], task["countdown"]) == (
        "countdown", "running", "counted", 0, {"n": 3, "done": 1})
    found = durable.Task(1, "root", "countdown", CountInput(3), r.Pending(), Counted(1), restarts=1)
    assert describe_cut_off(found, None) == "task 1 (countdown from 3) was cut off by the crash (restarts=1)"


def test_a_file_holding_a_kind_this_process_does_not_know_is_refused_naming_the_kind_and_the_file(tmp_path):
    path = tmp_path / "s.sqlite"
    killed_in_step_2(path)
    shown = subprocess.run([sys.executable, "-m", "durable.cli", "inspect", str(path)], capture_output=True, text=True)
    assert shown.returncode != 0
    assert (f"Task 1 in {path} has kind 'countdown', which this process does not know (unknown task kind "
            f"'countdown' (this process knows cancel, compaction, generation, tool)): open the file with the code "
            f"that defines that kind") in shown.stderr
