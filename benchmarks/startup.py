"""Benchmark: process start to the interrupted request sent again, and what the imports cost.

Run: `python benchmarks/startup.py [--rounds 7] [--entries 1000] [--baseline DIR] [--importtime 25]`.
Not a test: it prints medians (min-max) over `--rounds` interleaved rounds and whether the target
is met (process start to the interrupted request sent again <= 150 ms). Prints only.

Each round runs, one after the other, for this checkout (and for `--baseline DIR`, another
checkout of durable imported through PYTHONPATH by the same children, e.g. one made with
`git archive main | tar -x -C DIR`):

1. `python -c pass`: the interpreter's own start;
2. `python -c "import durable"`;
3. `python -c STACK`: the decided stack's own imports with no durable module (anyio with its asyncio
   backend, attrs, cattrs, json, sqlite3): with the interpreter's start, what any durable process
   pays before its first module, the floor under the target;
4. the recovery of benchmarks/recovery.py: a child streams a partial and is SIGKILLed; a new
   process imports durable, opens the file (1,000 entries of history), charges the cut-off
   attempt and sends attempt 2 (on asyncio, anyio's default backend). Timed from its spawn to
   the retry request reaching the model, with the harness's own share (open to request) and the
   process's CPU time (user + system, from the kernel: less disturbed by other load than wall
   time), also as a ratio to the bare interpreter's start measured in the same round.

`--importtime N` then runs the recovering child under `python -X importtime` once per round and
prints the N modules of largest median self time (with their cumulative time).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _common as c
import recovery

TARGET = 0.150
STACK = "import anyio, anyio._backends._asyncio, anyio.to_thread, attrs, cattrs, cattrs.gen, json, sqlite3"
"""What the recovering process imports of the stack (`pyproject.toml`'s dependencies and the
standard library modules durable needs to open a file), with no module of durable."""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _env(checkout: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = c.child_env()
    if checkout is not None:
        env["PYTHONPATH"] = checkout
    return {**env, **(extra or {})}


def _plain(code: str, checkout: str | None) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -c code`."""
    env = _env(checkout)
    cpu, t = _cpu(), time.perf_counter()
    # `-c` puts the working directory first on the path: the baseline's, so its durable is imported
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=checkout or str(c.ROOT))
    return time.perf_counter() - t, _cpu() - cpu


def _history(path: str, entries: int, checkout: str | None) -> None:
    """The history file, made by `checkout`'s durable (a file of a newer schema is refused by an
    older one)."""
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(recovery.__file__)!r}); import recovery; "
            f"recovery.build_history({path!r}, {entries})")
    subprocess.run([sys.executable, "-c", code], check=True, env=_env(checkout), cwd=checkout or str(c.ROOT))


def _killed_copy(base: str, checkout: str | None) -> tuple[str, str]:
    """A copy of the history file (in a folder of its own) with a victim killed mid-stream on it
    (run by `checkout`'s durable), and the victim's input id."""
    path = os.path.join(tempfile.mkdtemp(dir=os.path.dirname(base)), "session.sqlite")
    shutil.copyfile(base, path)
    me = recovery.__file__
    proc = subprocess.Popen([sys.executable, me, "--victim", path], stdout=subprocess.PIPE, text=True,
                            env=_env(checkout), cwd=str(c.ROOT))
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("PARTIAL_COMMITTED"):
            os.kill(proc.pid, 9)
            proc.wait()
            return path, line.split()[1]
    raise RuntimeError("the victim ended before its partial was committed")


def _recover(path: str, sid: str, checkout: str | None, importtime: bool = False) -> dict:
    env = _env(checkout)
    flags = ["-X", "importtime"] if importtime else []
    cpu = _cpu()
    proc = subprocess.run([sys.executable, *flags, recovery.__file__, "--recover", path, sid], capture_output=True,
                          text=True, env=env, cwd=str(c.ROOT), timeout=300)
    used = _cpu() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"recovery failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    out = json.loads([x for x in proc.stdout.splitlines() if x.startswith("{")][-1])
    if "Answered" not in out["status"] or out["attempt"] != 2:
        raise RuntimeError(f"recovery did not answer with attempt 2: {out}")
    return {**out, "cpu": used, "importtime": proc.stderr if importtime else ""}


def _import_rows(texts: list[str], top: int) -> list[list[str]]:
    selfs: dict[str, list[int]] = {}
    cums: dict[str, list[int]] = {}
    for text in texts:
        for line in text.splitlines():
            parts = line.removeprefix("import time:").split("|")
            if len(parts) != 3 or not parts[0].strip().isdigit():
                continue
            name = parts[2].strip()
            selfs.setdefault(name, []).append(int(parts[0]))
            cums.setdefault(name, []).append(int(parts[1]))
    order = sorted(selfs, key=lambda k: -c.median(selfs[k]))[:top]
    return [[k, f"{c.median(selfs[k]) / 1000:.1f}", f"{c.median(cums[k]) / 1000:.1f}"] for k in order]


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=7, help=">= 5 for the figures")
    p.add_argument("--entries", type=int, default=1000)
    p.add_argument("--baseline", help="another checkout of durable to compare with (its root folder)")
    p.add_argument("--importtime", type=int, default=0, metavar="N", help="print the N slowest imports")
    args = p.parse_args(argv)
    checkouts: dict[str, str | None] = {"this": None}
    if args.baseline:
        checkouts["baseline"] = os.path.abspath(args.baseline)
        import compileall

        compileall.compile_dir(os.path.join(checkouts["baseline"], "durable"), quiet=1)
    print(f"startup: {c.machine_line()}")
    workdir = tempfile.mkdtemp(prefix="durable-bench-startup-")
    runs: dict[str, dict[str, list[float]]] = {k: {} for k in checkouts}
    imports: dict[str, list[str]] = {k: [] for k in checkouts}
    try:
        bases = {name: os.path.join(workdir, f"history-{name}.sqlite") for name in checkouts}
        for name, checkout in checkouts.items():
            _history(bases[name], args.entries, checkout)
        for n in range(args.rounds):
            for name, checkout in checkouts.items():
                got = runs[name]
                for key, code in (("python", "pass"), ("import durable", "import durable"), ("stack", STACK)):
                    wall, cpu = _plain(code, checkout)
                    got.setdefault(f"{key} wall", []).append(wall)
                    got.setdefault(f"{key} cpu", []).append(cpu)
                path, sid = _killed_copy(bases[name], checkout)
                r = _recover(path, sid, checkout)
                for key in ("to_request", "harness_to_request", "imports", "cpu"):
                    got.setdefault(key, []).append(r[key])
                got.setdefault("to_request / python", []).append(r["to_request"] / got["python wall"][-1])
                if args.importtime:
                    path, sid = _killed_copy(bases[name], checkout)
                    imports[name].append(_recover(path, sid, checkout, importtime=True)["importtime"])
            print(f"round {n + 1}/{args.rounds}: " + ", ".join(
                f"{k} {c.ms(runs[k]['to_request'][-1])} ms" for k in checkouts), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    def mm(xs: list[float], scale: float = 1000, fmt: str = "{:.1f}") -> str:
        return f"{fmt.format(c.median(xs) * scale)} ({fmt.format(min(xs) * scale)}-{fmt.format(max(xs) * scale)})"

    keys = [("python wall", "python -c pass (ms)"), ("python cpu", "  its CPU (ms)"),
            ("import durable wall", "import durable (ms)"), ("import durable cpu", "  its CPU (ms)"),
            ("stack wall", "the stack's imports alone, no durable module (ms)"), ("stack cpu", "  its CPU (ms)"),
            ("imports", "recovery: its imports (ms)"), ("harness_to_request", "recovery: open -> request (ms)"),
            ("to_request", "recovery: process start -> request (ms)"), ("cpu", "recovery: CPU of the process (ms)")]
    rows = [[label, *(mm(runs[k][key]) for k in checkouts)] for key, label in keys]
    rows.append(["recovery / python -c pass (same round)",
                 *(mm(runs[k]["to_request / python"], 1, "{:.2f}") for k in checkouts)])
    if args.baseline:
        for key, label in (("to_request", "process start -> request"), ("cpu", "CPU of the recovering process")):
            ratio = c.median(runs["this"][key]) / c.median(runs["baseline"][key])
            rows.append([f"this / baseline: {label}", f"{ratio:.2f}x", ""])
    print()
    print(c.table([f"median (min-max) of {args.rounds} rounds, load average {os.getloadavg()[0]:.1f}",
                   *checkouts], rows))
    med = c.median(runs["this"]["to_request"])
    print(f"\ntarget: process start -> interrupted request sent again <= {TARGET * 1000:.0f} ms: "
          f"{c.ms(med)} ms, {c.verdict(med <= TARGET)}")
    floor = c.median(runs["this"]["stack wall"])
    print(f"the floor: the interpreter's start and the stack's imports alone take {mm(runs['this']['stack wall'])} ms, "
          f"{floor / TARGET:.2f}x the target, before any module of durable; "
          f"durable's own share (process start -> request less that floor): {c.ms(med - floor)} ms")
    for name, texts in imports.items():
        if texts:
            print(f"\nslowest imports of the recovering process ({name}), median of {len(texts)} runs under "
                  "-X importtime:")
            print(c.table(["module", "self (ms)", "cumulative (ms)"], _import_rows(texts, args.importtime)))


if __name__ == "__main__":
    main(sys.argv[1:])
