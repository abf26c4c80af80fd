"""Benchmark: a 3-step durable workflow in our harness, in DBOS Transact, in LangGraph, in pydantic-ai
(plain and on DBOS) and in the OpenAI Agents SDK (with its SQLite session), all on SQLite, back to
back on this machine.

Run: `python benchmarks/peers.py [--workflows 300] [--concurrency 1,16] [--rounds 5]
[--ours-sync default,FULL]`.
Not a test: it prints a table of steps/s (medians with min-max over interleaved rounds), fsyncs
and transactions per workflow, the ratio of ours to each peer and whether issue 29's targets are
met (ours with the library's default synchronous level: >= 2.5x DBOS-WAL and LangGraph at
concurrency 1, >= 6x at 16; >= 15x pydantic-ai on DBOS; >= 5x the OpenAI Agents SDK session; ours
>= 1,000 steps/s at 1 and >= 2,500 at 16, the engine alone >= 3,000), and writes `results/peers.json` and its
section of `results/results.md`.

Ours runs with each level of `--ours-sync`: "default" is the library's default (external
synchrony, "EXTERNAL", once it lands: barrier commits at FULL, the others at NORMAL), and FULL
(every commit fsynced) for reference. A level that `SQLiteStorage` does not accept on the code
being measured is detected and not run (before "EXTERNAL" lands, ours runs with FULL only, which
is then the default too). The targets are measured with the first level.

fsyncs per workflow are counted with `strace -f -c -e trace=fsync,fdatasync` (every thread of the
child process): each system runs twice more, with `--count-workflows` (40 and 120) workflows,
and the difference of the counts divided by the difference of workflows is the figure (process
start, warm-up and close cancel out). Without a working strace the column shows "-" and says why.
Transactions per workflow: ours `SQLiteStorage.commits` (a group commit counts once); DBOS and
LangGraph the COMMIT statements seen by a `sqlite3` trace callback on their connections,
installed only in those counting runs (a callback per statement costs time).

The peers are installed by this script into its own virtual environment,
`benchmarks/.peers-venv` (`python -m venv` + `pip install dbos langgraph
langgraph-checkpoint-sqlite pydantic-ai-slim[dbos] openai-agents`), never into the project's; a
peer that cannot be installed is skipped with the reason. Every system runs in its own fresh subprocess (the peers
with that venv's python) which prints one JSON line that this script reads.

The work, in each system (steps do no I/O: they return a constant):

- ours, "3 sequential tool calls" (the headline): one submission on a conversation of its own;
  the model asks for one `step` tool call, gets its result, asks for the next, three times,
  then answers. This is the lowest level at which our harness runs user code as durable steps
  (a tool task's intent, start and result are committed; the generation's phases between the
  steps are committed too), one after another like the peers' steps. It does strictly more
  durable work than the peers: 4 model rounds besides the 3 steps.
- ours, "3 tool calls in one round": the model asks for the three calls in one message (they
  run concurrently), then answers. Fewer commits; shown for reference.
- ours, "engine alone": the sequential workflow on `MemoryStorage` (no file, no writer thread,
  nothing durable): not a competitor, the ceiling of this engine's own work on this machine,
  printed beside what the targets ask for.
- DBOS Transact: `@DBOS.workflow()` calling three `@DBOS.step()`s, system database
  `sqlite:///...`. DBOS does not set a journal mode, so it runs SQLite's default (rollback
  journal DELETE, synchronous FULL); we also run it on a file preset to WAL (journal_mode is
  persistent), where DBOS's connections get WAL + synchronous FULL: the durability of ours at FULL.
- pydantic-ai and the OpenAI Agents SDK: see `_peers_agents.py` (their own fake models; the same
  model-decides-each-step workload as ours).
- LangGraph: a 3-node `StateGraph` (START -> a -> b -> c -> END) compiled with
  `SqliteSaver` (which sets WAL; synchronous stays SQLite's default FULL), invoked with
  `durability="sync"` (each checkpoint written before the next step starts).

Ours runs on trio (the library's primary backend) unless `--backend asyncio` is given.
Each child does 20 warm-up workflows, then `--workflows` measured ones; every system runs
`--rounds` times (default 5), the rounds interleaved, and the median with min-max is reported; with concurrency C,
C workers (anyio tasks for ours, threads for the peers) each run their share one after another.
steps/s = 3 x workflows / wall time. The journal mode and synchronous level are read back from a
live connection of each system and printed.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
import time

WARMUP = 20
BACKEND_ENV = "DURABLE_BENCH_BACKEND"  # the event loop ours runs on in the children (--backend)


# =========================================================================== children


def decide_step(variant: str, request):
    """Ours: the workflow's next model step, decided from the request (stateless, so any number of
    workflows can run concurrently): the tool results since the last user input say how far the
    workflow is."""
    from durable.models import faux

    done = 0
    for msg in reversed(request.messages):
        if getattr(msg, "submission_id", None) is not None or type(msg).__name__ == "UserEntry":
            break
        done += type(msg).__name__ == "ToolResultEntry"
    if variant == "sequential" and done < 3:
        return faux.reply("", tool_calls=[faux.call("step", {"i": done}, id=f"step{done}")])
    if variant == "one_round" and done == 0:
        return faux.reply("", tool_calls=[faux.call("step", {"i": i}, id=f"step{i}") for i in range(3)])
    return faux.reply("done")


def _ours(variant: str, n: int, conc: int, sync: str = "default", count: bool = False) -> dict:
    import resource

    import anyio

    import durable
    from durable.models import FauxModel

    async def step(args, api, ctx):
        return "ok"

    tool = durable.define_tool("step", "One workflow step", replay="safe", execute=step)
    decide = functools.partial(decide_step, variant)
    requests_per_workflow = 4 if variant == "sequential" else 2
    model = FauxModel([decide] * ((n + WARMUP) * requests_per_workflow), context_window=10**9)

    async def main() -> dict:
        path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-peers-"), "ours.sqlite")
        level = {} if sync in ("default", MEMORY) else {"synchronous": sync}  # default: the library's own
        store = durable.MemoryStorage() if sync == MEMORY else path
        async with durable.open_harness(store, model=model, tools=[tool], **level) as h:

            async def workflow(k: int) -> None:
                sub = await h.conversation(f"wf{k}").submit("run the workflow")
                status = await sub.wait()
                if not isinstance(status, durable.Answered):
                    raise RuntimeError(f"workflow {k}: {status}")
                model.requests.clear()  # the faux model records requests; keep memory flat

            for k in range(WARMUP):
                await workflow(-1 - k)
            commits0 = h.storage.commits
            barriers0 = getattr(h.storage, "barriers", 0)  # fsynced commits (SQLiteStorage counts them)
            r0 = resource.getrusage(resource.RUSAGE_SELF)
            t = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for w in range(conc):
                    async def worker(w: int = w) -> None:
                        for k in range(w, n, conc):
                            await workflow(k)
                    tg.start_soon(worker)
            wall = time.perf_counter() - t
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            txns = h.storage.commits - commits0
            barriers = getattr(h.storage, "barriers", 0) - barriers0
            if sync == MEMORY:
                conn_mode, store_level = ("none (MemoryStorage)", "-"), "nothing durable"
            else:
                conn_mode = await h.storage.call_in_writer(lambda c: (
                    c.execute("PRAGMA journal_mode").fetchone()[0], c.execute("PRAGMA synchronous").fetchone()[0]))
                store_level = getattr(h.storage, "synchronous", "?")
        return {"wall": wall, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
                "journal": conn_mode[0],
                "synchronous": store_level if sync == MEMORY
                else f"{store_level} (connection: {_sync_name(conn_mode[1])})",
                "transactions_per_workflow": txns / n, "barriers_per_workflow": barriers / n}

    return anyio.run(main, backend=os.environ.get(BACKEND_ENV, "trio"))


MEMORY = "memory"  # ours on MemoryStorage: the engine alone (no file, no writer thread), a ceiling for reference


def _sync_name(v) -> str:
    return {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(int(v), str(v))


def _dbos(variant: str, n: int, conc: int, sync: str = "default", count: bool = False) -> dict:
    import logging
    import resource
    import sqlite3
    from concurrent.futures import ThreadPoolExecutor

    path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-dbos-"), "dbos.sqlite")
    if variant == "wal":
        c = sqlite3.connect(path)
        c.execute("PRAGMA journal_mode=WAL")
        c.close()
    from dbos import DBOS

    logging.getLogger("dbos").setLevel(logging.WARNING)
    DBOS(config={"name": "durable-bench", "system_database_url": f"sqlite:///{path}", "log_level": "WARNING",
                 "sys_db_pool_size": max(20, conc + 4)})

    @DBOS.step()
    def step(i: int) -> int:
        return i

    @DBOS.workflow()
    def workflow(k: int) -> int:
        total = 0
        for i in range(3):
            total += step(i)
        return total

    DBOS.launch()
    try:
        import sqlalchemy as sa
        from dbos._dbos import _get_dbos_instance

        with _get_dbos_instance()._sys_db.engine.connect() as conn:
            journal = conn.execute(sa.text("PRAGMA journal_mode")).scalar()
            sync_level = conn.execute(sa.text("PRAGMA synchronous")).scalar()
        for k in range(WARMUP):
            workflow(-1 - k)
        commits: list[int] = []
        if count:  # only in the counting runs: a trace callback on every statement costs time
            engine = _get_dbos_instance()._sys_db.engine

            def on_checkout(dbapi_conn, record, proxy) -> None:
                dbapi_conn.set_trace_callback(lambda sql: sql.startswith("COMMIT") and commits.append(1))

            sa.event.listen(engine, "checkout", on_checkout)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t = time.perf_counter()
        if conc <= 1:
            for k in range(n):
                assert workflow(k) == 3
        else:
            with ThreadPoolExecutor(conc) as pool:
                def worker(w: int) -> None:
                    for k in range(w, n, conc):
                        assert workflow(k) == 3
                list(pool.map(worker, range(conc)))
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        DBOS.destroy()
    out = {"wall": wall, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
           "journal": journal, "synchronous": _sync_name(sync_level)}
    if count:
        out["transactions_per_workflow"] = len(commits) / n
    return out


def _langgraph(variant: str, n: int, conc: int, sync: str = "default", count: bool = False) -> dict:
    import resource
    import sqlite3
    from concurrent.futures import ThreadPoolExecutor
    from typing import TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        n: int

    def node(state: State) -> dict:
        return {"n": state["n"] + 1}

    g = StateGraph(State)
    for name in "abc":
        g.add_node(name, node)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-langgraph-"), "langgraph.sqlite")
    conn = sqlite3.connect(path, check_same_thread=False)
    graph = g.compile(checkpointer=SqliteSaver(conn))

    def run(k: int) -> None:
        out = graph.invoke({"n": 0}, {"configurable": {"thread_id": f"wf{k}"}}, durability="sync")
        assert out["n"] == 3

    for k in range(WARMUP):
        run(-1 - k)
    journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    sync_level = conn.execute("PRAGMA synchronous").fetchone()[0]
    commits: list[int] = []
    if count:  # only in the counting runs: a trace callback on every statement costs time
        conn.set_trace_callback(lambda sql: sql.startswith("COMMIT") and commits.append(1))
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    if conc <= 1:
        for k in range(n):
            run(k)
    else:
        with ThreadPoolExecutor(conc) as pool:
            def worker(w: int) -> None:
                for k in range(w, n, conc):
                    run(k)
            list(pool.map(worker, range(conc)))
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    conn.set_trace_callback(None)
    ckpts = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    out = {"wall": wall, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
           "journal": journal, "synchronous": _sync_name(sync_level),
           "checkpoints_per_workflow": ckpts / (n + WARMUP)}
    if count:
        out["transactions_per_workflow"] = len(commits) / n
    return out


def child(system: str, variant: str, n: int, conc: int, sync: str = "default", count: bool = False) -> None:
    import shutil

    import _peers_agents

    def agents(fn):  # the agent frameworks' children take the warm-up, not the sync level and counting
        return lambda variant, n, conc, sync, count: fn(variant, n, conc, WARMUP)

    fn = {"ours": _ours, "dbos": _dbos, "langgraph": _langgraph, "pydantic_ai": agents(_peers_agents.pydantic_ai),
          "openai_agents": agents(_peers_agents.openai_agents)}[system]
    tempfile.tempdir = tempfile.mkdtemp(prefix="durable-bench-peers-")  # every file of this child goes here
    try:
        result = fn(variant, n, conc, sync, count)
    finally:
        shutil.rmtree(tempfile.tempdir, ignore_errors=True)
    result.update(system=system, variant=variant, sync=sync, workflows=n, concurrency=conc,
                  steps_per_s=3 * n / result["wall"], workflows_per_s=n / result["wall"])
    print(json.dumps(result))


# =========================================================================== parent


PEERS = [
    ("dbos", "wal", "DBOS Transact (WAL preset)"),
    ("dbos", "default", "DBOS Transact (its default: journal DELETE)"),
    ("langgraph", "sync", "LangGraph + SqliteSaver, durability=sync"),
    ("pydantic_ai", "plain", "pydantic-ai's agent loop, nothing durable (FunctionModel)"),
    ("pydantic_ai", "dbos", "pydantic-ai on DBOS (DBOSDurability; the step tool a DBOS step)"),
    ("openai_agents", "sqlite", "OpenAI Agents SDK + SQLiteSession (scripted Model)"),
]
# (system, variant) -> (name, ratio ours / it asked at concurrency 1, at 16): issue 29's targets.
RATIO_TARGETS = {("dbos", "wal"): ("DBOS (WAL)", 2.5, 6), ("langgraph", "sync"): ("LangGraph", 2.5, 6),
                 ("pydantic_ai", "dbos"): ("pydantic-ai on DBOS", 15, 15),
                 ("openai_agents", "sqlite"): ("OpenAI Agents SDK session", 5, 5)}
OURS_VARIANTS = {"sequential": "3 sequential tool calls", "one_round": "3 tool calls in one round"}


def ours_levels(wanted: list[str]) -> tuple[str, list[str], list[str]]:
    """(the library's default level, the levels to run ours with, notes). A level SQLiteStorage does
    not accept on this code (e.g. "EXTERNAL" before external synchrony lands) is skipped, and a level
    equal to the default is run once, as the default."""
    import inspect
    import shutil

    from durable import open_harness
    from durable.storage import SQLiteStorage

    probe_dir = tempfile.mkdtemp(prefix="durable-bench-probe-")
    probe = os.path.join(probe_dir, "probe.sqlite")
    try:
        default = inspect.signature(open_harness).parameters.get("synchronous")
        default_level = default.default if default is not None and isinstance(default.default, str) else \
            SQLiteStorage(probe).synchronous

        def accepted(level: str) -> bool:
            try:
                SQLiteStorage(probe, synchronous=level)  # type: ignore[arg-type]
            except ValueError:
                return False
            return True

        levels: list[str] = []
        notes: list[str] = []
        for w in wanted:
            resolved = default_level if w == "default" else w.upper()
            if not accepted(resolved):
                notes.append(f"synchronous={resolved} is not accepted by SQLiteStorage on this code: not run")
                continue
            if any((default_level if x == "default" else x) == resolved for x in levels):
                notes.append(f"synchronous={resolved} is the default here: run once")
                continue
            levels.append("default" if w == "default" else resolved)
        if not levels:
            levels = ["FULL"]
        return default_level, levels, notes
    finally:
        shutil.rmtree(probe_dir, ignore_errors=True)


def _strace_count(c, argv: list[str], python: str) -> tuple[dict, int]:
    """Run a child under `strace -f -c -e trace=fsync,fdatasync` (all threads); return its JSON
    line and the number of fsync + fdatasync calls it made."""
    import subprocess

    out = os.path.join(tempfile.mkdtemp(prefix="durable-bench-strace-"), "strace.txt")
    cmd = ["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "--seccomp-bpf", "-o", out, python, *argv]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=c.child_env(), cwd=str(c.ROOT))
    if proc.returncode != 0:
        raise RuntimeError(f"strace child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    result = json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])
    calls = 0
    with open(out) as f:
        for line in f:
            parts = line.split()
            if parts and parts[-1] in ("fsync", "fdatasync"):
                calls += int(parts[3])  # % time, seconds, usecs/call, calls, [errors], syscall
    return result, calls


def _strace_works() -> str | None:
    import shutil
    import subprocess

    if shutil.which("strace") is None:
        return "strace is not installed"
    proc = subprocess.run(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "--seccomp-bpf", "-o", os.devnull,
                           sys.executable, "-c", "pass"], capture_output=True, text=True)
    return None if proc.returncode == 0 else f"strace cannot trace here: {proc.stderr.strip()[-300:]}"


def main(argv: list[str]) -> None:
    import argparse
    import statistics

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common as c

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workflows", type=int, default=300)
    p.add_argument("--concurrency", default="1,16", help="comma-separated worker counts")
    p.add_argument("--rounds", type=int, default=5, help="runs of every system, interleaved (>= 5 for the figures; "
                   "fewer for a quick run); medians with min-max are reported")
    p.add_argument("--ours-sync", default="default,FULL",
                   help="synchronous levels to run ours with: 'default' (the library's), FULL, EXTERNAL, NORMAL; "
                   "the first is the one the targets are measured with")
    p.add_argument("--count-workflows", default="40,120",
                   help="fsyncs are counted under strace in two extra runs of each system with these workflow "
                   "counts; the difference divided by the difference of workflows is the count per workflow")
    p.add_argument("--no-count", action="store_true", help="skip the fsync / transaction counting runs")
    p.add_argument("--backend", default="trio", choices=["trio", "asyncio"],
                   help="the event loop ours runs on (default trio, the library's primary backend)")
    args = p.parse_args(argv)
    os.environ[BACKEND_ENV] = args.backend  # read by the children (their environment is ours)
    concs = [int(x) for x in args.concurrency.split(",") if x.strip()]
    default_level, levels, level_notes = ours_levels([x.strip() for x in args.ours_sync.split(",") if x.strip()])

    print(f"peers: {c.machine_line()}")
    print(f"ours: on {args.backend}; the library's default synchronous level is {default_level}; running ours with "
          f"{', '.join(lv if lv != 'default' else f'the default ({default_level})' for lv in levels)}"
          + (f" ({'; '.join(level_notes)})" if level_notes else ""))
    print(f"peers are installed into {c.PEERS_VENV} (never project dependencies) ...", flush=True)
    py, status = c.peers_python("dbos", "langgraph", "pydantic_ai", "openai_agents")
    versions = {}
    if py:
        versions = {d: c.peer_version(py, d) for d in ("dbos", "langgraph", "langgraph-checkpoint-sqlite",
                                                      "pydantic-ai-slim", "openai-agents")}
    for peer, s in status.items():
        print(f"  {peer}: {s}" + (f" ({versions.get(peer)})" if s == "ok" else " -> skipped"))

    def level_label(lv: str) -> str:
        return f"default, {default_level}" if lv == "default" else lv

    systems: list[tuple[str, str, str, str]] = []  # (system, variant, sync, label)
    for lv in levels:
        systems.append(("ours", "sequential", lv, f"ours ({level_label(lv)}): {OURS_VARIANTS['sequential']}"))
    systems.append(("ours", "one_round", levels[0], f"ours ({level_label(levels[0])}): {OURS_VARIANTS['one_round']}"))
    systems.append(("ours", "sequential", MEMORY, f"ours, engine alone (MemoryStorage, nothing durable): "
                    f"{OURS_VARIANTS['sequential']}"))
    systems += [(sy, var, "default", label) for sy, var, label in PEERS if status.get(sy) == "ok"]

    me = os.path.abspath(__file__)
    runs: dict[tuple, list[dict]] = {}
    for rnd in range(args.rounds):  # interleaved rounds: drift in the machine's load hits every system alike
        for conc in concs:
            for system, variant, sync, label in systems:
                exe = sys.executable if system == "ours" else py
                assert exe is not None
                try:
                    r = c.run_child([me, "--child", system, variant, str(args.workflows), str(conc), sync],
                                    python=exe, timeout=900)
                except Exception as exc:  # noqa: BLE001 - a peer failing here is reported, not fatal
                    print(f"    {label}, concurrency {conc}: failed: {str(exc)[:800]}")
                    continue
                r["label"] = label
                runs.setdefault((system, variant, sync, conc), []).append(r)
                print(f"  round {rnd + 1}/{args.rounds}, concurrency {conc:>2}: {label}: "
                      f"{r['steps_per_s']:.0f} steps/s "
                      f"({r['journal']}, synchronous={r['synchronous']})", flush=True)

    # fsyncs and transactions per workflow: two extra runs of each system under strace, differenced
    # (the setup, the warm-up and the close cancel out).
    counts: dict[tuple, dict] = {}
    count_note = ""
    if not args.no_count:
        why = _strace_works()
        n1, n2 = (int(x) for x in args.count_workflows.split(","))
        if why is not None:
            count_note = f"fsyncs not counted: {why}."
            print(count_note)
        for conc in concs:
            for system, variant, sync, label in systems:
                exe = sys.executable if system == "ours" else py
                assert exe is not None
                argv1 = [me, "--child", system, variant, str(n1), str(conc), sync, "count"]
                argv2 = [me, "--child", system, variant, str(n2), str(conc), sync, "count"]
                try:
                    if why is None:
                        _, f1 = _strace_count(c, argv1, exe)
                        r2, f2 = _strace_count(c, argv2, exe)
                        fsyncs: float | None = (f2 - f1) / (n2 - n1)
                    else:
                        r2, fsyncs = c.run_child(argv2, python=exe), None
                except Exception as exc:  # noqa: BLE001
                    print(f"    counting {label}, concurrency {conc}: failed: {str(exc)[:500]}")
                    continue
                counts[(system, variant, sync, conc)] = {
                    "fsyncs_per_workflow": fsyncs, "transactions_per_workflow": r2.get("transactions_per_workflow")}
                print(f"  counted, concurrency {conc:>2}: {label}: "
                      f"{'-' if fsyncs is None else f'{fsyncs:.2f}'} fsyncs/workflow, "
                      f"{r2.get('transactions_per_workflow', float('nan')):.2f} transactions/workflow", flush=True)

    results: list[dict] = []
    for key, rs in runs.items():
        xs = [r["steps_per_s"] for r in rs]
        med = dict(sorted(rs, key=lambda r: r["steps_per_s"])[len(rs) // 2])
        med.update(rounds=xs, steps_median=statistics.median(xs), steps_min=min(xs), steps_max=max(xs),
                   wall_per_workflow=statistics.median(r["wall"] / r["workflows"] for r in rs),
                   cpu_busy=statistics.median(r["cpu"] / r["wall"] for r in rs), **counts.get(key, {}))
        results.append(med)

    def fmt(x: float | None, f: str = ".2f") -> str:
        return "-" if x is None else format(x, f)

    out = ["### A 3-step durable workflow: ours against DBOS Transact, LangGraph, pydantic-ai and the OpenAI "
           "Agents SDK (SQLite)\n"]
    targets = []
    for conc in concs:
        rows = [r for r in results if r["concurrency"] == conc]
        ours = next((r for r in rows if r["system"] == "ours" and r["variant"] == "sequential"
                     and r["sync"] == levels[0]), None)
        body = []
        for r in rows:
            ratio = f"{ours['steps_median'] / r['steps_median']:.2f}x" if ours and r is not ours else "-"
            body.append([r["label"], f"{r['journal']} / {r['synchronous']}",
                         f"{r['steps_median']:.0f} ({r['steps_min']:.0f}-{r['steps_max']:.0f})",
                         f"{1000 * r['wall_per_workflow']:.2f} ms", f"{r['cpu_busy']:.2f}", ratio,
                         fmt(r.get("fsyncs_per_workflow")), fmt(r.get("transactions_per_workflow")),
                         fmt(r.get("checkpoints_per_workflow"), ".1f")])
        out.append(f"Concurrency {conc} ({args.workflows} workflows after {WARMUP} warm-up; steps/s: median "
                   f"(min-max) of {args.rounds} interleaved runs):\n")
        out.append(c.table(["system", "journal / synchronous", "steps/s", "wall / workflow", "CPU cores busy",
                            f"ours ({level_label(levels[0])}, sequential) vs it", "fsyncs / workflow",
                            "transactions / workflow", "checkpoints / workflow"], body))
        out.append("")
        if ours:
            for r in rows:
                want = RATIO_TARGETS.get((r["system"], r["variant"]))
                if want is not None:
                    name, need = want[0], want[1] if conc <= 1 else want[2]
                    ratios = [a / b for a, b in zip(ours["rounds"], r["rounds"], strict=False)]
                    ratio = ours["steps_median"] / r["steps_median"]
                    targets.append((f"ours ({level_label(levels[0])}) / {name} >= {need:g}x, concurrency {conc}",
                                    f"{ratio:.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f})", ratio >= need))
            alone = next((r for r in rows if r["sync"] == MEMORY), None)
            need = 1000 if conc <= 1 else 2500
            targets.append((f"ours ({level_label(levels[0])}) >= {need} steps/s, concurrency {conc}",
                            f"{ours['steps_median']:.0f} ({ours['steps_min']:.0f}-{ours['steps_max']:.0f})"
                            + (f"; {ours['steps_median'] / alone['steps_median']:.2f} of the engine alone"
                               if alone else ""), ours["steps_median"] >= need))
            if alone and conc <= 1:
                targets.append(("the engine alone (MemoryStorage) >= 3000 steps/s, concurrency 1",
                                f"{alone['steps_median']:.0f} ({alone['steps_min']:.0f}-{alone['steps_max']:.0f})",
                                alone["steps_median"] >= 3000))
    if targets:
        out.append(c.table(["target", "measured (ratio of medians; per-round ratios)", "result"],
                           [(a, b, c.verdict(ok)) for a, b, ok in targets]))
        out.append("")
    for conc in concs:  # the ceiling: what the engine does with no storage at all, against what the targets ask
        alone = next((r for r in results if r["concurrency"] == conc and r["sync"] == MEMORY), None)
        asked = [(r["label"], RATIO_TARGETS[(r["system"], r["variant"])][1 if conc <= 1 else 2] * r["steps_median"])
                 for r in results if r["concurrency"] == conc and (r["system"], r["variant"]) in RATIO_TARGETS]
        if alone and asked:
            out.append(f"Concurrency {conc}: the engine alone on MemoryStorage (no file, no writer thread, nothing "
                       f"durable) runs {alone['steps_median']:.0f} steps/s; the targets ask for "
                       + ", ".join(f"{need:.0f} ({label.split(' (')[0].split(' +')[0]})" for label, need in asked)
                       + " with everything durable.")
    out.append("")
    skipped = [f"{p} ({s})" for p, s in status.items() if s != "ok"]
    out.append(f"Peers: {', '.join(f'{k} {v}' for k, v in versions.items()) or 'none'}"
               + (f"; skipped: {', '.join(skipped)}" if skipped else "")
               + ". Installed into benchmarks/.peers-venv by this script. Steps do no I/O. "
               "\"CPU cores busy\" is process CPU time (all threads) / wall time. "
               + ("fsyncs / workflow: fsync + fdatasync calls of the whole process (all threads) counted by "
                  f"`strace -f -c`, in two extra runs of {args.count_workflows.replace(',', ' and ')} workflows, "
                  "differenced and divided by the difference (setup, warm-up and close cancel out). "
                  if not count_note else count_note + " ")
               + "transactions / workflow: ours `SQLiteStorage.commits` (a group commit counts once); the peers "
               "COMMIT statements seen by a sqlite3 trace callback (counting runs only). "
               + (f"Ours: {'; '.join(level_notes)}." if level_notes else ""))
    md = "\n".join(out)
    print()
    print(md)
    c.save("peers", {"workflows": args.workflows, "rounds": args.rounds, "warmup": WARMUP, "concurrency": concs,
                     "versions": versions, "status": status, "ours_default_synchronous": default_level,
                     "ours_levels": levels, "results": results,
                     "targets": [{"target": a, "measured": b, "met": ok} for a, b, ok in targets]}, md)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
              sys.argv[6] if len(sys.argv) > 6 else "default", len(sys.argv) > 7 and sys.argv[7] == "count")
    else:
        main(sys.argv[1:])
