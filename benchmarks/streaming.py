"""Benchmark: the CPU cost of persisting a streamed answer's partials.

Run: `python benchmarks/streaming.py [--seconds 5] [--rate 1000]`.
Not a test: it prints a table and whether the target (persisting partials at
`progress.persist_within` = 100 ms costs < 5% of one core) is met, and writes
`results/streaming.json` and its section of `results/results.md`.

A FauxModel streams one answer of `rate x seconds` tokens (4 characters each) at `rate`
tokens/s. Each case runs in a fresh process and measures its CPU time (user + system, all
threads: `resource.getrusage`) over the stream's wall time:

- baseline: the same faux stream consumed directly, no harness;
- the harness with `persist_within` 0.1 s (the default) and 0 (every delta committed), on an
  SQLite file with the default synchronous level (EXTERNAL): one submission, streamed, answered.

The cost of persisting partials is the harness's CPU minus the baseline's, as a fraction of one
core. The partial is committed into the live document as the whole text so far (what a UI
needs to render it after a crash), so a commit's size grows with the answer.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time

TOKEN = "tok "  # 4 characters, the faux model's token size


def _usage() -> tuple[float, float]:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return time.perf_counter(), u.ru_utime + u.ru_stime


def _io_written() -> int | None:
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def child(mode: str, rate: float, seconds: float) -> None:
    import anyio

    import durable
    from durable.models import FauxModel, ModelRequest, faux

    tokens = int(rate * seconds)
    text = TOKEN * tokens

    async def baseline() -> dict:
        model = FauxModel([faux.reply(text)], tokens_per_second=rate, token_size=len(TOKEN))
        request = ModelRequest("system", ())
        n = 0
        t0, c0 = _usage()
        async for event in model.stream(request):
            n += type(event).__name__ == "TextDelta"
        t1, c1 = _usage()
        return {"wall": t1 - t0, "cpu": c1 - c0, "deltas": n}

    async def harness(persist_within: float) -> dict:
        path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-stream-"), "s.sqlite")
        model = FauxModel([faux.reply(text)], tokens_per_second=rate, token_size=len(TOKEN))
        settings = durable.Settings(progress=durable.Progress(persist_within=persist_within))
        async with durable.open_harness(path, model=model, settings=settings) as h:
            # warm up the engine (codec hooks, statements) with a short turn, outside the measurement
            model.script.insert(0, faux.reply("warm up"))
            await (await h.root.submit("warm up")).wait()
            commits0, io0 = h.storage.commits, _io_written()
            t0, c0 = _usage()
            sub = await h.root.submit("Stream a long answer")
            status = await sub.wait()
            t1, c1 = _usage()
            commits, io1 = h.storage.commits - commits0, _io_written()
        assert isinstance(status, durable.Answered), status
        return {"wall": t1 - t0, "cpu": c1 - c0, "deltas": tokens, "commits": commits,
                "bytes_written": (io1 - io0) if io0 is not None and io1 is not None else None}

    import shutil

    tempfile.tempdir = tempfile.mkdtemp(prefix="durable-bench-stream-")  # every file of this child goes here
    try:
        if mode == "baseline":
            r = anyio.run(baseline)
        else:
            r = anyio.run(harness, float(mode))
    finally:
        shutil.rmtree(tempfile.tempdir, ignore_errors=True)
    r["mode"] = mode
    print(json.dumps(r))


def main(argv: list[str]) -> None:
    import argparse

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common as c

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--rate", type=float, default=1000.0, help="tokens per second")
    args = p.parse_args(argv)
    me = os.path.abspath(__file__)
    print(f"streaming: {c.machine_line()}")
    results = {}
    for mode in ("baseline", "0.1", "0"):
        print(f"  {mode} ...", flush=True)
        results[mode] = c.run_child([me, "--child", mode, str(args.rate), str(args.seconds)])
        r = results[mode]
        print(f"    {r['deltas'] / r['wall']:.0f} tokens/s over {r['wall']:.2f} s, CPU {r['cpu']:.3f} s", flush=True)
    base = results["baseline"]
    base_frac = base["cpu"] / base["wall"]
    body = []
    for mode, label in (("baseline", "no harness (faux stream consumed directly)"),
                        ("0.1", "harness, persist_within 0.1 s (default)"),
                        ("0", "harness, persist_within 0 (every delta)")):
        r = results[mode]
        frac = r["cpu"] / r["wall"]
        extra = "-" if mode == "baseline" else f"{100 * (frac - base_frac):.1f}%"
        commits = r.get("commits")
        body.append([label, f"{r['deltas'] / r['wall']:.0f}", f"{r['wall']:.2f} s", f"{r['cpu']:.3f} s",
                     f"{100 * frac:.1f}%", extra, commits if commits is not None else "-",
                     f"{r['bytes_written'] / 1e6:.1f} MB" if r.get("bytes_written") is not None else "-"])
    r01 = results["0.1"]
    extra01 = r01["cpu"] / r01["wall"] - base_frac
    targets = [("persisting partials at persist_within 0.1 s < 5% of one core (harness - baseline)",
                f"{100 * extra01:.1f}%", extra01 < 0.05)]
    md = "\n".join([
        f"### Streaming: CPU cost of persisting partials ({args.rate:.0f} tokens/s for {args.seconds:g} s)\n",
        c.table(["case", "tokens/s", "wall", "CPU (all threads)", "CPU / wall (one core = 100%)",
                 "cost of persisting (minus baseline)", "commits", "written to disk"], body),
        "",
        c.table(["target", "measured", "result"], [(a, b, c.verdict(ok)) for a, b, ok in targets]),
        "",
        "Each case in a fresh process; synchronous=EXTERNAL (partials are lazy commits); the faux model paces tokens with a 1 ms sleep each, so "
        "its tokens/s is a little under the nominal rate. \"Written to disk\" is the process's write_bytes "
        "(/proc/self/io: WAL frames and checkpoints). The live document holds the whole partial text, so "
        "with persist_within 0 each commit rewrites the answer so far.",
    ])
    print()
    print(md)
    c.save("streaming", {"rate": args.rate, "seconds": args.seconds, "results": results,
                         "targets": [{"target": a, "measured": b, "met": ok} for a, b, ok in targets]}, md)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        child(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
    else:
        main(sys.argv[1:])
