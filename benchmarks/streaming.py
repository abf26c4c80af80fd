"""Benchmark: what persisting a streamed answer costs: bytes written to disk, and CPU.

Run: `python benchmarks/streaming.py [--rounds 3] [--before REF] [--seconds 5] [--rate 1000]`.
Not a test: it prints tables and whether the targets are met, and writes
`results/streaming.json` and its section of `results/results.md`.

(a) Write amplification. A FauxModel streams one answer of 30 kB or 300 kB (prose-like words,
    `_answer`) in deltas of 100 characters at 1,000 deltas/s (100 kB/s), into a harness on a fresh
    SQLite file (defaults: WAL, external synchrony), at `progress.persist_within` 0, 0.02 and
    0.1 s. Each case runs in a fresh process and measures, from the submit to the harness's close
    (which checkpoints the WAL into the file), the process's `write_bytes` (/proc/self/io: every
    page it dirtied: WAL, database and the partials beside it) over the answer's length, its CPU
    time (user + system, all threads) and the commits. The same turn with a one-line answer (100
    characters) is measured too: its bytes are what any turn writes (the input, the run, the
    checkpoint of them), and "the answer's share" is (written - that) / text. The same cases run
    on the code of `--before` (default: main before partials were appended beside the file) in
    the same run, interleaved: medians (min-max) of `--rounds` rounds. Target: the answer's share
    <= 3x the text at any `persist_within` (the whole turn's ratio printed beside it: at 30 kB the
    turn's own ~170 kB dominates it); CPU no higher than before.
(c) Where the bytes go: `python benchmarks/streaming.py --where SIZE PERSIST_WITHIN [--tool]` runs the
    case of (a) (with `--tool`: of (d), at that `output_interval`) once on this code and prints each transaction of the measured turn with the pages it
    wrote to the WAL, by table or index (SQLite's `dbstat`; a page freed since shows as `free`),
    the lazy commits appended beside the file, and the bytes the close wrote (its checkpoint).
(d) A tool's streamed output: `python benchmarks/streaming.py --tool-output [--rounds 5] [--before REF]
    [--sizes 300000]` runs a turn whose one tool streams SIZE characters of the same prose (deltas
    of 100 characters, a 1 ms sleep after each) at `progress.output_interval` 0, 0.02 and 0.1 s,
    on this code and on `--before`, interleaved, each in a fresh process: bytes written from the
    submit to the close (as in (a)) over the output's length, commits, CPU; medians (min-max).
(b) CPU cost of persisting partials: `--rate` tokens/s (4 characters each) for `--seconds` s, the
    harness at `persist_within` 0.1 and 0, against the faux stream consumed directly.
    Target: < 5% of one core at 0.1 s.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

TOKEN = "tok "  # 4 characters, the faux model's token size in (b)
DELTA = 100  # characters a delta in (a)
DELTAS_PER_SECOND = 1000
ONE_LINE = 100  # characters of the answer of the turn whose bytes any turn writes


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


def _answer(size: int) -> str:
    """`size` characters of prose that compresses as prose does (a repeated line would make a
    compressed side file look free): words drawn, seeded, from docs/spec.md's, in its frequencies."""
    import random
    import re

    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "spec.md")) as f:
        words = re.findall(r"[A-Za-z][A-Za-z'-]*[.,:;]?", f.read())
    rng = random.Random(25)
    out: list[str] = []
    n = 0
    while n < size:
        word = rng.choice(words)
        out.append(word)
        n += len(word) + 1
    return " ".join(out)[:size]


async def _measured(h: Any, prompt: str) -> tuple[Any, dict]:
    """On the harness `h` (not open yet): a warm-up turn, then the turn `prompt`, measured from
    its submit to the harness's close; its status and the figures."""
    async with h:
        await (await h.root.submit("warm up")).wait()
        commits0, io0 = h.storage.commits, _io_written()
        t0, c0 = _usage()
        status = await (await h.root.submit(prompt)).wait()
        t1, c1 = _usage()
        commits = h.storage.commits - commits0
    io1 = _io_written()  # after the close: its checkpoint of the WAL into the file counts
    return status, {"wall": t1 - t0, "cpu": c1 - c0, "commits": commits,
                    "bytes": (io1 - io0) if io0 is not None and io1 is not None else None}


def amplification_child(size: int, persist_within: float) -> None:
    import anyio

    import durable
    from durable.models import FauxModel, faux

    text = _answer(size)

    async def main() -> dict:
        path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-amp-"), "s.sqlite")
        model = FauxModel([faux.reply("warm up"), faux.reply(text)], tokens_per_second=DELTAS_PER_SECOND,
                          token_size=DELTA)
        settings = durable.Settings(progress=durable.Progress(persist_within=persist_within), check_integrity=False)
        status, found = await _measured(durable.open_harness(path, model=model, settings=settings),
                                        "Stream a long answer")
        assert isinstance(status, durable.Answered) and len(status.text) == size, status
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
        return found

    print(json.dumps(anyio.run(main)))


def tool_child(size: int, interval: float) -> None:
    """(d): one turn whose tool streams `size` characters of output (see the module)."""
    import anyio

    import durable
    from durable.models import FauxModel, faux

    text = _answer(size)

    async def dump(args, api, ctx):  # unannotated: a tool (args, api, ctx)
        for i in range(0, size, DELTA):
            await api.output(text[i:i + DELTA])
            await anyio.sleep(1 / DELTAS_PER_SECOND)
        return "dumped"

    async def main() -> dict:
        path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-tool-"), "s.sqlite")
        tool = durable.define_tool("dump", "Streams its output", execute=dump)
        model = FauxModel([faux.reply("warm up"), faux.reply("", tool_calls=[faux.call("dump", {}, id="c1")]),
                           faux.reply("ok")])
        settings = durable.Settings(progress=durable.Progress(output_interval=interval), check_integrity=False)
        status, found = await _measured(durable.open_harness(path, model=model, tools=[tool], settings=settings),
                                        "Dump it")
        assert isinstance(status, durable.Answered), status
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
        return found

    print(json.dumps(anyio.run(main, backend="trio")))


def tool_main(argv: list[str]) -> None:
    """(d), printed (not saved)."""
    import argparse
    import statistics

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common as c

    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--before", required=True, help="the code to compare with (a git ref)")
    p.add_argument("--sizes", default="300000")
    p.add_argument("--intervals", default="0,0.02,0.1")
    args = p.parse_args(argv)
    me = os.path.abspath(__file__)
    print(f"streaming --tool-output: {c.machine_line()}")
    before = _export(args.before)
    cases = [(code, int(size), float(iv)) for size in args.sizes.split(",") for iv in args.intervals.split(",")
             for code in ("before", "now")]
    found = _interleaved(me, "--tool", cases, before, args.rounds, "the output")
    rows = []
    for _, size, iv in cases[::2]:
        b, n = found[("before", size, iv)], found[("now", size, iv)]
        rows.append([f"{size // 1000} kB", f"{iv:g} s", _mm([x["bytes"] / size for x in b], "{:.1f}x"),
                     _mm([x["bytes"] / size for x in n], "{:.1f}x"),
                     " / ".join(f"{statistics.median(x['commits'] for x in runs):.0f}" for runs in (b, n)),
                     _mm([x["cpu"] for x in b], "{:.3f} s"), _mm([x["cpu"] for x in n], "{:.3f} s")])
    print()
    print(c.table(["output", "output_interval", "written / output, before", "written / output, now",
                   "commits before / now", "CPU before", "CPU now"], rows))


def where_child(size: int, persist_within: float, tool: bool = False) -> None:
    """(c): the pages each transaction of the measured turn wrote, by table (see the module)."""
    import collections
    import sqlite3

    import anyio

    import durable
    from durable.models import FauxModel, faux
    from durable.storage.sqlite import write as w

    text = _answer(size)
    turn: list[tuple[str, list[int]]] = []  # (what, the WAL frames' page numbers) a transaction
    measuring = [False]
    appended = [0, 0]  # lazy commits beside the file, their bytes
    write = w.SQLiteWrites.write

    def wal_size(path: str) -> int:
        try:
            return os.path.getsize(path + "-wal")
        except OSError:
            return 0

    def traced(self: w.SQLiteWrites, rows: object) -> None:
        if not measuring[0]:
            return write(self, rows)  # type: ignore[arg-type]
        before, io0, lazy = wal_size(self.path), _io_written(), self.appended
        write(self, rows)  # type: ignore[arg-type]
        if self.appended != lazy:
            appended[0] += 1
            appended[1] += (_io_written() or 0) - (io0 or 0)
            return
        with open(self.path + "-wal", "rb") as f:
            frame = 24 + int.from_bytes(f.read(12)[8:12], "big")  # the WAL header holds the page size
            f.seek(max(before, 32))
            data = f.read()
        pages = [int.from_bytes(data[i:i + 4], "big") for i in range(0, len(data) - 23, frame)]
        what = "barrier" if getattr(rows, "barrier", False) else "lazy"
        turn.append((what, pages))

    w.SQLiteWrites.write = traced  # type: ignore[method-assign]

    async def main() -> None:
        path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-where-"), "s.sqlite")
        model = FauxModel([faux.reply("warm up"), faux.reply(text)], tokens_per_second=DELTAS_PER_SECOND,
                          token_size=DELTA)
        progress = durable.Progress(persist_within=persist_within)
        tools = []
        if tool:  # (d)'s turn: one tool streams `text`
            async def dump(args, api, ctx):  # unannotated: a tool (args, api, ctx)
                for i in range(0, size, DELTA):
                    await api.output(text[i:i + DELTA])
                    await anyio.sleep(1 / DELTAS_PER_SECOND)
                return "dumped"

            tools = [durable.define_tool("dump", "Streams its output", execute=dump)]
            model = FauxModel([faux.reply("warm up"), faux.reply("", tool_calls=[faux.call("dump", {}, id="c1")]),
                               faux.reply("ok")])
            progress = durable.Progress(output_interval=persist_within)
        settings = durable.Settings(progress=progress, check_integrity=False)
        async with durable.open_harness(path, model=model, tools=tools, settings=settings) as h:
            await (await h.root.submit("warm up")).wait()
            io0 = _io_written() or 0
            measuring[0] = True
            await (await h.root.submit("Stream a long answer")).wait()
            measuring[0] = False
            io1 = _io_written() or 0
            conn = sqlite3.connect(path)
            names = dict((pageno, name) for name, pageno in conn.execute("SELECT name, pageno FROM dbstat"))
            conn.close()
        io2 = _io_written() or 0
        print(f"{size} characters at persist_within {persist_within:g} s: {io2 - io0} bytes written "
              f"({(io2 - io0) / size:.1f}x): {io1 - io0} by the turn, {io2 - io1} by the close (its checkpoint)")
        print(f"  {appended[0]} lazy commits appended beside the file: {appended[1]} bytes")
        for n, (what, pages) in enumerate(turn, 1):
            by = collections.Counter(names.get(p, "free") if p > 2 else {1: "header", 2: "pointer map"}[p]
                                     for p in pages)
            print(f"  transaction {n} ({what}): {len(pages)} pages: "
                  + ", ".join(f"{name} {k}" for name, k in by.most_common()))
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)

    anyio.run(main)


def cpu_child(mode: str, rate: float, seconds: float) -> None:
    import anyio

    import durable
    from durable.models import FauxModel, ModelRequest, faux

    tokens = int(rate * seconds)
    text = TOKEN * tokens

    async def baseline() -> dict:
        model = FauxModel([faux.reply(text)], tokens_per_second=rate, token_size=len(TOKEN))
        n = 0
        t0, c0 = _usage()
        async for event in model.stream(ModelRequest("system", ())):
            n += type(event).__name__ == "TextDelta"
        t1, c1 = _usage()
        return {"wall": t1 - t0, "cpu": c1 - c0, "deltas": n}

    async def harness(persist_within: float) -> dict:
        path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-stream-"), "s.sqlite")
        model = FauxModel([faux.reply("warm up"), faux.reply(text)], tokens_per_second=rate, token_size=len(TOKEN))
        settings = durable.Settings(progress=durable.Progress(persist_within=persist_within))
        async with durable.open_harness(path, model=model, settings=settings) as h:
            await (await h.root.submit("warm up")).wait()
            commits0, io0 = h.storage.commits, _io_written()
            t0, c0 = _usage()
            status = await (await h.root.submit("Stream a long answer")).wait()
            t1, c1 = _usage()
            commits, io1 = h.storage.commits - commits0, _io_written()
        assert isinstance(status, durable.Answered), status
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
        return {"wall": t1 - t0, "cpu": c1 - c0, "deltas": tokens, "commits": commits,
                "bytes": (io1 - io0) if io0 is not None and io1 is not None else None}

    r = anyio.run(baseline) if mode == "baseline" else anyio.run(harness, float(mode))
    print(json.dumps(r))


def _export(ref: str) -> str:
    """The tree of `ref` in a temporary directory (its `durable` importable from there)."""
    import _common as c

    folder = tempfile.mkdtemp(prefix="durable-bench-before-")
    archive = subprocess.run(["git", "archive", ref, "durable"], capture_output=True, check=True, cwd=c.ROOT).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    return folder


def _run(argv: list[str], pythonpath: str | None) -> dict:
    import _common as c

    env = c.child_env()
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, cwd=str(c.ROOT),
                          timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"child {argv} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])


def _interleaved(me: str, flag: str, cases: list[tuple[str, int, float]], before: str, rounds: int,
                 what: str) -> dict[tuple[str, int, float], list[dict]]:
    """Each case (code "before" or "now", size, interval) run as `me flag size interval` in a
    fresh process, `rounds` times interleaved; `before` (the exported old code) is removed after."""
    found: dict[tuple[str, int, float], list[dict]] = {case: [] for case in cases}
    try:
        for rnd in range(rounds):
            for code, size, iv in cases:
                r = _run([me, flag, str(size), str(iv)], before if code == "before" else None)
                found[(code, size, iv)].append(r)
                print(f"  round {rnd + 1}: {code:6} {size // 1000:3d} kB at {iv:g} s: {r['bytes'] / size:6.1f}x "
                      f"{what}, {r['commits']} commits, CPU {r['cpu']:.3f} s", flush=True)
    finally:
        shutil.rmtree(before, ignore_errors=True)
    return found


def _mm(xs: list[float], fmt: str) -> str:
    import statistics

    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def main(argv: list[str]) -> None:
    import argparse
    import statistics

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common as c

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--before", default="281343c", help="the code to compare with (a git ref)")
    p.add_argument("--sizes", default="30000,300000")
    p.add_argument("--persist", default="0,0.02,0.1")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--rate", type=float, default=1000.0, help="tokens per second in (b)")
    args = p.parse_args(argv)
    me = os.path.abspath(__file__)
    print(f"streaming: {c.machine_line()}")
    before = _export(args.before)
    sizes = [int(s) for s in args.sizes.split(",")]
    persists = [float(x) for x in args.persist.split(",")]
    cases = [(code, size, pw) for size in [ONE_LINE, *sizes] for pw in persists for code in ("before", "now")]
    amp = _interleaved(me, "--amplification", cases, before, args.rounds, "the text")
    body, rows_json, worst, worst_share = [], [], 0.0, 0.0
    for size in sizes:
        for pw in persists:
            b, n = amp[("before", size, pw)], amp[("now", size, pw)]
            ratio_b = [x["bytes"] / size for x in b]
            ratio_n = [x["bytes"] / size for x in n]
            # The answer's share: each round's bytes less the one-line turn's of the same round and code.
            share_b = [(x["bytes"] - y["bytes"]) / size for x, y in zip(b, amp[("before", ONE_LINE, pw)], strict=True)]
            share_n = [(x["bytes"] - y["bytes"]) / size for x, y in zip(n, amp[("now", ONE_LINE, pw)], strict=True)]
            worst = max(worst, statistics.median(ratio_n))
            worst_share = max(worst_share, statistics.median(share_n))
            commits = [statistics.median(x["commits"] for x in runs) for runs in (b, n)]
            body.append([f"{size // 1000} kB", f"{pw:g} s", _mm(ratio_b, "{:.1f}x"), _mm(ratio_n, "{:.1f}x"),
                         _mm(share_b, "{:.1f}x"), _mm(share_n, "{:.1f}x"),
                         f"{statistics.median(x['bytes'] for x in n) / 1e6:.2f} MB",
                         f"{commits[0]:.0f} / {commits[1]:.0f}",
                         _mm([x["cpu"] for x in b], "{:.3f} s"), _mm([x["cpu"] for x in n], "{:.3f} s")])
            rows_json.append({"size": size, "persist_within": pw, "before": b, "now": n})
    for pw in persists:
        rows_json.append({"size": ONE_LINE, "persist_within": pw, "before": amp[("before", ONE_LINE, pw)],
                          "now": amp[("now", ONE_LINE, pw)]})
    one_line = _mm([x["bytes"] / 1e3 for pw in persists for x in amp[("now", ONE_LINE, pw)]], "{:.0f} kB")

    print("  (b) CPU cost of persisting partials ...", flush=True)
    cpu = {mode: _run([me, "--cpu", mode, str(args.rate), str(args.seconds)], None)
           for mode in ("baseline", "0.1", "0")}
    base_frac = cpu["baseline"]["cpu"] / cpu["baseline"]["wall"]
    cpu_rows = []
    for mode, label in (("baseline", "no harness (faux stream consumed directly)"),
                        ("0.1", "harness, persist_within 0.1 s (default)"),
                        ("0", "harness, persist_within 0 (every delta)")):
        r = cpu[mode]
        frac = r["cpu"] / r["wall"]
        cpu_rows.append([label, f"{r['deltas'] / r['wall']:.0f}", f"{r['wall']:.2f} s", f"{r['cpu']:.3f} s",
                         f"{100 * frac:.1f}%", "-" if mode == "baseline" else f"{100 * (frac - base_frac):.1f}%",
                         r.get("commits", "-"), f"{r['bytes'] / 1e6:.1f} MB" if r.get("bytes") is not None else "-"])
    extra01 = cpu["0.1"]["cpu"] / cpu["0.1"]["wall"] - base_frac
    # The target is judged on what the streamed answer costs (the answer's share): a turn writes its
    # input, its run and their checkpoint (`one_line`) whatever its answer, which no answer's size
    # makes 3x of anything; the whole turn's ratio is printed beside it, not judged.
    targets = [("bytes written for the streamed answer (the answer's share) <= 3x the text at every "
                "persist_within (worst median)", f"{worst_share:.1f}x", worst_share <= 3),
               (f"for information: the whole turn, the answer and the {one_line} any turn writes (worst median)",
                f"{worst:.1f}x", None),
               ("persisting partials at persist_within 0.1 s < 5% of one core (harness - baseline)",
                f"{100 * extra01:.1f}%", extra01 < 0.05)]
    md = "\n".join([
        f"### Streaming: bytes written for a streamed answer, before ({args.before}) and now\n",
        c.table(["answer", "persist_within", "written / text, before", "written / text, now",
                 "answer's share, before", "answer's share, now", "written now", "commits before / now", "CPU before",
                 "CPU now"], body),
        "",
        f"Deltas of {DELTA} characters at {DELTAS_PER_SECOND:,}/s (100 kB/s); each case in a fresh process, "
        f"medians (min-max) of {args.rounds} interleaved rounds; written = write_bytes of /proc/self/io from the "
        "submit to the harness's close (WAL frames, the close's checkpoint into the file, the partials beside it); "
        f"the answer's share: less the bytes of the same turn with a one-line answer (now: {one_line} over every "
        "round and interval); CPU from the submit to the answer. Before: the code of `--before`. Now: a flush that "
        "only appends is a record appended to `<file>-partials` (compressed, no transaction, "
        "durable.storage.sqlite.partials), as is the text a lazy transaction starts, folded into the file by the "
        "next barrier; the submission refers to its entry's text; long bodies (the answer's assistant entry) are "
        "stored packed (deflated, base64: "
        "durable.storage.packing, schema 10).",
        "",
        f"### Streaming: CPU cost of persisting partials ({args.rate:.0f} tokens/s for {args.seconds:g} s)\n",
        c.table(["case", "tokens/s", "wall", "CPU (all threads)", "CPU / wall (one core = 100%)",
                 "cost of persisting (minus baseline)", "commits", "written to disk"], cpu_rows),
        "",
        c.table(["target", "measured", "result"], [(a, b, "-" if ok is None else c.verdict(ok)) for a, b, ok in targets]),
    ])
    print()
    print(md)
    c.save("streaming", {"rounds": args.rounds, "before": args.before, "amplification": rows_json, "cpu": cpu,
                         "targets": [{"target": a, "measured": b, "met": ok} for a, b, ok in targets]}, md)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--amplification":
        amplification_child(int(sys.argv[2]), float(sys.argv[3]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--where":
        where_child(int(sys.argv[2]), float(sys.argv[3]), "--tool" in sys.argv[4:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "--tool":
        tool_child(int(sys.argv[2]), float(sys.argv[3]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--tool-output":
        tool_main(sys.argv[2:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "--cpu":
        cpu_child(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
    else:
        main(sys.argv[1:])
