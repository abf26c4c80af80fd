"""Benchmark: the PostgreSQL session store against raw psycopg single-row commits.

Run: `python benchmarks/postgres.py [--dsn DSN] [--commits 200] [--rounds 5] [--quick]`. Not a
test: it prints a table of figures and ratios. Without `--dsn` it starts a throwaway server of its
own (durable.testing.pgcluster: initdb in /tmp, fsync on, the server's defaults otherwise) and
stops it at the end; needs the `postgres` extra and the server binaries (scripts/ensure-postgres).

Scenarios, each `--commits` commits, run interleaved in every round (medians of the rounds, with
min-max; latencies are per commit, p50 and p99 within a round, then the median over rounds):

- raw x1: one psycopg connection (autocommit), one INSERT of a pre-encoded entry row per commit,
  one after another: what one round trip and one WAL flush per commit cost.
- raw x8: 8 threads, each with its own connection, doing the same concurrently.
- store x1: `PostgresStorage.commit` of a one-entry batch, one awaited after another (trio).
- store x8: 8 tasks committing concurrently to one store (group commit: one transaction, one
  round trip and one WAL flush for all the commits queued meanwhile).
- lazy x1 / lazy x8: the same with lazy batches (`barrier` False: `synchronous_commit = off`).

"WAL syncs/commit" is pg_stat_wal.wal_sync over the scenario (background writes included)
divided by the commits: 1 when every commit waits for its own flush.

Then (unless `--no-scale`; see benchmarks/_pg_scale.py): steps/s of a 3-step tool workflow
through the harness at 1 and 4 worker processes beside DBOS with as many executor processes on
the same server (DBOS from benchmarks/.peers-venv, installed with pip on first use; the target is
>= 2x DBOS), transactions and WAL syncs per step, and the takeover time after a SIGKILL against
the lease (target: lease + 1 s), each over `--rounds` interleaved rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import uuid
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _pg_scale  # noqa: E402
import psycopg  # noqa: E402
import trio  # noqa: E402
from _common import machine_line, peer_version, peers_python, table  # noqa: E402
from attrs import define  # noqa: E402

from durable.records import AssistantEntry, StoredEntry, Usage  # noqa: E402
from durable.storage import Batch, PostgresStorage  # noqa: E402
from durable.storage.rows import encode_batch  # noqa: E402

ANSWER = "The build fails because the import of `settings` happens before the environment is read. " * 4


@define
class LazyBatch(Batch):
    barrier: bool = False


def entry_batch(conversation: str, seq: int, lazy: bool = False) -> Batch:
    entry = StoredEntry(conversation, seq, AssistantEntry(ANSWER, "stop", usage=Usage(1200, 180)))
    return (LazyBatch if lazy else Batch)(entries=[entry])


def wal_syncs(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return int(conn.execute("SELECT wal_sync FROM pg_stat_wal").fetchone()[0])


# --------------------------------------------------------------------------- scenarios


def raw(dsn: str, committers: int, n: int) -> list[float]:
    """Raw psycopg: `committers` threads, own connection each, n commits in all."""
    row = encode_batch(entry_batch("c", 1)).entries[0]
    space = uuid.uuid4().hex
    latencies: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(committers)

    def work(c: int) -> None:
        mine: list[float] = []
        with psycopg.connect(dsn, autocommit=True) as conn:
            start.wait()
            for seq in range(n // committers):
                t = time.perf_counter()
                conn.execute("INSERT INTO bench_raw (space, conversation_id, seq, kind, body) VALUES (%s, %s, %s, %s, %s)",
                             (space, f"c{c}", seq, row[2], row[3]))
                mine.append(time.perf_counter() - t)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=work, args=(c,)) for c in range(committers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return latencies


async def store(dsn: str, committers: int, n: int, lazy: bool) -> tuple[list[float], int]:
    s = PostgresStorage(dsn, f"bench-{uuid.uuid4().hex[:10]}", lease_seconds=30)
    await s.open()
    latencies: list[float] = []
    before = s.commits

    async def committer(c: int) -> None:
        for seq in range(1, n // committers + 1):
            batch = entry_batch(f"c{c}", seq, lazy)
            t = time.perf_counter()
            await s.commit(batch)
            latencies.append(time.perf_counter() - t)

    async with trio.open_nursery() as nursery:
        for c in range(committers):
            nursery.start_soon(committer, c)
    transactions = s.commits - before
    await s.close()
    return latencies, transactions


def measure(dsn: str, name: str, fn: Any, n: int) -> dict[str, float]:
    w0 = wal_syncs(dsn)
    t0 = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - t0
    w1 = wal_syncs(dsn)
    latencies, transactions = result if isinstance(result, tuple) else (result, len(result))
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    return {"rate": len(latencies) / elapsed, "p50": q[49], "p99": q[98], "wal_per_commit": (w1 - w0) / len(latencies),
            "commits_per_tx": len(latencies) / max(1, transactions)}


SCENARIOS = [
    ("raw x1", "raw", 1, False), ("store x1", "store", 1, False), ("lazy x1", "store", 1, True),
    ("raw x8", "raw", 8, False), ("store x8", "store", 8, False), ("lazy x8", "store", 8, True),
]


def run(dsn: str, n: int, rounds: int) -> dict[str, list[dict[str, float]]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_raw (space text, conversation_id text, seq bigint, kind text, "
                     "body text, PRIMARY KEY (space, conversation_id, seq))")
    trio.run(store, dsn, 1, 8, False)  # warm-up: schema created, first connection made
    results: dict[str, list[dict[str, float]]] = {name: [] for name, *_ in SCENARIOS}
    for r in range(rounds):
        order = SCENARIOS if r % 2 == 0 else SCENARIOS[::-1]  # interleaved, both orders
        for name, kind, committers, lazy in order:
            if kind == "raw":
                fig = measure(dsn, name, lambda c=committers: raw(dsn, c, n), n)
            else:
                fig = measure(dsn, name, lambda c=committers, lz=lazy: trio.run(store, dsn, c, n, lz), n)
            results[name].append(fig)
        print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    return results


def spread(values: list[float], fmt: str) -> str:
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def report(results: dict[str, list[dict[str, float]]]) -> str:
    base = {1: statistics.median(f["rate"] for f in results["raw x1"]),
            8: statistics.median(f["rate"] for f in results["raw x8"])}
    rows = []
    for name, _, committers, _ in SCENARIOS:
        figs = results[name]
        rate = statistics.median(f["rate"] for f in figs)
        rows.append([name, spread([f["rate"] for f in figs], "{:.0f}"), f"{rate / base[committers]:.2f}x",
                     spread([f["p50"] * 1000 for f in figs], "{:.2f}"), spread([f["p99"] * 1000 for f in figs], "{:.2f}"),
                     f"{statistics.median(f['commits_per_tx'] for f in figs):.1f}",
                     f"{statistics.median(f['wal_per_commit'] for f in figs):.2f}"])
    return table(["scenario", "commits/s median (min-max)", "vs raw, same committers", "p50 ms", "p99 ms",
                  "commits/transaction", "WAL syncs/commit"], rows)


PROCS: tuple[int, ...] = (1, 4)  # worker processes per scale run (--processes)
LEASES = (1.0, 2.0)


def run_scale(dsn: str, port: int, n: int, rounds: int) -> tuple[dict[str, list[dict[str, float]]], str]:
    """Workflows at 1 and 4 processes, ours and DBOS, and takeovers, interleaved by round."""
    py, status = peers_python("dbos")
    dbos_ok = py is not None and status.get("dbos") == "ok"
    note = f"DBOS {peer_version(py, 'dbos')}" if dbos_ok and py else f"DBOS unavailable: {status.get('dbos')}"
    url = f"postgresql://postgres@127.0.0.1:{port}/dbos_bench"
    if dbos_ok:
        with psycopg.connect(dsn, autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'dbos_bench'").fetchone():
                conn.execute("CREATE DATABASE dbos_bench")
    dbname = psycopg.conninfo.conninfo_to_dict(dsn).get("dbname", "durable")
    jobs: list[tuple[str, Any]] = []
    for procs in PROCS:
        jobs.append((f"ours x{procs}", lambda p=procs: _pg_scale.workflows("ours", dsn, dsn, str(dbname), p, n,
                                                                           sys.executable)))
        if dbos_ok:
            jobs.append((f"dbos x{procs}", lambda p=procs: _pg_scale.workflows("dbos", dsn, url, "dbos_bench", p, n,
                                                                               str(py))))
    for lease in LEASES:
        jobs.append((f"takeover {lease:g}s", lambda le=lease: {"seconds": _pg_scale.takeover(
            dsn, le, uuid.uuid4().hex[:10])}))
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in jobs}
    for r in range(rounds):
        for name, fn in (jobs if r % 2 == 0 else jobs[::-1]):
            results[name].append(fn())
        print(f"scale round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    return results, note


def report_scale(results: dict[str, list[dict[str, float]]]) -> str:
    rows = []
    for procs in PROCS:
        ours, dbos = results[f"ours x{procs}"], results.get(f"dbos x{procs}")
        for name, figs in ((f"ours x{procs}", ours), (f"dbos x{procs}", dbos)):
            if not figs:
                continue
            rate = statistics.median(f["steps_per_s"] for f in figs)
            ratio = rate / statistics.median(f["steps_per_s"] for f in dbos) if dbos else float("nan")
            has_writes = "writes_per_step" in figs[0]
            writes = f"{statistics.median(f['writes_per_step'] for f in figs):.2f}" if has_writes else "-"
            rows.append([name, spread([f["steps_per_s"] for f in figs], "{:.0f}"),
                         f"{ratio:.2f}x (target 2x)" if name.startswith("ours") else "1.00x",
                         spread([f["tx_per_step"] for f in figs], "{:.2f}"), writes,
                         spread([f["wal_per_step"] for f in figs], "{:.2f}")])
    out = table(["workflow, processes", "steps/s median (min-max)", "vs DBOS, same processes",
                 "transactions/step (server)", "write tx/step (store)", "WAL syncs/step"], rows)
    rows = []
    for lease in LEASES:
        figs = [f["seconds"] for f in results[f"takeover {lease:g}s"]]
        rows.append([f"{lease:g} s", spread(figs, "{:.2f}"), f"{lease + 1:g} s",
                     "yes" if statistics.median(figs) <= lease + 1 else "no"])
    return out + "\n\n" + table(["lease", "takeover after SIGKILL, s median (min-max)", "target", "met"], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", help="an existing server's database (default: a throwaway server)")
    parser.add_argument("--commits", type=int, default=200, help="commits per scenario and round (default 200)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="--commits 40 --workflows 30 --rounds 5")
    parser.add_argument("--workflows", type=int, default=100, help="3-step workflows per scale run (default 100)")
    parser.add_argument("--no-scale", action="store_true", help="only the store against raw psycopg")
    parser.add_argument("--processes", default="1,4", help="worker processes per scale run, comma-separated "
                                                           "(default 1,4; the issue's sweep: 1,2,4,8)")
    args = parser.parse_args()
    global PROCS
    PROCS = tuple(int(x) for x in args.processes.split(","))
    n = 40 if args.quick else args.commits
    n -= n % 8
    cluster = None
    dsn = args.dsn
    if dsn is None:
        from durable.testing.pgcluster import TempCluster

        cluster = TempCluster(fsync=True).start()
        dsn = cluster.dsn
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            sync = conn.execute("SHOW synchronous_commit").fetchone()[0]
            fsync = conn.execute("SHOW fsync").fetchone()[0]
        results = run(dsn, n, args.rounds)
        port = int(psycopg.conninfo.conninfo_to_dict(dsn).get("port") or 5432)
        scale = None if args.no_scale else run_scale(dsn, port, 30 if args.quick else args.workflows, args.rounds)
    finally:
        if cluster is not None:
            cluster.stop()
    print(f"\nPostgreSQL {version} (fsync={fsync}, synchronous_commit={sync}) on 127.0.0.1; {n} commits per "
          f"scenario, {args.rounds} interleaved rounds; medians (min-max)")
    print(f"Machine: {machine_line()}\n")
    print(report(results))
    if scale is not None:
        print(f"\n3-step tool workflows through the harness (one space per worker process) beside {scale[1]}, "
              "same server; takeover after SIGKILL of a host mid-tool, a worker polling every 0.1 s\n")
        print(report_scale(scale[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
