"""Benchmark: memory of idle conversations, and RSS over many turns (issue 29).

Run: `python benchmarks/idle_memory.py [--baseline /path/to/other/checkout] [--rounds 5]`.
Not a test: it prints figures, measured in fresh child processes on the SQLite store (a session
file in a temp dir, the library's defaults), interleaved with the baseline's when one is given
(same interpreter and packages, the baseline's `durable` imported in its children):

- Bytes per idle conversation: a harness takes one turn on each of `--idle` conversations (100
  at a time, their handles kept), after 50 conversations that warm it up; the bytes it holds for
  them (`tracemalloc`, after `gc.collect()`) over their number, and, in another process without
  tracemalloc, the resident set's growth (`/proc/self/statm`) over the same. Medians of `--rounds` rounds with min-max.
  The turns are run by 100 worker tasks taking the next conversation as they finish one. With
  `--spawn all` (what this benchmark did before), one task per conversation is started at once,
  the other 9,900 waiting on a semaphore: those waiting tasks are the benchmark's, not durable's,
  and the memory they took is freed at the end but not given back to the system (the long-lived
  records made meanwhile pin the allocator's arenas), so the resident set then grows ~3.4 KB more
  per conversation (10,000 conversations) though durable holds the same. Their contexts are
  dropped as soon as they are idle (`keep_idle_context=0`), unless `--keep-contexts`.
- RSS over turns: `--turns` turns (100,000) in waves over `--conversations` conversations (1,000:
  each wave gives every conversation one turn, 100 at a time), sampled every `--step` turns
  (5,000, after `gc.collect()`): the resident set, Python's allocated blocks
  (`sys.getallocatedblocks`), the most blocks seen in use during the step (polled every 50 ms:
  what the turns in flight hold), pymalloc's arenas (`sys._debugmallocstats`) and glibc's heap
  in use (`mallinfo2`), with turns/s. The figure: the resident set's growth over the second half
  of the run (from `--turns`/2 to the end), flat when within `--flat-mb` (1 MB). Here contexts are
  dropped from memory as soon as a conversation is idle (`Settings(keep_idle_context=0)`: the
  default keeps them 60 s, longer than this run's waves), so every turn reads its context back
  from the file, and a turn holds what that read gives for as long as it runs (issue 29: a list
  of int seqs and a str per entry, as long as the conversation, made the blocks in use at a
  wave's peak, and pymalloc's arenas, grow with the conversations' length).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time

ANSWER = "The answer, after looking at the question carefully, is forty-two. "


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _settings(**kw):  # type: ignore[no-untyped-def]
    import attrs

    import durable

    known = attrs.fields_dict(durable.Settings)
    return durable.Settings(**{k: v for k, v in kw.items() if k in known})


async def _one_turn_each(h, ids, handles: list | None = None, spawn: str = "workers") -> None:  # type: ignore[no-untyped-def]
    """One answered turn on each conversation of `ids`, 100 at a time (their handles kept in
    `handles`): by 100 workers, or (`spawn="all"`) by one task per conversation, all started at
    once and waiting on a semaphore."""
    import anyio

    import durable

    async def one(cid: str) -> None:
        conv = h.conversation(cid)
        if handles is not None:
            handles.append(conv)
        status = await (await conv.submit("Question")).wait()
        if not isinstance(status, durable.Answered):
            raise RuntimeError(f"{cid}: {status}")

    if spawn == "all":
        sem = anyio.Semaphore(100)

        async def waiting(cid: str) -> None:
            async with sem:
                await one(cid)

        async with anyio.create_task_group() as tg:
            for cid in ids:
                tg.start_soon(waiting, cid)
        return
    todo = iter(ids)

    async def worker() -> None:
        for cid in todo:
            await one(cid)

    async with anyio.create_task_group() as tg:
        for _ in range(min(100, len(ids))):
            tg.start_soon(worker)


def child_idle(n: int, trace: bool, spawn: str = "workers", keep: str = "drop") -> dict:
    import gc
    import tempfile
    import tracemalloc

    import anyio

    import durable
    from durable.models import FauxModel, faux

    model = FauxModel([faux.reply(ANSWER)] * (n + 60), token_size=8, tokens_per_second=None, keep_requests=1)

    async def main() -> dict:
        path = os.path.join(workdir, "idle.sqlite")
        handles = []
        settings = _settings() if keep == "keep" else _settings(keep_idle_context=0)
        async with durable.open_harness(path, model=model, settings=settings) as h:
            for i in range(50):
                await (await h.conversation(f"w{i}").submit(f"Question {i}")).wait()
            gc.collect()
            if trace:
                tracemalloc.start()
            before, rss0 = tracemalloc.get_traced_memory()[0], _rss_mb()
            await _one_turn_each(h, [f"c{i}" for i in range(n)], handles, spawn)
            # one more turn on another conversation: what was dropped once idle is dropped now
            await (await h.conversation("last").submit("Question")).wait()
            gc.collect()
            after, rss1 = tracemalloc.get_traced_memory()[0], _rss_mb()
            tracemalloc.stop()
        if trace:
            return {"bytes_per_conversation": (after - before) / n}
        return {"rss_per_conversation": (rss1 - rss0) * 2**20 / n}

    workdir = tempfile.mkdtemp(prefix="durable-bench-memory-")
    try:
        return anyio.run(main, backend="asyncio")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _pymalloc_arenas() -> int:
    """pymalloc's arenas allocated now, from `sys._debugmallocstats()` (written to fd 2)."""
    import re
    import tempfile

    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        found = re.search(rb"# arenas allocated current\s*=\s*([\d,]+)", out.read())
    return int(found.group(1).replace(b",", b"")) if found else -1


def _glibc_in_use_mb() -> float:
    """glibc malloc's bytes in use (`mallinfo2().uordblks`, all arenas), or -1 without it."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in
                    "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2
    except (OSError, AttributeError):
        return -1.0
    return libc.mallinfo2().uordblks / 2**20


def child_turns(turns: int, conversations: int, step: int) -> dict:
    import gc
    import tempfile

    import anyio

    import durable
    from durable.models import FauxModel, faux

    model = FauxModel([faux.reply(ANSWER)] * turns, token_size=8, tokens_per_second=None, keep_requests=1)

    async def main() -> dict:
        path = os.path.join(workdir, "turns.sqlite")
        points: list[dict] = []
        peak = [0]

        async def poll() -> None:  # the most blocks in use while turns run
            while True:
                peak[0] = max(peak[0], sys.getallocatedblocks())
                await anyio.sleep(0.05)

        async with durable.open_harness(path, model=model, settings=_settings(keep_idle_context=0)) as h, \
                anyio.create_task_group() as tg:
            tg.start_soon(poll)
            done, t0 = 0, time.perf_counter()
            while done < turns:
                wave = min(conversations, turns - done)
                await _one_turn_each(h, [f"c{i}" for i in range(wave)])
                done += wave
                if done % step == 0 or done == turns:
                    gc.collect()
                    points.append({"turns": done, "rss": _rss_mb(), "blocks": sys.getallocatedblocks(),
                                   "peak_blocks": peak[0], "arenas": _pymalloc_arenas(),
                                   "glibc": _glibc_in_use_mb(), "rate": done / (time.perf_counter() - t0)})
                    peak[0] = 0
            tg.cancel_scope.cancel()
        return {"points": points}

    workdir = tempfile.mkdtemp(prefix="durable-bench-memory-")
    try:
        return anyio.run(main, backend="asyncio")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str]) -> None:
    import argparse

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common as c

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", help="another checkout (with its .venv) measured in the same run")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--idle", type=int, default=1000)
    p.add_argument("--spawn", choices=("workers", "all"), default="workers",
                   help="who runs the idle turns: 100 workers, or one task per conversation started at once")
    p.add_argument("--keep-contexts", action="store_true",
                   help="idle conversations keep their contexts (the default settings: 60 s), not dropped at once")
    p.add_argument("--turns", type=int, default=100_000)
    p.add_argument("--conversations", type=int, default=1000)
    p.add_argument("--step", type=int, default=5000, help="turns between samples of the RSS run")
    p.add_argument("--flat-mb", type=float, default=1.0,
                   help="RSS growth over the second half of the run within which it is called flat")
    args = p.parse_args(argv)
    me = os.path.abspath(__file__)
    # Both through `code` (the same import path), and the same interpreter and packages.
    pythons: dict[str, str | None] = {"this checkout": os.path.dirname(os.path.dirname(me))}
    if args.baseline:
        pythons["baseline " + args.baseline] = args.baseline
    print(f"idle_memory: {c.machine_line()}")
    idle: dict[str, list[dict]] = {k: [] for k in pythons}
    for rnd in range(args.rounds):
        for name, py in pythons.items():
            keep = "keep" if args.keep_contexts else "drop"
            r = c.run_child([me, "--child-idle", str(args.idle), "trace", args.spawn, keep], code=py)
            r.update(c.run_child([me, "--child-idle", str(args.idle), "rss", args.spawn, keep], code=py))
            idle[name].append(r)
            print(f"  round {rnd + 1} {name}: {r['bytes_per_conversation']:.0f} B per idle conversation "
                  f"(tracemalloc), RSS {r['rss_per_conversation']:.0f} B", flush=True)

    def mm(xs: list[float]) -> str:
        return f"{c.median(xs):.0f} ({min(xs):.0f}-{max(xs):.0f})"

    if args.rounds:
        print(f"\nPer idle conversation ({args.idle:,} conversations, one turn each, SQLite, turns run by "
              f"{'100 workers' if args.spawn == 'workers' else 'one task each'}, contexts "
              f"{'kept' if args.keep_contexts else 'dropped'}), median of {args.rounds} rounds "
              "(min-max):")
    for name, runs in idle.items() if args.rounds else ():
        print(f"  {name}: {mm([r['bytes_per_conversation'] for r in runs])} B held (tracemalloc); "
              f"RSS growth {mm([r['rss_per_conversation'] for r in runs])} B")
    if args.turns:
        print(f"\nRSS over {args.turns:,} turns in waves over {args.conversations:,} conversations "
              f"(SQLite, keep_idle_context=0):")
        for name, py in pythons.items():
            r = c.run_child([me, "--child-turns", str(args.turns), str(args.conversations), str(args.step)],
                            code=py, timeout=3600)
            print(f"  {name}:")
            print("      turns   RSS MB  blocks  peak blocks  pymalloc arenas  glibc in use MB  turns/s")
            for q in r["points"]:
                print(f"    {q['turns']:>7,}  {q['rss']:7.1f}  {q['blocks']:6,}  {q['peak_blocks']:11,}  "
                      f"{q['arenas']:15}  {q['glibc']:15.1f}  {q['rate']:7.0f}", flush=True)
            half = [q for q in r["points"] if q["turns"] >= args.turns // 2]
            if len(half) >= 2:
                grew = half[-1]["rss"] - half[0]["rss"]
                print(f"    second half ({half[0]['turns']:,} -> {half[-1]['turns']:,} turns): RSS "
                      f"{grew:+.1f} MB ({grew * 2**20 / (half[-1]['turns'] - half[0]['turns']):+.1f} B per turn), "
                      f"pymalloc arenas {half[0]['arenas']} -> {half[-1]['arenas']}: "
                      f"{'flat' if abs(grew) <= args.flat_mb else 'NOT flat'} (bound {args.flat_mb} MB)")


if __name__ == "__main__":
    if sys.argv[1:2] in (["--child-idle"], ["--child-turns"]):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import _common

        _common.use_code_from_env()
        import durable

        print(f"durable from {durable.__file__}", file=sys.stderr)
    if len(sys.argv) >= 4 and sys.argv[1] == "--child-idle":
        print(json.dumps(child_idle(int(sys.argv[2]), sys.argv[3] == "trace", *sys.argv[4:6])))
    elif len(sys.argv) >= 4 and sys.argv[1] == "--child-turns":
        print(json.dumps(child_turns(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]) if sys.argv[4:] else 10_000)))
    else:
        main(sys.argv[1:])
