"""Crash-testing agents built on durable: crash injection, a crash explorer and an invariant
checker (public, documented in docs/testing.md).

In-process crashes:
    `CrashableStorage`, `crash(harness)`, `crashable_harness(path, ...)`, `abandon_on_crash`
Driving a harness to quiescence, by events (deciding approvals with `Approve` / `Deny`):
    `wait_idle(harness)`, `settle(harness, clock) -> Settled`, `FakeClock`, `ScaledClock`
Witnesses that survive crashes:
    `ExecutionLog` (tool executions per call), `FauxJobLedger` (deferred jobs at the provider)
Faux models that answer by turn, so retries after a crash get the same answer:
    `by_input({...})`
Invariants (docs/spec.md §6):
    `check_invariants(path_or_storage, ...) -> list[str]`, `check_commit_history(batches)`,
    `describe_session(path)`
The explorer (every commit boundary of a scenario):
    `Scenario`, `scenario`, `World`, `Driver`, `explore(...) -> Exploration`, `CrashPoint`
Process kills (`kill -9` of a child process at random or at named points):
    `kill_test(...) -> KillReport`, `python -m durable.testing.child`
Power cuts (losing every write that was not fsynced; needs `apsw`):
    `durable.testing.powercut`
"""

from ..engine.clock import FakeClock
from .clocks import ScaledClock
from .crash import CrashableStorage, abandon_on_crash, crash, crashable_harness, describe_batch
from .explore import (
    CrashPoint,
    Driver,
    Exploration,
    PointResult,
    Scenario,
    World,
    explore,
    replay,
    scenario,
)
from .invariants import check_commit_history, check_invariants, describe_session, load_session
from .kill import KillReport, Trial, kill_test
from .observe import Execution, ExecutionLog, FauxJobLedger, LedgerModel
from .quiesce import Approve, Deny, Settled, default_answer, default_decision, settle, wait_idle
from .scripts import by_input

__all__ = [
    "Approve",
    "CrashPoint",
    "CrashableStorage",
    "Deny",
    "Driver",
    "Execution",
    "ExecutionLog",
    "Exploration",
    "FakeClock",
    "FauxJobLedger",
    "KillReport",
    "LedgerModel",
    "PointResult",
    "ScaledClock",
    "Scenario",
    "Settled",
    "Trial",
    "World",
    "abandon_on_crash",
    "by_input",
    "check_commit_history",
    "check_invariants",
    "crash",
    "crashable_harness",
    "default_answer",
    "default_decision",
    "describe_batch",
    "describe_session",
    "explore",
    "kill_test",
    "load_session",
    "replay",
    "scenario",
    "settle",
    "wait_idle",
]
