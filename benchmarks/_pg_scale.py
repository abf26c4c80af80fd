"""benchmarks/postgres.py, second part: the harness on PostgreSQL across worker processes, beside
DBOS on the same server, and the takeover time after a SIGKILL.

Workflows (`workflows(...)`): P processes (1 and 4) each run its share of N 3-step workflows one
after another: ours, a harness on a space of its own (`PostgresStorage`, one space per process,
one conversation per workflow: the input, 3 requests each calling the safe tool `step`, the
answer); DBOS, a `@DBOS.workflow` of 3 `@DBOS.step`s with its system database on the same server
(P processes, one executor id each, run from benchmarks/.peers-venv). Every process opens, warms
up and prints `ready`; the parent then says `go` to all at once and times until the last is done:
steps/s = 3 N / wall. Transactions and WAL syncs per step are the server's counters
(pg_stat_database.xact_commit of the database, reads included; pg_stat_wal.wal_sync) over the
timed part: the warm-up's are reported before it (ours: `pg_stat_force_next_flush()`; DBOS: its
pool's connections closed), the timed part's when the processes exit. They include ours' lease
renewals and DBOS's own bookkeeping (its queue thread's polls).

Takeover (`takeover(...)`): a host (tests/storage/pg_worker_app.py) with a lease of L seconds
submits, its tool starts and hangs, it is SIGKILLed; a `durable worker` process already polling
(every 0.1 s) reports `taken <space>` once it opened the space (recovery done). The time from the
kill to that line is the takeover time (target: L + 1 s; the lease itself runs out between 2L/3
and L after the kill, since it is renewed every L/3).

Children: `python _pg_scale.py ours|dbos <dsn or url> <index> <n>` (reads `go` on stdin).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
APP_DIR = ROOT / "tests" / "storage"
WARMUP = 5


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------- children


def child_ours(dsn: str, index: int, n: int) -> None:
    import anyio

    import durable
    from durable.models import FauxModel, faux
    from durable.settings import Settings
    from durable.storage import PostgresStorage

    async def step(args: Any, api: Any, ctx: Any) -> str:
        return "ok"

    tool = durable.define_tool("step", "One workflow step", replay="safe", execute=step)

    def decide(request: Any) -> Any:
        done = 0
        for msg in reversed(request.messages):
            if type(msg).__name__ == "UserEntry":
                break
            done += type(msg).__name__ == "ToolResultEntry"
        if done < 3:
            return faux.reply("", tool_calls=[faux.call("step", {"i": done}, id=f"step{done}")])
        return faux.reply("done")

    model = FauxModel([decide] * ((n + WARMUP) * 4), context_window=10**9)

    async def main() -> None:
        store = PostgresStorage(dsn, f"bench-{os.getpid()}-{index}", lease_seconds=30)
        async with durable.open_harness(store, model=model, tools=[tool],
                                        settings=Settings(check_integrity=False)) as h:
            async def workflow(k: int) -> None:
                status = await (await h.conversation(f"wf{k}").submit("run the workflow")).wait()
                if not isinstance(status, durable.Answered):
                    raise RuntimeError(f"workflow {k}: {status}")
                model.requests.clear()

            for k in range(WARMUP):
                await workflow(-1 - k)
            # A backend reports its counters when it goes idle at most once a second, else ~10 s
            # later: make it report the warm-up now, so that it is not counted as timed work.
            await store.call_in_writer(lambda c: c.execute("SELECT pg_stat_force_next_flush()"))
            say("ready")
            await anyio.to_thread.run_sync(sys.stdin.readline)
            c0, t = store.commits, time.perf_counter()
            for k in range(n):
                await workflow(k)
            say(json.dumps({"wall": time.perf_counter() - t, "transactions": store.commits - c0}))

    anyio.run(main, backend="trio")


def child_dbos(url: str, index: int, n: int) -> None:
    import logging

    from dbos import DBOS

    logging.getLogger("dbos").setLevel(logging.WARNING)
    DBOS(config={"name": "durable-bench", "system_database_url": url, "log_level": "WARNING",
                 "executor_id": f"bench-{os.getpid()}-{index}"})

    @DBOS.step()
    def step(i: int) -> int:
        return i

    @DBOS.workflow()
    def workflow(k: int) -> int:
        return sum(step(i) for i in range(3))

    DBOS.launch()
    try:
        for k in range(WARMUP):
            workflow(-1 - k)
        from dbos._dbos import _get_dbos_instance

        _get_dbos_instance()._sys_db.engine.dispose()  # the pool's backends exit: their counters are reported
        say("ready")
        sys.stdin.readline()
        t = time.perf_counter()
        for k in range(n):
            assert workflow(k) == 3
        say(json.dumps({"wall": time.perf_counter() - t}))
    finally:
        DBOS.destroy()


# --------------------------------------------------------------------------- parent


def counters(dsn: str, dbname: str) -> tuple[int, int]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        x = conn.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = %s", (dbname,)).fetchone()
        w = conn.execute("SELECT wal_sync FROM pg_stat_wal").fetchone()
    return (int(x[0]) if x else 0), int(w[0])


def workflows(kind: str, dsn: str, target: str, dbname: str, procs: int, n: int, python: str) -> dict[str, float]:
    """One timed run of `procs` processes sharing `n` workflows; see the module docstring."""
    share = [n // procs + (i < n % procs) for i in range(procs)]
    children = []
    for i in range(procs):  # one after another: DBOS migrates its schema on its first launch
        p = subprocess.Popen([python, __file__, kind, target, str(i), str(share[i])], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, bufsize=1, cwd=str(ROOT),
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert p.stdout is not None
        line = p.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"{kind} child {i} did not start: {line!r}")
        children.append(p)
    time.sleep(1.2)  # every backend idle long enough to have flushed its counters
    x0, w0 = counters(dsn, dbname)
    t = time.perf_counter()
    for p in children:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outs: list[dict[str, Any]] = []
    for p in children:
        assert p.stdout is not None
        outs.append(json.loads([ln for ln in p.stdout.read().splitlines() if ln.startswith("{")][-1]))
        p.wait()
    wall = time.perf_counter() - t
    time.sleep(0.3)
    x1, w1 = counters(dsn, dbname)
    steps = 3 * n
    out = {"steps_per_s": steps / wall, "tx_per_step": (x1 - x0) / steps, "wal_per_step": (w1 - w0) / steps}
    if kind == "ours":  # the store's own count: write transactions (commits), reads not counted
        out["writes_per_step"] = sum(o["transactions"] for o in outs) / steps
    return out


def takeover(dsn: str, lease: float, tag: str) -> float:
    """Seconds from the SIGKILL of a host mid-tool to a worker's `taken` line."""
    env = {**os.environ, "PYTHONPATH": str(APP_DIR), "DURABLE_TEST_HANG": "1"}
    space = f"takeover-{tag}"
    worker = subprocess.Popen([sys.executable, "-m", "durable.cli", "worker", "--dsn", dsn, "--app",
                               "pg_worker_app:make_app", "--space-pattern", space, "--lease", str(lease),
                               "--poll", "0.1"], stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
    host = subprocess.Popen([sys.executable, str(APP_DIR / "pg_worker_app.py"), "host", dsn, space, str(lease)],
                            stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
    try:
        assert host.stdout is not None and worker.stdout is not None
        while not host.stdout.readline().startswith("tool started"):
            pass
        os.kill(host.pid, signal.SIGKILL)
        killed = time.monotonic()
        host.wait()
        while not worker.stdout.readline().startswith(f"taken {space}"):
            pass
        return time.monotonic() - killed
    finally:
        for p in (host, worker):
            if p.poll() is None:
                p.kill()
            p.wait()


if __name__ == "__main__":
    {"ours": child_ours, "dbos": child_dbos}[sys.argv[1]](sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
