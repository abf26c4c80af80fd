"""Benchmark: the SQLite session store against raw sqlite3, group commit, and open time.

Run: `python benchmarks/storage.py [--dir DIR] [--quick]`. Not a test: it prints a table of
figures, ratios and targets, and whether each target is met. Files go to a temporary directory
under DIR (default: the system temp dir, /tmp), which should be the file system the tests use.

Rates are medians (min-max) of `--rounds` (5) interleaved rounds; every ratio is the median of the
ratios measured within each round.

(a) Sequential commits/s: one awaited `store.commit` after another, against raw `sqlite3` with the
    same pragmas (WAL, synchronous=FULL) writing the same pre-encoded rows with the same
    statements, one transaction per commit. Target: store >= 0.5x raw.
(b) 8 and 64 concurrent committers (each its own conversation) through group commit, against the
    raw one-transaction-per-commit rate of (a). Target: >= 3x raw at 64. For context the table also
    shows raw sqlite3 with synchronous=OFF: what the same statements cost without any fsync, the
    ceiling that saving fsyncs (all group commit does) can approach.
(d) With `--before REF`: (a) and (b) at 64 committers on the code of REF and on this code, each in
    a child process of its own, taking turns within every round; the ratio now / before is the
    median of the rounds' own ratios (what this code's changes cost or gain, on a noisy machine).
(e) With `--wal`: (a) and (b) at 64 committers with the bounded WAL (a passive checkpoint after a
    barrier once the WAL passes `WAL_LIMIT`, durable.storage.sqlite.write) and without it (the
    limit set out of reach: only SQLite's own checkpoint every 1,000 pages), each in a child
    process, taking turns within every round. Target: on >= 0.9x off. The disk's fsync rate swings
    several times over within a run on a shared machine, so (e) also prints what the rates hide
    less: CPU time (all threads) and bytes written a commit, on against off, and with `--syncs` the
    fsync and fdatasync calls a commit (`strace -c`, one run each).
(c) Open time of a file with 1,000,000 entries (and 100,000 terminal tasks, 10,000 settled
    submissions, 10 live tasks) against one with 1,000 entries (100 terminal tasks, 10 settled
    submissions, 10 live tasks). The big file is built with raw sqlite3 inserts of rows encoded
    by `encode_batch`. Target: ratio <= 1.5.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time

import trio

from durable.records import (
    Answered,
    AssistantEntry,
    CompactionEntry,
    Done,
    GenerationLive,
    Live,
    PartialMessage,
    Queued,
    Run,
    Running,
    StoredEntry,
    Submission,
    Task,
    Terminal,
    ToolCall,
    Usage,
    UserEntry,
)
from durable.storage import Batch, SQLiteStorage
from durable.storage.rows import encode_batch
from durable.storage.sqlite.write import apply_rows
from durable.tasks.generation.records import GenerationInput, Request
from durable.tasks.tool import ToolInput

OPENS = 31
ANSWER = "The build fails because the import of `settings` happens before the environment is read. " * 4


def step_batch(conversation: str, task_id: int, seq: int) -> Batch:
    """What the engine commits for one step of a run: the task, one entry, the live document."""
    task = Task(task_id, conversation, "generation", GenerationInput((f"s{task_id}",)), Running(),
                checkpoint=Request(attempt=1, options={"model": "m", "max_tokens": 4096}),
                created_at=1_700_000_000.0, updated_at=1_700_000_000.0 + seq)
    entry = StoredEntry(conversation, seq, AssistantEntry(ANSWER, "stop", usage=Usage(1200, 180)))
    live = Live(run=Run(task_id, (f"s{task_id}",)),
                generation=GenerationLive(attempt=1, message=PartialMessage(ANSWER[: seq % 300])))
    return Batch(tasks=[task], entries=[entry], live={conversation: live})


def fresh(directory: str, name: str) -> str:
    path = os.path.join(directory, name)
    for suffix in ("", "-wal", "-shm", ".lock"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return path


def raw_connection(path: str, synchronous: str = "FULL") -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    assert conn.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    return conn


async def create_session(path: str) -> None:
    store = SQLiteStorage(path)
    await store.open()
    await store.close()


# ----------------------------------------------------------------------------- (a) and (b)


async def store_sequential(path: str, n: int) -> float:
    store = SQLiteStorage(path)
    await store.open()
    batches = [step_batch("root", 1, seq) for seq in range(1, n + 1)]
    started = time.perf_counter()
    for batch in batches:
        await store.commit(batch)
    elapsed = time.perf_counter() - started
    await store.close()
    return n / elapsed


def raw_sequential(path: str, n: int, synchronous: str = "FULL") -> float:
    trio.run(create_session, path)  # the same schema and indexes
    encoded = [encode_batch(step_batch("root", 1, seq)) for seq in range(1, n + 1)]
    conn = raw_connection(path, synchronous)
    started = time.perf_counter()
    for enc in encoded:
        conn.execute("BEGIN IMMEDIATE")
        apply_rows(conn, enc)  # the store's own statements
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return n / elapsed


async def store_concurrent(path: str, committers: int, total: int) -> tuple[float, int]:
    store = SQLiteStorage(path)
    await store.open()
    per = total // committers
    work = {c: [step_batch(f"c{c}", c + 1, seq) for seq in range(1, per + 1)] for c in range(committers)}

    async def committer(c: int) -> None:
        for batch in work[c]:
            await store.commit(batch)

    before = store.commits
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for c in range(committers):
            nursery.start_soon(committer, c)
    elapsed = time.perf_counter() - started
    transactions = store.commits - before
    await store.close()
    return per * committers / elapsed, transactions


# ----------------------------------------------------------------------------- (c)


def build_history(path: str, entries: int, terminal_tasks: int, settled: int, live_tasks: int = 10) -> None:
    """A session with `entries` entries in one conversation (a compaction every 10,000, the last
    one 5,000 entries back; none in a file of fewer than 5,000 entries), plus
    history tasks and submissions, written with raw inserts of properly encoded rows."""
    trio.run(create_session, path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = OFF")  # building only; the measured opens use the store
    conn.execute("BEGIN")
    chunk = 10_000
    seq = 0
    turn = [
        UserEntry("Why does the build fail on CI but not locally?"),
        AssistantEntry("Let me look at the workflow.", "tool_use", (ToolCall("c1", "read_file", '{"path": "ci.yml"}'),)),
        AssistantEntry(ANSWER, "stop", usage=Usage(1500, 200)),
    ]
    while seq < entries:
        rows = []
        for _ in range(min(chunk, entries - seq)):
            seq += 1
            # The last compaction lies 5,000 entries back: finding it must not walk them.
            entry = CompactionEntry("summary so far", seq - 50) if seq % 10_000 == 5_000 else turn[seq % 3]
            rows.append(StoredEntry("root", seq, entry))
        enc = encode_batch(Batch(entries=rows))
        conn.executemany("INSERT INTO entries (conversation_id, seq, kind, body, tokens) VALUES (?,?,?,?,?)", enc.entries)
    tasks = [
        Task(i, "root", "tool", ToolInput(ToolCall(f"c{i}", "read_file", "{}")), Terminal(Done("ok")), parent_id=1)
        for i in range(2, terminal_tasks + 2)
    ]
    tasks += [
        Task(terminal_tasks + 2 + i, "root", "generation", GenerationInput((f"q{i}",)), Running())
        for i in range(live_tasks)
    ]
    subs = [Submission(f"s{i}", "root", "question", seq=i, status=Answered()) for i in range(settled)]
    subs += [Submission(f"q{i}", "root", "queued question", status=Queued()) for i in range(3)]
    enc = encode_batch(Batch(tasks=tasks, submissions=subs, live={"root": Live(run=Run(2, ("q0",)))}))
    apply_rows(conn, enc)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


async def time_opens(paths: list[str], runs: int) -> list[tuple[float, float, int]]:
    """(best, median, last seq) of `runs` opens of each file, the files taking turns so that
    they meet the same machine conditions."""
    times: dict[str, list[float]] = {p: [] for p in paths}
    last: dict[str, int] = {}
    for _ in range(runs):
        for path in paths:
            store = SQLiteStorage(path)
            started = time.perf_counter()
            opened = await store.open()
            times[path].append(time.perf_counter() - started)
            await store.close()
            last[path] = opened.conversations["root"].last_seq
    return [(min(times[p]), statistics.median(times[p]), last[p]) for p in paths]


# ----------------------------------------------------------------------------- report


def child(directory: str, sequential_n: int, concurrent_total: int) -> None:
    """(d)'s and (e)'s child: (a) and (b) at 64 committers with whatever `durable` it imports
    (`DURABLE_BENCH_WAL=off`: without the bounded WAL); one JSON line, with the WAL's largest size."""
    import json

    if os.environ.get("DURABLE_BENCH_WAL") == "off":
        import durable.storage.sqlite.write as write

        write.WAL_LIMIT = 1 << 62  # never past it: no checkpoint of ours

    got: dict[str, float] = {}
    for key, commits in (("seq", sequential_n), ("g64", concurrent_total // 64 * 64)):
        cpu, written = _cpu(), _written()
        if key == "seq":
            got["seq"] = trio.run(store_sequential, fresh(directory, "child-seq.db"), sequential_n)
        else:
            got["g64"], got["t64"] = trio.run(store_concurrent, fresh(directory, "child-g64.db"), 64, concurrent_total)
        got[f"{key}_cpu"] = (_cpu() - cpu) / commits * 1e6  # microseconds of CPU (all threads) a commit
        got[f"{key}_bytes"] = (_written() - written) / commits  # bytes written to disk a commit
    print(json.dumps(got))


def _cpu() -> float:
    import resource

    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _written() -> int:
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("write_bytes:"))


def run_child(directory: str, sequential_n: int, concurrent_total: int, pythonpath: str | None,
              wal: str = "on", syncs: bool = False) -> dict[str, float]:
    """Run `child`; with `syncs`, under `strace -c`, and return its fsync and fdatasync calls."""
    import json
    import subprocess

    env = dict(os.environ, DURABLE_BENCH_WAL=wal)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    command = [sys.executable, __file__, "--child", directory, str(sequential_n), str(concurrent_total)]
    if syncs:
        command = ["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", os.path.join(directory, "syncs"),
                   *command]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    if syncs:
        with open(os.path.join(directory, "syncs")) as f:
            return {"syncs": sum(int(line.split()[3]) for line in f if line.split()[-1:] in (["fsync"], ["fdatasync"]))}
    return json.loads(done.stdout.strip().splitlines()[-1])


def export(ref: str) -> str:
    import subprocess

    folder = tempfile.mkdtemp(prefix="durable-bench-before-")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    archive = subprocess.run(["git", "archive", ref, "durable"], capture_output=True, check=True, cwd=root).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    return folder


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default=None, help="where the temporary files go (default: the system temp dir)")
    parser.add_argument("--quick", action="store_true", help="fewer commits and a 100,000-entry big file")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of (a) and (b) (>= 5 for the "
                        "figures; fewer for a quick run)")
    parser.add_argument("--before", default=None, help="(d): compare with the code of this git ref")
    parser.add_argument("--wal", action="store_true", help="(e): the bounded WAL on against off")
    parser.add_argument("--syncs", action="store_true", help="with --wal: count fsync and fdatasync calls (strace)")
    args = parser.parse_args()
    before = export(args.before) if args.before else None
    sequential_n = 1000 if args.quick else 3000
    concurrent_total = 2048 if args.quick else 6400
    big_entries = 100_000 if args.quick else 1_000_000

    with tempfile.TemporaryDirectory(prefix="durable-bench-", dir=args.dir) as directory:
        fs = _file_system(directory)
        print(f"durable storage benchmark: Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
              f"{os.cpu_count()} CPUs, files in {directory} ({fs})")
        level = SQLiteStorage(os.path.join(directory, "probe.db")).synchronous
        print(f"store: SQLiteStorage(path), synchronous={level} "
              "(its default); every benchmark batch is a barrier commit (durable when acknowledged), as raw FULL is")
        rows: list[tuple[str, str, str, str, str]] = []

        # Interleaved rounds: in every round each measurement runs once, in the same order, so that
        # drift in the machine's load hits them alike; the table gives medians (min-max), and each
        # ratio is the median of the rounds' own ratios (both rates measured in the same round).
        rounds: list[dict[str, float]] = []
        for rnd in range(args.rounds):
            m: dict[str, float] = {}
            m["raw"] = raw_sequential(fresh(directory, "raw.db"), sequential_n)
            m["ours"] = trio.run(store_sequential, fresh(directory, "seq.db"), sequential_n)
            m["off"] = raw_sequential(fresh(directory, "off.db"), sequential_n, "OFF")
            for committers in (8, 64):
                rate, txns = trio.run(store_concurrent, fresh(directory, f"group{committers}.db"), committers,
                                      concurrent_total)
                m[f"g{committers}"], m[f"t{committers}"] = rate, txns
            if before is not None:  # taking turns, the first one alternating between rounds
                order = [("now", None), ("before", before)]
                for which, pythonpath in (order if rnd % 2 == 0 else order[::-1]):
                    got = run_child(directory, sequential_n, concurrent_total, pythonpath)
                    m[f"{which}_seq"], m[f"{which}_g64"] = got["seq"], got["g64"]
            if args.wal:  # taking turns, the first one alternating between rounds
                for wal in (("on", "off") if rnd % 2 == 0 else ("off", "on")):
                    got = run_child(directory, sequential_n, concurrent_total, None, wal)
                    m.update({f"wal{wal}_{key}": value for key, value in got.items()})
            rounds.append(m)
            print(f"  round {rnd + 1}/{args.rounds}: raw {m['raw']:,.0f}, store {m['ours']:,.0f}, "
                  f"64 committers {m['g64']:,.0f} commits/s ({m['g64'] / m['raw']:.2f}x raw)", flush=True)

        def mm(key: str) -> str:
            xs = [m[key] for m in rounds]
            return f"{statistics.median(xs):,.0f} ({min(xs):,.0f}-{max(xs):,.0f})"

        def ratio(key: str) -> tuple[float, str]:
            xs = [m[key] / m["raw"] for m in rounds]
            med = statistics.median(xs)
            return med, f"{med:.2f}x raw ({min(xs):.2f}-{max(xs):.2f})"

        rows.append(("(a) raw sqlite3, 1 txn/commit", f"{mm('raw')} commits/s", "", "", ""))
        _, off_text = ratio("off")
        rows.append(("    raw, synchronous=OFF (no fsync)", f"{mm('off')} commits/s", off_text, "", "(context)"))
        seq, seq_text = ratio("ours")
        rows.append(("(a) store, sequential", f"{mm('ours')} commits/s", seq_text, ">= 0.5x", _met(seq >= 0.5)))

        for committers in (8, 64):
            med, text = ratio(f"g{committers}")
            batches = concurrent_total // committers * committers
            target = ">= 3x" if committers == 64 else "-"
            met = _met(med >= 3) if committers == 64 else ""
            rows.append((f"(b) store, {committers} committers", f"{mm(f'g{committers}')} commits/s", text, target, met))
            txns = statistics.median(m[f"t{committers}"] for m in rounds)
            rows.append((f"    transactions for {batches} batches", f"{txns:.0f}", f"{batches / txns:.1f} per txn",
                         "", ""))

        def compared(tag: str, now: str, base: str, base_label: str, now_label: str, versus: str) -> None:
            """Rows of (a) and (b) at 64 committers measured two ways in children: `now` over `base`."""
            for key, label in (("seq", "(a) sequential"), ("g64", "(b) 64 committers")):
                ratios = [m[f"{now}_{key}"] / m[f"{base}_{key}"] for m in rounds]
                med = statistics.median(ratios)
                rows.append((f"({tag}) {label}, {base_label}", f"{mm(f'{base}_{key}')} commits/s", "", "", ""))
                rows.append((f"({tag}) {label}, {now_label}", f"{mm(f'{now}_{key}')} commits/s",
                             f"{med:.2f}x {versus} ({min(ratios):.2f}-{max(ratios):.2f})", ">= 0.9x", _met(med >= 0.9)))

        if before is not None:
            compared("d", "now", "before", f"before {args.before}", "now", "before")
        if args.wal:
            compared("e", "walon", "waloff", "bounded WAL off", "bounded WAL on", "off")
            for key, label in (("seq", "(a)"), ("g64", "(b) 64")):  # less disturbed by the machine than rates
                for what, unit, fmt in (("cpu", "us of CPU", ",.0f"), ("bytes", "bytes written", ",.0f")):
                    on, off = ([m[f"wal{w}_{key}_{what}"] for m in rounds] for w in ("on", "off"))
                    ratios = [a / b for a, b in zip(on, off, strict=True)]
                    rows.append((f"(e) {label}: {unit} a commit, on / off",
                                 f"{statistics.median(on):{fmt}} / {statistics.median(off):{fmt}}",
                                 f"{statistics.median(ratios):.2f}x off ({min(ratios):.2f}-{max(ratios):.2f})", "", ""))
            if args.syncs:  # counted once each (deterministic but for group commit's batching)
                commits = sequential_n + concurrent_total // 64 * 64
                counted = {w: run_child(directory, sequential_n, concurrent_total, None, w, syncs=True)["syncs"]
                           for w in ("on", "off")}
                rows.append(("(e) fsync + fdatasync calls a commit, on / off",
                             f"{counted['on'] / commits:.3f} / {counted['off'] / commits:.3f}",
                             f"{counted['on'] / counted['off']:.2f}x off", "", "(strace -c, one run each)"))

        small, big = fresh(directory, "small.db"), fresh(directory, "big.db")
        build_history(small, 1_000, terminal_tasks=100, settled=10)
        started = time.perf_counter()
        build_history(big, big_entries, terminal_tasks=big_entries // 10, settled=big_entries // 100)
        built = time.perf_counter() - started
        (small_t, small_med, small_seq), (big_t, big_med, big_seq) = trio.run(time_opens, [small, big], OPENS)
        assert (small_seq, big_seq) == (1_000, big_entries)
        size = os.path.getsize(big) / 1e6
        rows.append(("(c) open, 1,000 entries", f"{small_t * 1e3:.2f} ms", f"(median {small_med * 1e3:.2f} ms)", "", ""))
        rows.append((f"(c) open, {big_entries:,} entries ({size:,.0f} MB)", f"{big_t * 1e3:.2f} ms",
                     f"{big_t / small_t:.2f}x small", "<= 1.5x", _met(big_t / small_t <= 1.5)))
        rows.append(("    medians", f"{big_med * 1e3:.2f} ms", f"{big_med / small_med:.2f}x small", "", ""))

        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        header = ("measure", "figure", "ratio", "target", "met")
        widths = [max(w, len(h)) for w, h in zip(widths, header)]
        line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
        print(line)
        print("-" * len(line))
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
        print(f"(rates: medians (min-max) of {args.rounds} interleaved rounds, ratios the medians of each round's "
              f"own ratio; open times: best of {OPENS} opens of each file, taking turns, page cache warm, medians "
              f"below; the big file was built in {built:.1f} s)")
    return 0


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


def _file_system(directory: str) -> str:
    try:
        best = ""
        fstype = "?"
        with open("/proc/mounts") as mounts:
            for line in mounts:
                _, point, kind, *_ = line.split()
                if directory.startswith(point) and len(point) > len(best):
                    best, fstype = point, kind
        return f"{fstype} mounted at {best}"
    except OSError:
        return sys.platform


if __name__ == "__main__":
    raise SystemExit(main())
