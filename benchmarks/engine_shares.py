"""Benchmark: the engine alone's step, split into what any engine with these records must do and
the engine's own part.

Run: `python benchmarks/engine_shares.py [--workflows 300] [--rounds 5]`.
Not a test: it prints medians (min-max) over `--rounds` rounds, each in a fresh child process.

A child runs `peers.py`'s 3-step tool workflow on `MemoryStorage` (the engine alone, as
`engine.py` does), timed, then runs it again keeping every batch the engine committed and every
request it sent. Then,
with no engine, it commits the same batches again to a fresh `MemoryStorage` (encoding them to
the stored JSON, the store's contract) and sends the same requests again to the faux model
(reading each stream to its end), timing each. What is left of the engine alone's time a step is
the engine's own part: building the records, the head and the live snapshots, the transition
checks, the requests, the scheduling. Issue 29's target for the engine alone (>= 3,000 steps/s,
333 µs a step) leaves that part what the store and the model do not use; the script prints how
many times less than today that is. The replays run hot (the same code over and over), so they
are a lower bound of what the store and the model cost inside a real step.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import os
import sys
import time

import _common as c
from engine import mm

TARGET_US = 1e6 / 3000


def child(n: int) -> dict:
    import anyio
    import peers

    from durable.models import FauxModel
    from durable.storage import memory

    batches: list = []
    requests: list = []
    commit, stream = memory.MemoryStorage.commit, FauxModel.stream

    async def keep_batch(self, batch):  # type: ignore[no-untyped-def]
        batches.append(copy.copy(batch))  # the store may fill it in: kept as it was sent
        return await commit(self, batch)

    def keep_request(self, request):  # type: ignore[no-untyped-def]
        requests.append(request)
        return stream(self, request)

    out = peers._ours("sequential", n, 1, peers.MEMORY)  # timed as it is
    memory.MemoryStorage.commit, FauxModel.stream = keep_batch, keep_request  # type: ignore[method-assign]
    peers._ours("sequential", n, 1, peers.MEMORY)  # the same run again, kept
    memory.MemoryStorage.commit, FauxModel.stream = commit, stream  # type: ignore[method-assign]
    steps = 3 * (n + peers.WARMUP)  # the warm-up's batches and requests are kept too

    async def replay() -> tuple[float, float]:
        store = memory.MemoryStorage()
        await store.open()
        t = time.perf_counter()
        for batch in batches:
            await store.commit(batch)
        stored = time.perf_counter() - t
        await store.close()
        decide = functools.partial(peers.decide_step, "sequential")
        model = FauxModel([decide] * len(requests), context_window=10**9)
        t = time.perf_counter()
        for request in requests:
            async for _ in model.stream(request):
                pass
        return stored, time.perf_counter() - t

    stored, asked = anyio.run(replay, backend="trio")
    return {"engine_us": out["wall"] / (3 * n) * 1e6, "store_us": stored / steps * 1e6, "model_us": asked / steps * 1e6,
            "batches_per_step": len(batches) / steps}


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[0] == "--child":
        print(json.dumps(child(int(argv[1]))))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workflows", type=int, default=300)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args(argv)
    runs = []
    for r in range(args.rounds):
        runs.append(c.run_child([os.path.abspath(__file__), "--child", str(args.workflows)]))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    engine = [x["engine_us"] for x in runs]
    store = [x["store_us"] for x in runs]
    model = [x["model_us"] for x in runs]
    own = [x["engine_us"] - x["store_us"] - x["model_us"] for x in runs]
    budget = [TARGET_US - x["store_us"] - x["model_us"] for x in runs]
    print(f"3-step tool workflow on MemoryStorage, {args.workflows} workflows per child, {args.rounds} rounds, trio; "
          f"{runs[-1]['batches_per_step']:.2f} commits a step")
    print(f"the engine alone:                     {mm(engine)} us a step ({mm([1e6 / e for e in engine])} steps/s)")
    print(f"  the store's commits, replayed:      {mm(store)} us a step")
    print(f"  the faux model's streams, replayed: {mm(model)} us a step")
    print(f"  the engine's own part:              {mm(own)} us a step")
    print(f"the target (>= 3,000 steps/s, {TARGET_US:.0f} us a step) leaves the engine's own part {mm(budget)} us: "
          f"{mm([o / b for o, b in zip(own, budget, strict=True)], '.1f')}x less than today")


if __name__ == "__main__":
    main(sys.argv[1:])
