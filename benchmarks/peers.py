"""Benchmark: a 3-step durable workflow in our harness, in DBOS Transact and in LangGraph, all on
SQLite with synchronous=FULL, back to back on this machine.

Run: `python benchmarks/peers.py [--workflows 300] [--concurrency 1,16]`.
Not a test: it prints a table of steps/s, the ratio of ours to each peer and whether the targets
(>= 5x DBOS, >= 3x LangGraph) are met, and writes `results/peers.json` and its section of
`results/results.md`.

The peers are installed by this script into its own virtual environment,
`benchmarks/.peers-venv` (`python -m venv` + `pip install dbos langgraph
langgraph-checkpoint-sqlite`), never into the project's; a peer that cannot be installed is
skipped with the reason. Every system runs in its own fresh subprocess (the peers with that
venv's python) which prints one JSON line that this script reads.

The work, in each system (steps do no I/O: they return a constant):

- ours, "3 sequential tool calls" (the headline): one submission on a conversation of its own;
  the model asks for one `step` tool call, gets its result, asks for the next, three times,
  then answers. This is the lowest level at which our harness runs user code as durable steps
  (a tool task's intent, start and result are committed; the generation's phases between the
  steps are committed too), one after another like the peers' steps. It does strictly more
  durable work than the peers: 4 model rounds besides the 3 steps.
- ours, "3 tool calls in one round": the model asks for the three calls in one message (they
  run concurrently), then answers. Fewer commits; shown for reference.
- DBOS Transact: `@DBOS.workflow()` calling three `@DBOS.step()`s, system database
  `sqlite:///...`. DBOS does not set a journal mode, so it runs SQLite's default (rollback
  journal DELETE, synchronous FULL); we also run it on a file preset to WAL (journal_mode is
  persistent), where DBOS's connections get WAL + synchronous FULL: the same durability as ours.
- LangGraph: a 3-node `StateGraph` (START -> a -> b -> c -> END) compiled with
  `SqliteSaver` (which sets WAL; synchronous stays SQLite's default FULL), invoked with
  `durability="sync"` (each checkpoint written before the next step starts).

Each child does 20 warm-up workflows, then `--workflows` measured ones; every system runs
`--rounds` times (default 3), the rounds interleaved, and the median run is reported; with concurrency C,
C workers (anyio tasks for ours, threads for the peers) each run their share one after another.
steps/s = 3 x workflows / wall time. The journal mode and synchronous level are read back from a
live connection of each system and printed.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

WARMUP = 20


# =========================================================================== children


def _ours(variant: str, n: int, conc: int) -> dict:
    import resource

    import anyio

    import durable
    from durable.models import FauxModel, faux

    async def step(args, api, ctx):
        return "ok"

    tool = durable.define_tool("step", "One workflow step", replay="safe", execute=step)

    def decide(request):
        """The workflow's next model step, decided from the request (stateless, so any number of
        workflows can run concurrently): the tool results since the last user input say how far
        the workflow is."""
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

    requests_per_workflow = 4 if variant == "sequential" else 2
    model = FauxModel([decide] * ((n + WARMUP) * requests_per_workflow), context_window=10**9)

    async def main() -> dict:
        path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-peers-"), "ours.sqlite")
        async with durable.open_harness(path, model=model, tools=[tool]) as h:

            async def workflow(k: int) -> None:
                sub = await h.conversation(f"wf{k}").submit("run the workflow")
                status = await sub.wait()
                if not isinstance(status, durable.Answered):
                    raise RuntimeError(f"workflow {k}: {status}")
                model.requests.clear()  # the faux model records requests; keep memory flat

            for k in range(WARMUP):
                await workflow(-1 - k)
            commits0 = h.storage.commits
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
            conn_mode = await h.storage.call_in_writer(
                lambda c: (c.execute("PRAGMA journal_mode").fetchone()[0], c.execute("PRAGMA synchronous").fetchone()[0]))
        return {"wall": wall, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
                "journal": conn_mode[0], "synchronous": _sync_name(conn_mode[1]),
                "transactions_per_workflow": txns / n}

    return anyio.run(main)


def _sync_name(v) -> str:
    return {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(int(v), str(v))


def _dbos(variant: str, n: int, conc: int) -> dict:
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
            sync = conn.execute(sa.text("PRAGMA synchronous")).scalar()
        for k in range(WARMUP):
            workflow(-1 - k)
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
    return {"wall": wall, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
            "journal": journal, "synchronous": _sync_name(sync)}


def _langgraph(variant: str, n: int, conc: int) -> dict:
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
    sync = conn.execute("PRAGMA synchronous").fetchone()[0]
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
    ckpts = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    return {"wall": wall, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
            "journal": journal, "synchronous": _sync_name(sync),
            "checkpoints_per_workflow": ckpts / (n + WARMUP)}


def child(system: str, variant: str, n: int, conc: int) -> None:
    import shutil

    fn = {"ours": _ours, "dbos": _dbos, "langgraph": _langgraph}[system]
    tempfile.tempdir = tempfile.mkdtemp(prefix="durable-bench-peers-")  # every file of this child goes here
    try:
        result = fn(variant, n, conc)
    finally:
        shutil.rmtree(tempfile.tempdir, ignore_errors=True)
    result.update(system=system, variant=variant, workflows=n, concurrency=conc,
                  steps_per_s=3 * n / result["wall"], workflows_per_s=n / result["wall"])
    print(json.dumps(result))


# =========================================================================== parent


SYSTEMS = [
    ("ours", "sequential", "ours: 3 sequential tool calls"),
    ("ours", "one_round", "ours: 3 tool calls in one round"),
    ("dbos", "wal", "DBOS Transact (WAL preset)"),
    ("dbos", "default", "DBOS Transact (its default: journal DELETE)"),
    ("langgraph", "sync", "LangGraph + SqliteSaver, durability=sync"),
]


def main(argv: list[str]) -> None:
    import argparse

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common as c

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workflows", type=int, default=300)
    p.add_argument("--concurrency", default="1,16", help="comma-separated worker counts")
    p.add_argument("--rounds", type=int, default=3, help="runs of every system (interleaved); medians are reported")
    args = p.parse_args(argv)
    concs = [int(x) for x in args.concurrency.split(",") if x.strip()]

    print(f"peers: {c.machine_line()}")
    print(f"peers are installed into {c.PEERS_VENV} (never project dependencies) ...", flush=True)
    py, status = c.peers_python("dbos", "langgraph")
    versions = {}
    if py:
        versions = {"dbos": c.peer_version(py, "dbos"), "langgraph": c.peer_version(py, "langgraph"),
                    "langgraph-checkpoint-sqlite": c.peer_version(py, "langgraph-checkpoint-sqlite")}
    for peer, s in status.items():
        print(f"  {peer}: {s}" + (f" ({versions.get(peer)})" if s == "ok" else " -> skipped"))
    me = os.path.abspath(__file__)
    runs: dict[tuple, list[dict]] = {}
    for rnd in range(args.rounds):  # interleaved rounds: drift in the machine's load hits every system alike
        for conc in concs:
            for system, variant, label in SYSTEMS:
                if system != "ours" and status.get(system) != "ok":
                    continue
                exe = sys.executable if system == "ours" else py
                try:
                    r = c.run_child([me, "--child", system, variant, str(args.workflows), str(conc)], python=exe,
                                    timeout=900)
                except Exception as exc:  # noqa: BLE001 - a peer failing here is reported, not fatal
                    print(f"    {label}, concurrency {conc}: failed: {str(exc)[:800]}")
                    continue
                r["label"] = label
                runs.setdefault((system, variant, conc), []).append(r)
                print(f"  round {rnd + 1}/{args.rounds}, concurrency {conc:>2}: {label}: {r['steps_per_s']:.0f} steps/s "
                      f"({r['journal']}, synchronous={r['synchronous']})", flush=True)
    results: list[dict] = []
    for key, rs in runs.items():
        rs = sorted(rs, key=lambda r: r["steps_per_s"])
        med = dict(rs[len(rs) // 2])  # the median run (by steps/s)
        med["rounds"] = [r["steps_per_s"] for r in rs]
        results.append(med)

    out = ["### A 3-step durable workflow: ours against DBOS Transact and LangGraph (SQLite)\n"]
    targets = []
    for conc in concs:
        rows = [r for r in results if r["concurrency"] == conc]
        ours = next((r for r in rows if r["system"] == "ours" and r["variant"] == "sequential"), None)
        body = []
        for r in rows:
            ratio = f"{ours['steps_per_s'] / r['steps_per_s']:.2f}x" if ours and r is not ours else "-"
            extra = ""
            if "transactions_per_workflow" in r:
                extra = f"{r['transactions_per_workflow']:.1f} transactions/workflow"
            if "checkpoints_per_workflow" in r:
                extra = f"{r['checkpoints_per_workflow']:.1f} checkpoints/workflow"
            body.append([r["label"], f"{r['journal']} / {r['synchronous']}", f"{r['steps_per_s']:.0f}",
                         f"{1000 * r['wall'] / r['workflows']:.2f} ms", f"{r['cpu'] / r['wall']:.2f}", ratio, extra,
                         " / ".join(f"{x:.0f}" for x in r["rounds"])])
        out.append(f"Concurrency {conc} ({args.workflows} workflows after {WARMUP} warm-up; median of "
                   f"{args.rounds} interleaved runs, the runs' steps/s in the last column):\n")
        out.append(c.table(["system", "journal / synchronous", "steps/s", "wall / workflows",
                            "CPU cores busy", "ours (sequential) vs it", "notes", "runs (steps/s)"], body))
        out.append("")
        if ours:
            for r in rows:
                if r["system"] == "dbos" and r["variant"] == "wal":
                    ratio = ours["steps_per_s"] / r["steps_per_s"]
                    targets.append((f">= 5x DBOS (WAL, FULL), concurrency {conc}", f"{ratio:.2f}x", ratio >= 5))
                if r["system"] == "langgraph":
                    ratio = ours["steps_per_s"] / r["steps_per_s"]
                    targets.append((f">= 3x LangGraph (WAL, FULL), concurrency {conc}", f"{ratio:.2f}x", ratio >= 3))
    if targets:
        out.append(c.table(["target (equal durability: WAL + synchronous=FULL)", "measured", "result"],
                           [(a, b, c.verdict(ok)) for a, b, ok in targets]))
        out.append("")
    skipped = [f"{p} ({s})" for p, s in status.items() if s != "ok"]
    out.append(f"Peers: {', '.join(f'{k} {v}' for k, v in versions.items()) or 'none'}"
               + (f"; skipped: {', '.join(skipped)}" if skipped else "")
               + f". Installed into benchmarks/.peers-venv by this script. Steps do no I/O. "
               "\"CPU cores busy\" is process CPU time (all threads) / wall time.")
    md = "\n".join(out)
    print()
    print(md)
    c.save("peers", {"workflows": args.workflows, "rounds": args.rounds, "warmup": WARMUP, "concurrency": concs, "versions": versions,
                     "status": status, "results": results,
                     "targets": [{"target": a, "measured": b, "met": ok} for a, b, ok in targets]}, md)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        main(sys.argv[1:])
