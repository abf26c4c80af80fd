"""Process kills: run an agent in a child process, `kill -9` it, reopen, check the invariants.

`kill_test(scenario, kills=40, seed=1)` runs *trials*. A trial is one session file and a few
child processes in a row (`durable.testing.child`): the first drives the scenario, the next ones
only reopen and settle. Every child but the last is killed with SIGKILL at a point the trial's
random generator picks (an exact commit boundary, just after an input was acknowledged, or a
time anywhere in its life, the open included). The last child reopens, settles and closes
cleanly; then the parent checks the file with `check_invariants`, the children's acknowledged
submissions, tool executions and deferred jobs as witnesses.

Each child is a real process: nothing of it survives but what it wrote to files. The scenario
must be importable by the child: a name from `durable.testing.scenarios`, or
`"package.module:attribute"`. Its clock is a `ScaledClock` (1000x by default), so the backoffs
and poll intervals of the scenario's settings take milliseconds.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import attrs

from .invariants import check_invariants, describe_session

Spawn = Literal["forkserver", "exec"]


@attrs.define
class Trial:
    """One session file: the lifetimes it went through and what the check found."""

    number: int
    plan: list[str]  # one line per child: its mode, where it was killed (or how it ended)
    kills: int
    violations: list[str]
    transcript: str = ""


@attrs.define
class KillReport:
    """What `kill_test` did: its trials (trial 0 is the run without a kill), the kills that
    landed, and the violations found, with `report()` / `assert_ok()` like an `Exploration`."""

    scenario: str
    seed: int
    trials: list[Trial]
    commits: int  # commits of the scenario's run without a kill
    seconds: float

    @property
    def kills(self) -> int:
        return sum(t.kills for t in self.trials)

    @property
    def failures(self) -> list[Trial]:
        return [t for t in self.trials if t.violations]

    def summary(self) -> str:
        return (f"{self.scenario}: {len(self.trials)} trials, {self.kills} kills, {len(self.failures)} with "
                f"violations (seed {self.seed}, {self.seconds:.1f} s)")

    def report(self) -> str:
        lines = [self.summary()]
        for t in self.failures:
            lines.append("")
            lines.append(f"Trial {t.number}: " + " | ".join(t.plan))
            lines += [f"  - {v}" for v in t.violations]
            lines.append(f"  reproduce: kill_test({self.scenario!r}, seed={self.seed}, trials=[{t.number}])")
            lines.append("  " + t.transcript.replace("\n", "\n  "))
        return "\n".join(lines)

    def assert_ok(self) -> None:
        if self.failures:
            raise AssertionError(self.report())


# --------------------------------------------------------------------------- children


def _fork_main(argv: list[str], conn: Any) -> None:
    """The body of a forked child: the child module's `main`, saying its lines on `conn`."""
    from . import child

    child.say = lambda line: conn.send_bytes(line.encode())  # one write per line (a short message)
    try:
        code = child.main(argv)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, then the child dies
        import traceback

        conn.send_bytes(f"error {type(exc).__name__}: {exc}\n{traceback.format_exc()}".encode())
        code = 4
    conn.close()
    sys.stdout.flush()
    os._exit(code)


class _Child:
    """A running child process and the lines it said."""

    def __init__(self, argv: list[str], spawn: Spawn, workdir: str) -> None:
        self.lines: list[str] = []
        self.started = time.monotonic()
        self._buffer = b""
        self.spawn = spawn
        if spawn == "exec":
            self._stderr = open(os.path.join(workdir, "stderr.txt"), "ab")
            env = dict(os.environ)
            root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            self.proc: Any = subprocess.Popen([sys.executable, "-m", "durable.testing.child", *argv],
                                              stdout=subprocess.PIPE, stderr=self._stderr, env=env)
            self.pid = self.proc.pid
        else:
            ctx = _forkserver()
            read, write = ctx.Pipe(duplex=False)
            self.proc = ctx.Process(target=_fork_main, args=(argv, write), daemon=True)
            self.proc.start()
            write.close()
            self._conn = read
            self.pid = self.proc.pid

    def read(self, timeout: float) -> list[str] | None:
        """New lines said within `timeout` seconds ([] if none yet); None once the child's
        output ended (it exited or was killed)."""
        timeout = max(0.0, timeout)
        if self.spawn == "exec":
            fd = self.proc.stdout.fileno()
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return []
            data = os.read(fd, 65536)
            if not data:
                return None
            self._buffer += data
            *complete, self._buffer = self._buffer.split(b"\n")
            new = [c.decode(errors="replace") for c in complete]
        else:
            if not self._conn.poll(timeout):
                return []
            try:
                new = [self._conn.recv_bytes().decode(errors="replace")]
            except (EOFError, OSError):
                return None
        self.lines += new
        return new

    def alive(self) -> bool:
        if self.spawn == "exec":
            return self.proc.poll() is None
        alive: bool = self.proc.is_alive()
        return alive

    def kill(self) -> bool:
        """SIGKILL the child; True when it was still alive to be killed."""
        if not self.alive():
            return False
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            return False
        return True

    def wait(self) -> int | None:
        if self.spawn == "exec":
            code: int = self.proc.wait()
            self._stderr.close()
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            return code
        self.proc.join()
        self._conn.close()
        exitcode: int | None = self.proc.exitcode
        return exitcode


_FORKSERVER: Any = None

# What the fork server imports once, so that no forked child imports it again: everything a child
# imports before it opens the file. The last two are imported lazily by durable (anyio's trio
# backend when the loop starts, jsonschema when a tool's schema is compiled); preloaded, a child
# says `event open` ~20 ms after it starts instead of ~85 ms (66 ms of imports each time).
_PRELOAD = ("durable.testing.child", "durable.testing.kill", "durable.testing.scenarios", "durable.tasks",
            "durable.testing.explore", "durable.testing.observe", "durable.testing.crash", "durable.testing.clocks",
            "durable._open", "durable.storage.sqlite.store", "trio", "anyio._backends._trio", "jsonschema")


def _forkserver() -> Any:
    global _FORKSERVER
    if _FORKSERVER is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["__main__", *_PRELOAD])
        _FORKSERVER = ctx
    return _FORKSERVER


# --------------------------------------------------------------------------- running one child


@attrs.define
class _Run:
    lines: list[str]
    killed: bool
    code: int | None
    seconds: float  # from `event open` to the end (or the kill)
    startup: float  # from the start to `event open`


def _run_child(argv: list[str], spawn: Spawn, workdir: str, *, kill: tuple[str, float] | None,
               timeout: float) -> _Run:
    child = _Child(argv, spawn, workdir)
    opened_at: float | None = None
    kill_at: float | None = None
    if kill is not None and kill[0] == "early":
        kill_at = child.started + kill[1]
    killed = False
    deadline = child.started + timeout
    while True:
        now = time.monotonic()
        wait = min(deadline, kill_at if kill_at is not None else deadline) - now
        new = child.read(max(0.0, wait))
        now = time.monotonic()
        if new is None:
            break
        for line in new:
            if line == "event open" and opened_at is None:
                opened_at = now
                if kill is not None and kill[0] == "time":
                    kill_at = now + kill[1]
            if line == "stopped" and kill is not None and kill[0] in ("commit", "event"):
                killed = child.kill()
        if killed:
            break
        if kill_at is not None and now >= kill_at:
            killed = child.kill()
            break
        if now >= deadline:
            child.kill()
            child.wait()
            raise TimeoutError(f"The child did not finish within {timeout:g} s: {' / '.join(child.lines[-5:])}")
    if killed:
        # Collect what it said before the kill (it is dead: the pipe drains and ends).
        while child.read(1.0) not in (None,):
            pass
    code = child.wait()
    end = time.monotonic()
    return _Run(child.lines, killed, code, end - (opened_at or end), (opened_at or end) - child.started)


def _argv(scenario: str, workdir: str, mode: str, epoch: float, *, stop_after: int | None, scale: float,
          synchronous: str, stop_at: str | None = None) -> list[str]:
    argv = [scenario, os.path.join(workdir, "session.sqlite"), "--mode", mode,
            "--executions", os.path.join(workdir, "executions.jsonl"), "--jobs", os.path.join(workdir, "jobs.jsonl"),
            "--epoch", repr(epoch), "--scale", repr(scale), "--synchronous", synchronous]
    if stop_after is not None:
        argv += ["--stop-after", str(stop_after)]
    if stop_at is not None:
        argv += ["--stop-at", stop_at]
    return argv


def _acknowledged(lines: list[str]) -> list[str]:
    return [line.split()[2] for line in lines if line.startswith("event submitted ")]


def _world_settings(scenario: str) -> tuple[list[Any], bool]:
    import trio

    from .child import load_scenario

    async def make() -> tuple[list[Any], bool]:
        world = load_scenario(scenario).setup(_NoClock())
        return [world.settings, world.reopen_settings or world.settings], world.findable_jobs

    return trio.run(make)


class _NoClock:
    def now(self) -> float:
        return 0.0

    async def sleep_until(self, deadline: float, name: str = "") -> None:  # pragma: no cover - never run
        raise RuntimeError("not a running clock")


# --------------------------------------------------------------------------- the test


def kill_test(
    scenario: str,
    *,
    kills: int = 40,
    seed: int = 1,
    trials: Sequence[int] | None = None,
    workers: int = 2,
    spawn: Spawn = "forkserver",
    scale: float = 1000.0,
    synchronous: str = "EXTERNAL",
    timeout: float = 30.0,
    max_trials: int | None = None,
    directory: str | os.PathLike[str] | None = None,
    keep: bool = False,
    progress: Callable[[Trial], None] | None = None,
) -> KillReport:
    """Kill children running `scenario` until `kills` kills landed (see the module docstring).

    A kill point is one of:

    - `commit c`: the child stops itself (SIGSTOP) right after its c-th commit and the parent
      kills it there: an exact commit boundary, in a real process;
    - `event submitted`: the same, right after `submit` returned (the input is acknowledged and
      must survive);
    - `time t`: t seconds after the child said `event open`: anywhere, including in the middle of
      a SQLite write or fsync, between a model call and its commit, inside a tool;
    - `early t`: t seconds after the child started: also while it opens the file and charges
      what was cut off before.

    Before the trials, one child runs the scenario without a kill (trial 0) to learn how many
    commits it makes and how long it takes; the kill points are drawn from those. The check after
    the last child uses the acknowledged submissions from the children's `event submitted` lines,
    the tool executions and deferred jobs from their append-only files, `clean_close=True`, and
    `quiescent=True` when the last child settled. Everything random comes from `seed` and the
    trial number: `kill_test(..., seed=S, trials=[7])` replays trial 7's plan (the `time` kills
    land where the machine's timing puts them, so only `commit` kills reproduce exactly).

    Children are started through a multiprocessing fork server (`spawn="forkserver"`, the
    default: a clean process that imports durable once and forks a child per run), or as
    `python -m durable.testing.child` (`spawn="exec"`, a new interpreter each time).

    `trials=[7, 9]` runs only those trials (a reproduction). `workers` trials run at once.
    Session files go to `directory` (default: a temporary one), removed unless `keep` or a
    trial failed. Bounded: at most `max_trials` trials (default 3 x `kills`)."""
    began = time.monotonic()
    settings, _ = _world_settings(scenario)
    root = tempfile.mkdtemp(prefix="durable-kill-", dir=directory)
    limit = max_trials if max_trials is not None else max(1, 3 * kills)  # a loaded machine ends more trials first

    def run_trial(number: int, calib: _Run | None) -> tuple[Trial, _Run | None]:
        rng = random.Random(f"{seed}/{scenario}/{number}")
        workdir = os.path.join(root, f"trial-{number}")
        os.makedirs(workdir, exist_ok=True)
        epoch = time.time()
        plan: list[str] = []
        acks: list[str] = []
        landed = 0
        violations: list[str] = []
        lifetimes = 0 if calib is None else rng.choice((1, 1, 1, 2, 2, 3))
        commits = max(1, _last_commit(calib.lines)) if calib is not None else 1
        try:
            for i in range(lifetimes):
                assert calib is not None  # lifetimes is 0 without a calibration run
                mode = "drive" if i == 0 else "recover"
                pick = rng.random()
                stop_at = None
                kill: tuple[str, float]
                if pick < 0.4:
                    c = rng.randint(1, commits)
                    kill, stop, what = ("commit", c), c, f"{mode}: kill after commit {c}"
                elif pick < 0.5 and mode == "drive":
                    kill, stop, stop_at = ("event", 0.0), None, "submitted"
                    what = f"{mode}: kill right after an input was acknowledged"
                elif pick < 0.9:
                    t = rng.uniform(0.0, max(calib.seconds, 0.001))
                    kill, stop, what = ("time", t), None, f"{mode}: kill {t * 1000:.1f} ms after open"
                else:
                    t = rng.uniform(0.0, calib.startup + calib.seconds)
                    kill, stop, what = ("early", t), None, f"{mode}: kill {t * 1000:.1f} ms after start"
                run = _run_child(_argv(scenario, workdir, mode, epoch, stop_after=stop, scale=scale,
                                       synchronous=synchronous, stop_at=stop_at), spawn, workdir, kill=kill,
                                 timeout=timeout)
                acks += _acknowledged(run.lines)
                landed += run.killed
                plan.append(what + ("" if run.killed else f" (ended first: exit {run.code})"))
            last = _run_child(_argv(scenario, workdir, "drive" if lifetimes == 0 else "recover", epoch,
                                    stop_after=None, scale=scale, synchronous=synchronous),
                              spawn, workdir, kill=None, timeout=timeout)
            acks += _acknowledged(last.lines)
            plan.append(f"{'drive' if lifetimes == 0 else 'recover'}: ran to the end (exit {last.code})")
            settled = "event settled True" in last.lines
            # The lines are the verdict: a fork server reports an unknown status as 255.
            if not settled or "event closed" not in last.lines or last.code not in (0, 255):
                violations.append(f"the last child did not settle and close cleanly (exit {last.code}): "
                                  + " / ".join(line for line in last.lines if not line.startswith("commit"))[-600:])
            violations += check_invariants(
                os.path.join(workdir, "session.sqlite"), executions=os.path.join(workdir, "executions.jsonl"),
                jobs=os.path.join(workdir, "jobs.jsonl"), settings=settings, acknowledged=acks,
                clean_close=True, quiescent=settled)
        except TimeoutError as exc:
            violations.append(str(exc))
            last = None
        transcript = describe_session(os.path.join(workdir, "session.sqlite")) if violations else ""
        if not violations and not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        trial = Trial(number, plan, landed, violations, transcript)
        if progress is not None:
            progress(trial)
        return trial, last

    try:
        calibration, calib = run_trial(0, None)
        done = [calibration]
        if calib is None:
            return KillReport(scenario, seed, done, 0, time.monotonic() - began)
        numbers = list(trials) if trials is not None else None
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            if numbers is not None:
                done += [t for t, _ in pool.map(lambda n: run_trial(n, calib), numbers)]
            else:
                nxt = 1
                while sum(t.kills for t in done) < kills and nxt <= limit:
                    # About enough trials to reach the target (a trial lands 1.6 kills on average).
                    missing = kills - sum(t.kills for t in done)
                    size = max(workers, -(-missing * 10 // 16))
                    batch = list(range(nxt, min(limit, nxt + size - 1) + 1))
                    nxt = batch[-1] + 1
                    done += [t for t, _ in pool.map(lambda n: run_trial(n, calib), batch)]
        return KillReport(scenario, seed, done, _last_commit(calib.lines), time.monotonic() - began)
    finally:
        if not keep and not os.listdir(root):
            shutil.rmtree(root, ignore_errors=True)


def _last_commit(lines: list[str]) -> int:
    numbers = [int(line.split()[1]) for line in lines if line.startswith("commit ")]
    return max(numbers, default=0)
