"""The agent process of a process-kill test: `python -m durable.testing.child SCENARIO PATH ...`.

It runs one lifetime of a scenario on the session file PATH and says what it does on stdout, a
line at a time, each in a single `write`, so that a parent reading the pipe sees every line the
child wrote before it was killed:

    event open                  the harness opened the file (and charged what was cut off)
    commit N                    the N-th commit of this process is on disk
    event submitted SUB_ID      `submit` returned: the input is acknowledged
    event settled True|False    the harness settled (nothing active, no timer due) or is stuck
    event closed                the clean close is done
    stopped                     the child stopped itself (SIGSTOP), waiting for the kill

`--mode drive` runs the scenario's `drive`, then settles; `--mode recover` only reopens and
settles. `--stop-after N` stops the child right after its N-th commit, `--stop-at NAME` right
after it says `event NAME`, so that the parent's SIGKILL lands exactly there. The clock is a
`ScaledClock` (`--scale`, `--epoch`, the same for every process of a test), so a durable deadline
means the same instant to the next process; tool executions and deferred jobs go to append-only
files (`--executions`, `--jobs`). SCENARIO is a name from `durable.testing.scenarios` or
`package.module:attribute`. Exit status: 0 after a clean close of a settled harness, 3 if not.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from typing import Any


def say(line: str) -> None:
    os.write(1, (line + "\n").encode())


def load_scenario(spec: str) -> Any:
    """A scenario by name (`durable.testing.scenarios`) or by `module:attribute`."""
    if ":" in spec:
        module, _, attr = spec.partition(":")
        return getattr(importlib.import_module(module), attr)
    from . import scenarios

    try:
        return scenarios.BY_NAME[spec]
    except KeyError:
        raise SystemExit(f"Unknown scenario {spec!r}; known: {', '.join(sorted(scenarios.BY_NAME))}") from None


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m durable.testing.child", description=__doc__.split("\n\n")[0])
    p.add_argument("scenario")
    p.add_argument("path")
    p.add_argument("--mode", choices=("drive", "recover"), default="drive")
    p.add_argument("--executions", required=True, help="append-only file of tool executions")
    p.add_argument("--jobs", required=True, help="append-only file of deferred jobs (the faux provider)")
    p.add_argument("--epoch", type=float, required=True, help="the ScaledClock epoch shared by every process")
    p.add_argument("--scale", type=float, default=1000.0)
    p.add_argument("--stop-after", type=int, default=None, help="SIGSTOP right after this commit")
    p.add_argument("--stop-at", default=None, help="SIGSTOP right after saying this event (e.g. 'submitted')")
    p.add_argument("--synchronous", choices=("EXTERNAL", "FULL", "NORMAL"), default="EXTERNAL")
    p.add_argument("--stuck-after", type=float, default=10.0)
    return p.parse_args(argv)


async def run(args: argparse.Namespace) -> int:
    from .._open import open_harness
    from ..storage.sqlite.store import SQLiteStorage
    from .clocks import ScaledClock
    from .crash import CrashableStorage
    from .explore import Driver
    from .observe import ExecutionLog, FauxJobLedger

    scenario = load_scenario(args.scenario)
    clock = ScaledClock(args.scale, epoch=args.epoch)
    world = scenario.setup(clock)
    executions = ExecutionLog(args.executions)
    ledger = FauxJobLedger(args.jobs, findable=world.findable_jobs)
    model = ledger.witnessed(world.model)
    tools = executions.wrap_all(world.tools)
    settings = world.settings if args.mode == "drive" else (world.reopen_settings or world.settings)

    def stop() -> None:
        say("stopped")
        os.kill(os.getpid(), signal.SIGSTOP)  # the parent's SIGKILL lands exactly here

    def on_commit(number: int, batch: Any) -> None:
        say(f"commit {number}")
        if args.stop_after is not None and number >= args.stop_after:
            stop()

    def event(name: str, *detail: str) -> None:
        say(" ".join(("event", name, *detail)))
        if args.stop_at == name:
            stop()

    store = CrashableStorage(SQLiteStorage(args.path, synchronous=args.synchronous), on_commit=on_commit,
                             record=False)
    harness = open_harness(store, model=model, tools=tools, settings=settings, clock=clock,
                           instructions=world.instructions, output=world.output, deps=world.deps)
    async with harness:
        event("open")
        driver = Driver(harness, clock, world, stuck_after=args.stuck_after)
        driver.on_submit = lambda sid: event("submitted", sid)
        if args.mode == "drive":
            await scenario.drive(driver)
        settled = await driver.settle()
        if not settled.quiescent:
            say(f"stuck {settled.stuck}")
        event("settled", str(settled.quiescent))
    event("closed")
    return 0 if settled.quiescent else 3


def main(argv: list[str] | None = None) -> int:
    import trio

    args = parse(argv)
    return trio.run(run, args)


if __name__ == "__main__":
    sys.exit(main())
