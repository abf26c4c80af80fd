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

import psycopg  # noqa: E402
import trio  # noqa: E402
from _common import machine_line, table  # noqa: E402
from attrs import define  # noqa: E402

from durable.records import AssistantEntry, StoredEntry, Usage  # noqa: E402
from durable.storage import Batch, PostgresStorage  # noqa: E402
from durable.storage.protocol import encode_batch  # noqa: E402

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", help="an existing server's database (default: a throwaway server)")
    parser.add_argument("--commits", type=int, default=200, help="commits per scenario and round (default 200)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="--commits 40 --rounds 5")
    args = parser.parse_args()
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
    finally:
        if cluster is not None:
            cluster.stop()
    print(f"\nPostgreSQL {version} (fsync={fsync}, synchronous_commit={sync}) on 127.0.0.1; {n} commits per "
          f"scenario, {args.rounds} interleaved rounds; medians (min-max)")
    print(f"Machine: {machine_line()}\n")
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
