"""Benchmark: many concurrent conversations in one harness on one SQLite file.

Run: `python benchmarks/conversations.py [--loads 100,1000] [--turns 3000] [--rounds 5]`.
Not a test: it prints turns/s, p50/p99 turn latency and commits per turn at each load, the
throughput ratio of the largest load to the smallest against the target (>= 0.8x), and the peak
RSS of a process holding 1,000 idle conversations; it writes `results/conversations.json` and its
section of `results/results.md`.

Each measurement runs in a fresh child process (`--child`), with the library's defaults
(WAL, the store's default `synchronous`, `progress.persist_within` 0.1 s) on the asyncio backend:

- Throughput at load N: one harness, one file, N conversations. Every conversation first takes
  one turn (not timed: it creates the conversation), then all N run at once, each taking its
  share of `--turns` turns one after another (submit, then wait for the answer). A turn is a
  user input answered by a short streamed answer: the faux model streams `--chunks` chunks with
  `--chunk-delay` seconds before each (0.15 s in all by default, longer than `persist_within`, so
  partial answers are flushed). turns/s = measured turns / wall time; latency is submit -> answer
  per turn; commits per turn = SQLite transactions (`SQLiteStorage.commits`, a group commit
  counts once) / measured turns, with the engine's batches (`store.commit` calls) and, among them,
  the partial-answer flushes per turn; "CPU cores busy" = process CPU time / wall time.
- Idle conversations: a fresh process opens a harness and takes one turn on `--idle`
  conversations (default 1,000), which stay open (their handles are kept); it prints the peak
  RSS (`ru_maxrss`) and the growth over the same process after one conversation, per 1,000.

Rounds are interleaved (round 1: every load, then the idle run; round 2: ...): the tables give
medians with min-max over the rounds; the throughput ratio is the median of the rounds' ratios.
The faux model keeps only its newest requests (its default), so memory does not grow with turns.
"""

from __future__ import annotations

import json
import os
import sys
import time

ANSWER = "The answer, after looking at the question carefully, is forty-two. "


# =========================================================================== children


def _model(turns: int, chunks: int, delay: float):  # type: ignore[no-untyped-def]
    from durable.models import FauxModel, faux

    token_size = max(1, len(ANSWER) // chunks)
    text = ANSWER[: token_size * chunks]
    return FauxModel([faux.reply(text)] * turns, token_size=token_size,
                     tokens_per_second=(1 / delay) if delay > 0 else None)


def _rss_now_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child_load(n: int, turns: int, chunks: int, delay: float, backend: str) -> dict:
    import resource
    import tempfile

    import anyio

    import durable

    per = max(1, turns // n)
    model = _model(n * (per + 1), chunks, delay)

    async def main() -> dict:
        path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-conv-"), "conversations.sqlite")
        latencies: list[float] = []
        async with durable.open_harness(path, model=model) as h:
            convs = [h.conversation(f"c{i}") for i in range(n)]
            counts = {"batches": 0, "flushes": 0}
            store_commit = h.storage.commit

            async def counting_commit(batch):  # type: ignore[no-untyped-def]
                counts["batches"] += 1
                # A partial-answer flush: only the live document, with a generation's partial text.
                if not batch.tasks and not batch.entries and not batch.submissions and any(
                        live.generation is not None and live.generation.message.text for live in batch.live.values()):
                    counts["flushes"] += 1
                await store_commit(batch)

            h.storage.commit = counting_commit  # type: ignore[method-assign]  # the session calls it per commit

            async def one_turn(conv, k: int) -> None:  # type: ignore[no-untyped-def]
                t = time.perf_counter()
                sub = await conv.submit(f"Question {k}")
                status = await sub.wait()
                latencies.append(time.perf_counter() - t)
                if not isinstance(status, durable.Answered):
                    raise RuntimeError(f"{conv.id} turn {k}: {status}")

            async with anyio.create_task_group() as tg:  # every conversation's first turn (not timed)
                for conv in convs:
                    tg.start_soon(one_turn, conv, 0)
            latencies.clear()
            counts.update(batches=0, flushes=0)
            commits0 = h.storage.commits
            r0 = resource.getrusage(resource.RUSAGE_SELF)
            t = time.perf_counter()

            async def worker(conv) -> None:  # type: ignore[no-untyped-def]
                for k in range(1, per + 1):
                    await one_turn(conv, k)

            async with anyio.create_task_group() as tg:
                for conv in convs:
                    tg.start_soon(worker, conv)
            wall = time.perf_counter() - t
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            commits = h.storage.commits - commits0
            synchronous = getattr(h.storage, "synchronous", "?")
        latencies.sort()
        done = len(latencies)
        return {"kind": "load", "conversations": n, "turns": done, "wall": wall, "turns_per_s": done / wall,
                "p50": latencies[done // 2], "p99": latencies[min(done - 1, int(done * 0.99))],
                "commits_per_turn": commits / done, "batches_per_turn": counts["batches"] / done,
                "flushes_per_turn": counts["flushes"] / done,
                "cpu_busy": ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) / wall,
                "synchronous": synchronous, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}

    return anyio.run(main, backend=backend)


def child_idle(n: int, chunks: int, delay: float, backend: str) -> dict:
    import gc
    import resource
    import tempfile

    import anyio

    import durable

    model = _model(n + 1, chunks, delay)

    async def main() -> dict:
        path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-idle-"), "idle.sqlite")
        async with durable.open_harness(path, model=model) as h:
            first = h.conversation("c0")
            await (await first.submit("Question 0")).wait()
            gc.collect()
            base_rss = _rss_now_mb()
            base_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            convs = [first]
            # 100 turns at a time: the peak is that of idle conversations, not of 1,000 streams at
            # once; by 100 workers, not a task per conversation waiting its turn (those tasks'
            # memory would count: freed at the end, but not given back to the system).
            todo = iter(range(1, n))

            async def worker() -> None:
                for i in todo:
                    conv = h.conversation(f"c{i}")
                    convs.append(conv)
                    status = await (await conv.submit(f"Question {i}")).wait()
                    if not isinstance(status, durable.Answered):
                        raise RuntimeError(f"c{i}: {status}")

            async with anyio.create_task_group() as tg:
                for _ in range(min(100, n - 1)):
                    tg.start_soon(worker)
            gc.collect()
            rss = _rss_now_mb()
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            assert len(convs) == n
        return {"kind": "idle", "conversations": n, "rss_mb": rss, "peak_rss_mb": peak,
                "base_rss_mb": base_rss, "base_peak_rss_mb": base_peak,
                "growth_per_1000_mb": (rss - base_rss) / (n - 1) * 1000}

    return anyio.run(main, backend=backend)


# =========================================================================== parent


def _mm(xs: list[float], fmt: str) -> str:
    """median (min-max)"""
    import statistics

    return f"{format(statistics.median(xs), fmt)} ({format(min(xs), fmt)}-{format(max(xs), fmt)})"


def main(argv: list[str]) -> None:
    import argparse
    import statistics

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common as c

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loads", default="100,1000", help="concurrent conversations (comma-separated); "
                   "the ratio is largest / smallest")
    p.add_argument("--turns", type=int, default=3000, help="measured turns per run (split among the conversations)")
    p.add_argument("--rounds", type=int, default=5,
                   help="interleaved rounds (>= 5 for the figures; fewer for a quick run)")
    p.add_argument("--idle", type=int, default=1000,
                   help="idle conversations held open for the memory figure (0: skip)")
    p.add_argument("--chunks", type=int, default=6, help="chunks of the streamed answer")
    p.add_argument("--chunk-delay", type=float, default=0.025, help="seconds before each chunk")
    p.add_argument("--backend", default="asyncio", choices=["asyncio", "trio"])
    args = p.parse_args(argv)
    loads = sorted({int(x) for x in args.loads.split(",") if x.strip()})
    me = os.path.abspath(__file__)

    print(f"conversations: {c.machine_line()}")
    print(f"loads {loads}, {args.turns} turns per run, {args.rounds} interleaved rounds, answer streamed in "
          f"{args.chunks} chunks x {args.chunk_delay * 1000:.0f} ms, backend {args.backend}", flush=True)
    runs: dict[int, list[dict]] = {n: [] for n in loads}
    idle: list[dict] = []
    for rnd in range(args.rounds):
        for n in loads:
            r = c.run_child([me, "--child-load", str(n), str(args.turns), str(args.chunks), str(args.chunk_delay),
                             args.backend], timeout=1800)
            runs[n].append(r)
            print(f"  round {rnd + 1}/{args.rounds}: {n:>5} conversations: {r['turns_per_s']:.0f} turns/s, "
                  f"p50 {c.ms(r['p50'])} ms, p99 {c.ms(r['p99'])} ms, {r['commits_per_turn']:.2f} commits/turn, "
                  f"CPU {r['cpu_busy']:.2f}", flush=True)
        if args.idle > 1:
            r = c.run_child([me, "--child-idle", str(args.idle), str(args.chunks), str(args.chunk_delay),
                             args.backend], timeout=1800)
            idle.append(r)
            print(f"  round {rnd + 1}/{args.rounds}: {args.idle} idle conversations: "
                  f"peak RSS {r['peak_rss_mb']:.1f} MB, "
                  f"+{r['growth_per_1000_mb']:.1f} MB per 1,000", flush=True)

    body = []
    for n in loads:
        rs = runs[n]
        body.append([f"{n:,}", _mm([r["turns_per_s"] for r in rs], ".0f"), _mm([r["p50"] * 1000 for r in rs], ".0f"),
                     _mm([r["p99"] * 1000 for r in rs], ".0f"), _mm([r["commits_per_turn"] for r in rs], ".2f"),
                     _mm([r["batches_per_turn"] for r in rs], ".2f"), _mm([r["flushes_per_turn"] for r in rs], ".2f"),
                     _mm([r["cpu_busy"] for r in rs], ".2f"), f"{rs[0]['turns']:,}"])
    out = ["### Many conversations in one harness (one SQLite file)\n",
           f"Medians of {args.rounds} interleaved rounds (min-max); each run a fresh process; answer streamed in "
           f"{args.chunks} chunks, {args.chunk_delay * 1000:.0f} ms before each; `persist_within` 0.1 s; "
           f"synchronous={runs[loads[0]][0]['synchronous']}; backend {args.backend}.\n",
           c.table(["conversations", "turns/s", "p50 ms", "p99 ms", "SQLite commits/turn", "batches/turn",
                    "of which partial flushes", "CPU cores busy", "turns/run"], body), "",
           "SQLite commits are transactions (`SQLiteStorage.commits`; a group commit counts once); batches are "
           "the engine's `store.commit` calls; partial flushes are the batches that only write a partial answer "
           "into the live document. p50/p99 at a load of N include the wait behind the N - 1 other "
           "conversations (Little's law: about N / turns/s). "
           f"The model's streaming alone ({args.chunks} x {args.chunk_delay * 1000:.0f} ms a turn) caps a load of N at "
           f"N / {args.chunks * args.chunk_delay:.3f} s turns/s: "
           + ", ".join(f"{n / (args.chunks * args.chunk_delay):,.0f} at {n:,}" for n in loads if args.chunk_delay > 0)
           + " (a smaller load near its cap measures latency more than capacity: compare \"CPU cores busy\").", ""]
    targets = []
    if len(loads) >= 2:
        lo, hi = loads[0], loads[-1]
        ratios = [b["turns_per_s"] / a["turns_per_s"] for a, b in zip(runs[lo], runs[hi], strict=True)]
        ratio = statistics.median(ratios)
        targets.append((f"throughput {hi:,} / {lo:,} conversations >= 0.8x",
                        f"{ratio:.2f}x ({min(ratios):.2f}-{max(ratios):.2f})", ratio >= 0.8))
        cpt = [statistics.median(r["commits_per_turn"] for r in runs[n]) for n in (lo, hi)]
        targets.append((f"SQLite commits per turn do not rise with load ({lo:,} -> {hi:,})",
                        f"{cpt[0]:.2f} -> {cpt[1]:.2f}", cpt[1] <= cpt[0] * 1.05))
    out.append(c.table(["target", "measured", "result"], [(a, b, c.verdict(ok)) for a, b, ok in targets]))
    out.append("")
    if idle:
        out.append(f"Idle conversations: {args.idle:,} conversations that had one turn each, held open in one "
                   f"process: peak RSS {_mm([r['peak_rss_mb'] for r in idle], '.1f')} MB; growth over the same "
                   f"process after its first conversation {_mm([r['growth_per_1000_mb'] for r in idle], '.1f')} MB "
                   "per 1,000 conversations (resident set, after gc).")
    md = "\n".join(out)
    print()
    print(md)
    c.save("conversations", {"loads": loads, "turns": args.turns, "rounds": args.rounds, "chunks": args.chunks,
                             "chunk_delay": args.chunk_delay, "backend": args.backend,
                             "runs": {str(n): rs for n, rs in runs.items()}, "idle": idle,
                             "targets": [{"target": a, "measured": b, "met": ok} for a, b, ok in targets]}, md)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child-load":
        n, turns, chunks, delay, backend = sys.argv[2:7]
        print(json.dumps(child_load(int(n), int(turns), int(chunks), float(delay), backend)))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--child-idle":
        n, chunks, delay, backend = sys.argv[2:6]
        print(json.dumps(child_idle(int(n), int(chunks), float(delay), backend)))
    else:
        main(sys.argv[1:])
