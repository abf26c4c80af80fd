"""Benchmark: the engine's own work per step, before and after, in one interleaved run.

Run: `python benchmarks/engine.py [--before main] [--workflows 300] [--rounds 5] [--profile CASE]`.
Not a test: it prints steps/s (medians with min-max over interleaved rounds) and CPU time per step
(user + system, every thread of the child) for the 3-step tool workflow of `peers.py` ("ours")
(the model asks for one `step` tool call, gets its result, three times, then answers) in three
cases: the engine alone (`MemoryStorage`, nothing durable), ours durable on SQLite one workflow
at a time, and 16 at a time. Each case runs on this checkout ("now") and on the code of the git
ref `--before` ("before", exported with `git archive` into a temp dir), each in a fresh child
process, the two taking turns within every round (the first one alternating between rounds);
the ratio now / before is computed per round and its median with min-max printed: on a loaded
machine the ratio of interleaved rounds and the CPU time are the figures to trust, not the wall.

`--profile CASE` (memory, sqlite1, sqlite16) runs that case once on this checkout under cProfile
and prints the top functions by own and cumulative time (harness open and warm-up included), of
the event loop's thread, then of the writer thread (a profile of its own: cProfile sees one
thread). Own time of a call that releases the GIL (an fsync, `SimpleQueue.get`, the wake's
`os.write`) is wall time, waits for the GIL included, not CPU.
Targets (issue 29): engine alone >= 3,000 steps/s; durable >= 1,000 one at a time, >= 2,500 at 16.

Each round also times the disk's limit in this process: raw `sqlite3` (WAL, synchronous=FULL)
committing one changed row 200 times, one transaction each: a durable step needs at least one such
fsynced commit before its request is sent, so one at a time no engine can beat 1 / that time. The
durable cases are printed as ratios to the engine alone (what durability costs) and to that limit,
and one at a time against two bounds made of the run's own counts (`floors`): the workflow's
commits (its fsynced ones and the others, counted by the store) on raw sqlite3 alone, and those
added to the engine alone's work a step.
`--save` writes the run to benchmarks/results/ (engine.json and its section of results.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CASES = {"memory": ("memory", 1), "sqlite1": ("sqlite", 1), "sqlite16": ("sqlite", 16)}
LABELS = {"memory": "engine alone (MemoryStorage)", "sqlite1": "durable SQLite, 1 at a time",
          "sqlite16": "durable SQLite, 16 at a time"}
TARGETS = {"memory": 3000, "sqlite1": 1000, "sqlite16": 2500}


def child(case: str, n: int, profile: bool = False) -> dict:
    """One case on the code this process imports: `peers.py`'s "ours" child, sequential variant."""
    import peers

    store_kind, conc = CASES[case]
    sync = peers.MEMORY if store_kind == "memory" else "default"
    if not profile:
        out = peers._ours("sequential", n, conc, sync)
    else:
        import cProfile
        import pstats

        from durable.storage import writer

        # cProfile sees one thread: the writer thread (encoding, SQL, fsync, waking the loop)
        # gets a profile of its own, printed after the event loop's.
        threads: list[cProfile.Profile] = []
        run = writer.WriterThread._run

        def profiled(self: writer.WriterThread) -> None:  # type: ignore[type-arg]
            threads.append(cProfile.Profile())
            threads[-1].runcall(run, self)

        writer.WriterThread._run = profiled  # type: ignore[method-assign]
        prof = cProfile.Profile()
        out = prof.runcall(peers._ours, "sequential", n, conc, sync)
        pstats.Stats(prof).sort_stats("tottime").print_stats(45)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(60)
        for thread in threads:
            print("=" * 30, "the writer thread")
            pstats.Stats(thread).sort_stats("tottime").print_stats(30)
            pstats.Stats(thread).sort_stats("cumulative").print_stats(30)
    return {"steps_per_s": 3 * n / out["wall"], "cpu_ms_per_step": 1000 * out["cpu"] / (3 * n),
            "transactions": out["transactions_per_workflow"], "barriers": out["barriers_per_workflow"]}


def run_child(case: str, n: int, code: str | None) -> dict:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = code if code is not None else root
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case, str(n)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def mm(xs: list[float], f: str = ".0f") -> str:
    return f"{statistics.median(xs):{f}} ({min(xs):{f}}-{max(xs):{f}})"


def disk_commit_s(commits: int = 200) -> tuple[float, float]:
    """The median wall times of one one-row commit of raw sqlite3 (WAL) on a fresh file in the
    system's temp directory, taking turns: (with an fsync, synchronous=FULL: the disk's limit for
    one durable step; without, synchronous=NORMAL: a commit nothing outside waits for)."""
    import sqlite3
    import tempfile
    import time

    took: dict[str, list[float]] = {"FULL": [], "NORMAL": []}
    with tempfile.TemporaryDirectory(prefix="durable-bench-disk-") as d:
        conn = sqlite3.connect(os.path.join(d, "disk.sqlite"), isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        conn.execute("INSERT INTO t VALUES (1, '')")
        for i in range(2 * commits):
            level = "FULL" if i % 2 == 0 else "NORMAL"
            conn.execute(f"PRAGMA synchronous = {level}")
            t = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("UPDATE t SET v = ? WHERE id = 1", (f"step {i}",))
            conn.execute("COMMIT")
            took[level].append(time.perf_counter() - t)
        conn.close()
    return statistics.median(took["FULL"]), statistics.median(took["NORMAL"])


def workflow_floor_s(r: dict, disk: tuple[float, float]) -> float:
    """What the commits of one durable workflow (`r`: one child's counts a workflow) cost on raw
    sqlite3 (`disk`: one round's medians), a step's share: its fsynced commits at the FULL time,
    the others at the NORMAL time, one row each. One at a time, nothing can do a step faster."""
    full, normal = disk
    return (r["barriers"] * full + (r["transactions"] - r["barriers"]) * normal) / 3


def ratios(case: str, cases: list[str], results: dict[tuple[str, str], list[dict]],
           disk: list[tuple[float, float]]) -> tuple[str, str]:
    """This checkout's `case` per round as a ratio to the engine alone ("-" for the engine alone or
    when it did not run) and to the disk's limit of the same round, each as `mm` prints them."""
    now = results[(case, "now")]
    alone = "-" if case == "memory" or "memory" not in cases else mm(
        [a["steps_per_s"] / b["steps_per_s"] for a, b in zip(now, results[("memory", "now")], strict=True)],
        ".2f") + "x"
    return alone, mm([x["steps_per_s"] * d[0] for x, d in zip(now, disk, strict=True)], ".2f") + "x"


def floors(cases: list[str], results: dict[tuple[str, str], list[dict]],
           disk: list[tuple[float, float]]) -> str | None:
    """The lines that bound durable one at a time, per round, from its own counts: its commits alone on
    raw sqlite3, and those added to the engine alone's work (nothing of the two overlaps when one
    workflow runs at a time: each request waits for its commit, each commit for the step before)."""
    if "sqlite1" not in cases:
        return None
    now = results[("sqlite1", "now")]
    floor = [workflow_floor_s(r, d) for r, d in zip(now, disk, strict=True)]
    r = now[-1]
    lines = [f"durable one at a time commits {r['transactions']:.2f} times a workflow, {r['barriers']:.2f} of them "
             f"fsynced: on raw sqlite3 those alone take {mm([f * 3e6 for f in floor])} us a workflow, "
             f"so at most {mm([1 / f for f in floor])} steps/s"]
    if "memory" in cases:
        alone = results[("memory", "now")]
        both = [1 / (1 / a["steps_per_s"] + f) for a, f in zip(alone, floor, strict=True)]
        lines.append(f"with the engine alone's work a step added: at most {mm(both)} steps/s (measured: "
                     f"{mm([x['steps_per_s'] for x in now])})")
    return "\n".join(lines)


def save(args: argparse.Namespace, cases: list[str], results: dict[tuple[str, str], list[dict]],
         disk: list[tuple[float, float]]) -> None:
    """benchmarks/results/engine.json and the engine section of results.md (this checkout's rows)."""
    import _common as c

    rows, data = [], {}
    for case in cases:
        rs = results[(case, "now")]
        sps = [x["steps_per_s"] for x in rs]
        ok = statistics.median(sps) >= TARGETS[case]
        vs_alone, vs_disk = ratios(case, cases, results, disk)
        rows.append([LABELS[case], mm(sps), mm([x["cpu_ms_per_step"] for x in rs], ".3f"), vs_alone, vs_disk,
                     f">= {TARGETS[case]:,}", c.verdict(ok)])
        data[case] = {"steps_per_s": sps, "cpu_ms_per_step": [x["cpu_ms_per_step"] for x in rs]}
    limit = mm([1 / d[0] for d in disk])
    md = (f"### The engine's work per step (`benchmarks/engine.py`)\n\nThe 3-step tool workflow of `peers.py`, "
          f"{args.workflows} workflows per child, medians (min-max) of {args.rounds} interleaved rounds, trio. "
          f"The disk's limit, one fsynced one-row commit of raw sqlite3 a step (WAL, synchronous=FULL): "
          f"{mm([d[0] * 1e6 for d in disk])} µs, so at most {limit} steps/s one at a time "
          f"(without an fsync, synchronous=NORMAL: {mm([d[1] * 1e6 for d in disk])} µs).\n\n"
          + c.table(["case", "steps/s", "CPU ms / step", "/ engine alone", "/ the disk's limit", "target", "result"],
                    rows))
    bound = floors(cases, results, disk)
    if bound:
        md += "\n\n" + "".join(f"- {line}.\n" for line in bound.splitlines())
    c.save("engine", {"cases": data, "disk_commit_s": disk, "workflows": args.workflows, "rounds": args.rounds}, md)


def main(argv: list[str]) -> None:
    if len(argv) == 3 and argv[0] == "--child":
        print(json.dumps(child(argv[1], int(argv[2]))))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", default="main", help="git ref of the code to compare with ('' to skip)")
    p.add_argument("--workflows", type=int, default=300)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--cases", default="memory,sqlite1,sqlite16")
    p.add_argument("--profile", default=None, choices=sorted(CASES))
    p.add_argument("--save", action="store_true", help="write the run to benchmarks/results/")
    args = p.parse_args(argv)
    if args.profile:
        print(json.dumps(child(args.profile, args.workflows, profile=True)))
        return
    from storage import export  # `git archive REF durable` into a temp dir

    before = export(args.before) if args.before else None
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    results: dict[tuple[str, str], list[dict]] = {}
    disk: list[tuple[float, float]] = []
    for r in range(args.rounds):
        disk.append(disk_commit_s())
        for case in cases:
            order = [("now", None)] + ([("before", before)] if before else [])
            if r % 2:
                order.reverse()
            for who, code in order:
                results.setdefault((case, who), []).append(run_child(case, args.workflows, code))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"3-step tool workflow, {args.workflows} workflows per child, {args.rounds} interleaved rounds, trio; "
          f"before = {args.before or '-'}")
    print(f"{'case':32} {'who':7} {'steps/s':>22} {'CPU ms/step':>22} {'target':>7}")
    for case in cases:
        for who in ("now", "before") if before else ("now",):
            rs = results[(case, who)]
            print(f"{LABELS[case]:32} {who:7} {mm([x['steps_per_s'] for x in rs]):>22} "
                  f"{mm([x['cpu_ms_per_step'] for x in rs], '.3f'):>22} {TARGETS[case] if who == 'now' else '':>7}")
        if before:
            now, old = results[(case, "now")], results[(case, "before")]
            sp = [a["steps_per_s"] / b["steps_per_s"] for a, b in zip(now, old, strict=True)]
            cp = [b["cpu_ms_per_step"] / a["cpu_ms_per_step"] for a, b in zip(now, old, strict=True)]
            print(f"{'':32} {'ratio':7} {mm(sp, '.2f') + 'x':>22} {mm(cp, '.2f') + 'x':>22}"
                  "  (now/before; CPU: before/now)")
    print(f"the disk's limit: one fsynced one-row commit of raw sqlite3 {mm([d[0] * 1e6 for d in disk])} us, "
          f"so at most {mm([1 / d[0] for d in disk])} steps/s one at a time (without an fsync: "
          f"{mm([d[1] * 1e6 for d in disk])} us)")
    for case in cases:
        vs_alone, vs_disk = ratios(case, cases, results, disk)
        if vs_alone != "-":
            print(f"{LABELS[case]}: {vs_alone} the engine alone, {vs_disk} the disk's limit")
    bound = floors(cases, results, disk)
    if bound:
        print(bound)
    if args.save:
        save(args, cases, results, disk)


if __name__ == "__main__":
    main(sys.argv[1:])
