"""Invariant violations the crash tests found in the engine, each reduced to its shortest
reproduction.

Fixed, kept as regression tests:

- a faulted abort handler (cut off restart_limit times) still cancels the run's deferred job;
- an unsafe tool cut off by a clean close in the middle of its execute is not run again on the
  next open (a close is not a crash for charging, but the tool may have partially run);
- a deferred job whose handle was never committed (the host died between the provider accepting
  the job and the commit of its handle) is found by its key (`model.find`) and cancelled when the
  run then ends: at the restart limit, by an abort, or by an abort handler faulted at the limit;
- a crash right after a faulted abort handler's ending commit no longer leaves the job open: the
  handler tries the cancel (for at most 30 s of the clock) before that commit.
"""

from __future__ import annotations

import attrs
import pytest

import durable
from durable.models import faux
from durable.testing import (
    ExecutionLog,
    FakeClock,
    FauxJobLedger,
    by_input,
    check_invariants,
    crashable_harness,
    explore,
    scenarios,
    settle,
    wait_idle,
)
from durable.testing.scenarios import slow_tool

pytestmark = pytest.mark.anyio


def settings(**kw):
    return durable.Settings(progress=durable.Progress(0, 0), **kw)


def deferred_answer_world(tmp_path, **kw):
    """A session file, its clock, a job ledger, settings for deferred answers (and `kw`), and a
    maker of the model: it answers "Q" with "A" through a deferred job that is polled twice."""
    path, clock, ledger = tmp_path / "s.sqlite", FakeClock(), FauxJobLedger()

    def model():
        return ledger.model(by_input({"Q": [faux.reply("A")]}, deferred=True, polls=2))

    return path, clock, ledger, settings(stream=durable.StreamSettings(deferred=True), **kw), model


async def test_a_faulted_abort_handler_still_cancels_the_deferred_job(tmp_path):
    path, clock, ledger, st, model = deferred_answer_world(tmp_path, restart_limit=1)

    async with crashable_harness(path, model=model(), settings=st, clock=clock) as h:
        await h.root.submit("Q")
        await wait_idle(h)  # the job is submitted; the generation sleeps until its poll time
    async with crashable_harness(path, model=model(), settings=st, clock=clock, crash_after=1) as h:
        await h.root.abort()  # the abort handler is cut off at its first commit
    async with crashable_harness(path, model=model(), settings=st, clock=clock) as h:
        assert (await settle(h, clock)).quiescent  # the handler is faulted at the restart limit
    assert check_invariants(path, jobs=ledger, settings=st, clean_close=True, quiescent=True) == []


async def test_an_unsafe_tool_cut_off_by_a_clean_close_is_not_run_again(tmp_path):
    path, clock, executions = tmp_path / "s.sqlite", FakeClock(), ExecutionLog()

    def world():
        tools = executions.wrap_all([slow_tool("transfer", clock, replay="unsafe")])
        model = by_input({"Pay": [faux.reply("", tool_calls=[faux.call("transfer")]), faux.reply("Paid")]})
        return {"model": model, "tools": tools, "settings": settings(), "clock": clock}

    async with crashable_harness(path, **world()) as h:
        await h.root.submit("Pay")
        await wait_idle(h)  # the tool runs (it works for 100 s of the clock); then a clean close
    assert len(executions.executions()) == 1
    async with crashable_harness(path, **world()) as h:
        assert (await settle(h, clock)).quiescent
    assert check_invariants(path, executions=executions, clean_close=True, quiescent=True) == []


DEFERRED_AT_LIMIT_1 = scenarios.deferred_answer.variant(
    "deferred_answer_restart_limit_1", settings=lambda st: attrs.evolve(st, restart_limit=1))


async def test_a_run_ended_at_the_restart_limit_cancels_a_deferred_job_whose_handle_was_never_committed():
    # Crash just before commit 3 (the job's handle): the job exists at the provider, the file
    # only has its key. Reopened with restart_limit=1, the run ends at the limit.
    exploration = await explore(DEFERRED_AT_LIMIT_1, only=("before", 3))
    exploration.assert_ok()


async def test_an_abort_cancels_a_deferred_job_whose_handle_was_never_committed(tmp_path):
    path, clock, ledger, st, model = deferred_answer_world(tmp_path)

    async with crashable_harness(path, model=model(), settings=st, clock=clock, crash_before=3) as h:
        await h.root.submit("Q")  # commit 3 would be the job's handle: the job is submitted, then the crash
        await h.storage.crashed.wait()
    assert len(ledger.jobs()) == 1
    async with crashable_harness(path, model=model(), settings=st, clock=clock) as h:
        await h.root.abort()
        assert (await settle(h, clock)).quiescent
    assert check_invariants(path, jobs=ledger, settings=st, clean_close=True, quiescent=True) == []


async def test_a_crash_right_after_a_faulted_abort_handler_ended_the_run_still_cancels_the_deferred_job(tmp_path):
    path, clock, ledger, st, model = deferred_answer_world(tmp_path, restart_limit=1)

    async with crashable_harness(path, model=model(), settings=st, clock=clock) as h:
        await h.root.submit("Q")
        await wait_idle(h)  # the job is submitted and its handle committed
    async with crashable_harness(path, model=model(), settings=st, clock=clock, crash_after=1) as h:
        await h.root.abort()  # the abort handler is cut off at its first commit
    # Commit 1 charges the handler; commit 2 ends the run faulted (restart limit 1); then the crash.
    async with crashable_harness(path, model=model(), settings=st, clock=clock, crash_after=2) as h:
        await h.resume()
        await h.storage.crashed.wait()
    async with crashable_harness(path, model=model(), settings=st, clock=clock) as h:
        assert (await settle(h, clock)).quiescent
    assert check_invariants(path, jobs=ledger, settings=st, clean_close=True, quiescent=True) == []
