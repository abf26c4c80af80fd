"""Benchmark: from a killed process to the interrupted work running again.

Run: `python benchmarks/recovery.py [--entries 1000,1000000] [--repeat 3] [--no-dbos]`.
Not a test: it prints a table (medians with min-max over `--repeat` kills) and whether the targets
are met (process start to the interrupted request sent again <= 250 ms; the same within 1.5x for
1,000 and 1,000,000 history entries; the harness's own share under 50 ms), and writes `results/recovery.json`
and its section of `results/results.md`.

For each history size, `--repeat` times, on a fresh copy of the history file:

1. A child process (`--victim`) opens the file, submits an input; the faux model streams a
   partial answer and then hangs. When the partial is committed (the live document shows it;
   default `progress.persist_within` 0.1 s), the child prints a line; the parent SIGKILLs it.
2. A new process (`--recover`) is spawned; it imports durable, opens the file (the open commit
   charges the cut-off generation), resumes: the generation keeps the partial as an aborted
   entry, charges the attempt under `RetryPolicy(base_delay=0.001)`, sleeps that durably and
   sends attempt 2; the model answers at once. Times are taken from the parent's spawn: the
   retry's request reaching the model (the interrupted work running again) and the answer
   (`submission.wait()` returning). The harness's own share is from the start of
   `open_harness` to that request: it excludes the interpreter start and the imports, and
   includes the 1 ms backoff.

The histories: a root conversation of repeating one-tool turns (user, assistant tool call, tool
result, answer) with their terminal tasks and answered submissions, written directly with
sqlite3 (entries encoded by `durable.codec.dumps(entry, Entry)`, tasks and submissions likewise)
because building a million entries through the harness would take an hour. A compaction entry
is written every 10,000 entries and one 8 entries before the end, as an agent that compacts
leaves it, so the model context is small: the benchmark measures whether recovery depends on
the length of the history, not on the context (which `agent_turns.py` covers). The schema is
created by opening the file with the harness first.

DBOS (in the peers venv, if installed): a workflow of 3 steps whose 2nd step hangs, after 1,000
completed workflows; the process is killed in step 2; a new process launches DBOS (which
recovers pending workflows at launch) and we time the 2nd step running again and the workflow's
result. DBOS's defaults are used (recovery re-enqueues on an internal queue polled every 1 s).
"""

from __future__ import annotations

import sys
import time

T_SCRIPT = time.time()

import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402

from durable.tasks.generation.records import GenerationInput, Prepare
from durable.tasks.tool import ToolInput, ToolProgress

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

PARTIAL = "Hello wor"
COMPACT_EVERY = 10_000
TAIL = 8  # entries after the last compaction


# =========================================================================== children


def victim(path: str) -> None:
    import anyio

    import durable
    from durable.models import FauxModel, faux

    async def main() -> None:
        model = FauxModel([faux.hang(PARTIAL)], context_window=10**9)
        async with durable.open_harness(path, model=model) as h:
            sub = await h.root.submit("What is the answer?")
            async for live in h.root.follow():
                if live.generation is not None and live.generation.message.text == PARTIAL:
                    break
            print(f"PARTIAL_COMMITTED {sub.id}", flush=True)
            await anyio.sleep_forever()

    anyio.run(main)


def recover(path: str, sid: str) -> None:
    t_script = T_SCRIPT
    import anyio
    import anyio._backends._asyncio

    import durable
    import durable.tasks
    from durable import open_harness
    from durable.models import FauxModel, faux

    t_imported = time.time()

    class TimedModel(FauxModel):
        t_request: float | None = None

        async def stream(self, request):
            if self.t_request is None:
                self.t_request = time.time()
            async for event in super().stream(request):
                yield event

    reports: list = []

    async def main() -> dict:
        model = TimedModel([faux.reply("Hello world.")], context_window=10**9)
        settings = durable.Settings(retry=durable.RetryPolicy(base_delay=0.001))
        t_open = time.time()
        async with open_harness(path, model=model, settings=settings, report=reports.append) as h:
            t_opened = time.time()
            await h.resume()
            status = await h.root.submission(sid).wait()
            t_answer = time.time()
            entries = await h.root.entries(max(1, h.session.conversation("root").last_seq - 2))
        return {"t_open": t_open, "t_opened": t_opened, "t_request": model.t_request, "t_answer": t_answer,
                "status": repr(status), "attempt": model.requests[0].attempt if model.requests else None,
                "context_messages": len(model.requests[0].messages) if model.requests else None,
                "tail": [type(e.entry).__name__ + ":" + getattr(e.entry, "stop_reason", "") for e in entries]}

    r = anyio.run(main)
    spawn = float(os.environ["DURABLE_BENCH_SPAWN_T"])
    print(json.dumps({
        "interpreter_start": t_script - spawn,
        "imports": t_imported - t_script,
        "open": r["t_opened"] - r["t_open"],
        "harness_to_request": r["t_request"] - r["t_open"],
        "to_request": r["t_request"] - spawn,
        "to_answer": r["t_answer"] - spawn,
        "harness_to_answer": r["t_answer"] - r["t_open"],
        "status": r["status"], "attempt": r["attempt"], "context_messages": r["context_messages"],
        "tail": r["tail"], "reports": [type(x).__name__ for x in reports],
    }))


# --------------------------------------------------------------------------- DBOS children


def _dbos_setup(path: str, hang: bool):
    import logging

    from dbos import DBOS

    logging.getLogger("dbos").setLevel(logging.WARNING)
    DBOS(config={"name": "durable-bench-recovery", "system_database_url": f"sqlite:///{path}", "log_level": "WARNING"})
    marks: dict = {}

    @DBOS.step()
    def step(i: int) -> int:
        if i == 1:
            marks.setdefault("t_step2", time.time())
            if hang:
                print("IN_STEP_2", flush=True)
                time.sleep(3600)
        return i

    @DBOS.workflow()
    def workflow(k: int) -> int:
        return sum(step(i) for i in range(3))

    @DBOS.workflow()
    def quick(k: int) -> int:
        return k

    return DBOS, workflow, quick, marks


def dbos_victim(path: str, history: int) -> None:
    import sqlite3

    c = sqlite3.connect(path)
    c.execute("PRAGMA journal_mode=WAL")  # the same journal as ours (see peers.py)
    c.close()
    DBOS, workflow, quick, _ = _dbos_setup(path, hang=True)
    DBOS.launch()
    for k in range(history):
        quick(k)
    from dbos import SetWorkflowID

    with SetWorkflowID("victim"):
        workflow(0)


def dbos_recover(path: str) -> None:
    t_script = T_SCRIPT
    DBOS, workflow, quick, marks = _dbos_setup(path, hang=False)
    t_imported = time.time()
    DBOS.launch()
    result = DBOS.retrieve_workflow("victim").get_result()
    t_done = time.time()
    DBOS.destroy()
    spawn = float(os.environ["DURABLE_BENCH_SPAWN_T"])
    print(json.dumps({"interpreter_start": t_script - spawn, "imports": t_imported - t_script,
                      "to_request": marks["t_step2"] - spawn, "to_answer": t_done - spawn,
                      "harness_to_request": marks["t_step2"] - t_imported, "result": result}))


# =========================================================================== history


def build_history(path: str, entries: int) -> dict:
    """A session file whose root conversation has `entries` entries (see the module docstring)."""
    import sqlite3

    import anyio

    import durable
    from durable import codec, records as r
    from durable.models import FauxModel

    async def create() -> None:
        async with durable.open_harness(path, model=FauxModel([])):
            pass

    anyio.run(create)
    t = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # building only; the benchmark opens with FULL
    conn.execute("BEGIN")
    ent_rows, task_rows, sub_rows = [], [], []
    seq = 0
    turn = 0
    task_id = 0
    now = 1_700_000_000.0

    def add(entry) -> None:
        nonlocal seq
        seq += 1
        ent_rows.append(("root", seq, codec.tag_of(entry), codec.dumps(entry, r.Entry)))

    def flush() -> None:
        conn.executemany("INSERT INTO entries (conversation_id, seq, kind, body) VALUES (?,?,?,?)", ent_rows)
        conn.executemany("INSERT INTO tasks (id, conversation_id, kind, state, live, parent_id, body) "
                         "VALUES (?,?,?,?,?,?,?)", task_rows)
        conn.executemany("INSERT INTO submissions (id, conversation_id, status, body) VALUES (?,?,?,?)", sub_rows)
        ent_rows.clear()
        task_rows.clear()
        sub_rows.clear()

    usage = r.Usage(10, 5)
    next_periodic = COMPACT_EVERY
    final_done = False
    while seq < entries:
        if not final_done and seq + 1 >= entries - TAIL:
            add(r.CompactionEntry(f"Summary of the conversation up to entry {seq}.", seq + 2, usage))
            final_done = True
            continue
        if seq + 1 >= next_periodic:
            add(r.CompactionEntry(f"Summary of the conversation up to entry {seq}.", seq + 2, usage))
            next_periodic += COMPACT_EVERY
            continue
        if entries - seq < 4:  # pad the end with inputs (no turn fits)
            add(r.UserEntry(f"Question {turn}, continued"))
            continue
        turn += 1
        sid = f"sub_{turn:016x}"
        call = r.ToolCall(f"call_{turn}", "lookup", json.dumps({"q": turn}))
        user_seq = seq + 1
        add(r.UserEntry(f"Question {turn}: look this up", sid))
        add(r.AssistantEntry("", "tool_use", (call,), usage))
        add(r.ToolResultEntry(call.id, "lookup", f"found {turn}"))
        add(r.AssistantEntry(f"Here is what I found for question {turn}.", "stop", (), usage))
        gen_id, tool_id = task_id + 1, task_id + 2
        task_id += 2
        gen = r.Task(gen_id, "root", "generation", GenerationInput((sid,)), r.Terminal(r.Done({"seq": seq})),
                     Prepare(1), created_at=now, updated_at=now)
        tool = r.Task(tool_id, "root", "tool", ToolInput(call, "safe"),
                      r.Terminal(r.Done()), ToolProgress("", r.ToolResultEntry(call.id, "lookup", f"found {turn}")),
                      parent_id=gen_id, created_at=now, updated_at=now)
        for tk in (gen, tool):
            task_rows.append((tk.id, "root", tk.kind, "terminal", 0, tk.parent_id, codec.dumps(tk, r.Task)))
        sub = r.Submission(sid, "root", f"Question {turn}: look this up", user_seq, r.Answered(), gen_id, now)
        sub_rows.append((sid, "root", "done", codec.dumps(sub, r.Submission)))
        if len(ent_rows) >= 20_000:
            flush()
    flush()
    conn.execute("INSERT INTO documents (conversation_id, body) VALUES (?, ?) "
                 "ON CONFLICT (conversation_id) DO UPDATE SET body = excluded.body",
                 ("root", codec.dumps(r.Live(), r.Live)))
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {"entries": seq, "tasks": task_id, "submissions": turn, "build_s": time.perf_counter() - t,
            "bytes": os.path.getsize(path)}


# =========================================================================== parent


def _kill_and_recover(c, me: str, path: str, python: str, victim_args: list[str], recover_args: list[str],
                      ready: str) -> dict:
    proc = subprocess.Popen([python, me, *victim_args, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=str(c.ROOT))
    sid = None
    deadline = time.time() + 600
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"victim ended early: {proc.stderr.read()[-3000:]}")
        if line.startswith(ready):
            sid = line.split()[1] if len(line.split()) > 1 else ""
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return c.run_child([me, *recover_args, path] + ([sid] if sid else []), python=python)


def main(argv: list[str]) -> None:
    import argparse
    import shutil
    import tempfile

    import _common as c

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entries", default="1000,1000000")
    p.add_argument("--repeat", type=int, default=5, help="kills per size (>= 5 for the figures; medians with min-max)")
    p.add_argument("--no-dbos", action="store_true")
    args = p.parse_args(argv)
    sizes = [int(x) for x in args.entries.split(",") if x.strip()]
    me = os.path.abspath(__file__)

    print(f"recovery: {c.machine_line()}")
    workdir = tempfile.mkdtemp(prefix="durable-bench-recovery-")
    rows = []
    try:
        for n in sizes:
            base = os.path.join(workdir, f"history-{n}.sqlite")
            print(f"building a history of {n} entries ...", flush=True)
            info = build_history(base, n)
            print(f"  {info['entries']} entries, {info['tasks']} tasks, {info['submissions']} submissions, "
                  f"{info['bytes'] / 1e6:.1f} MB in {info['build_s']:.1f} s", flush=True)
            runs = []
            for i in range(args.repeat):
                path = os.path.join(workdir, f"run-{n}-{i}.sqlite")
                shutil.copyfile(base, path)
                r = _kill_and_recover(c, me, path, sys.executable, ["--victim"], ["--recover"], "PARTIAL_COMMITTED")
                if "Answered" not in r["status"] or r["attempt"] != 2:
                    raise RuntimeError(f"recovery did not answer with attempt 2: {r}")
                runs.append(r)
                for suffix in ("", "-wal", "-shm", ".lock"):
                    if os.path.exists(path + suffix):
                        os.remove(path + suffix)
            med = lambda k: c.median(x[k] for x in runs)  # noqa: E731
            row = {"system": "durable", "entries": info["entries"], "bytes": info["bytes"], "build_s": info["build_s"],
                   **{k: med(k) for k in ("interpreter_start", "imports", "open", "harness_to_request",
                                          "to_request", "to_answer", "harness_to_answer")},
                   "context_messages": runs[0]["context_messages"], "tail": runs[0]["tail"],
                   "reports": runs[0]["reports"], "runs": runs}
            rows.append(row)
            print(f"  restart -> request {c.ms(row['to_request'])} ms (harness {c.ms(row['harness_to_request'])} ms), "
                  f"-> answer {c.ms(row['to_answer'])} ms", flush=True)
            os.remove(base)

        dbos_rows = []
        if not args.no_dbos:
            py, status = c.peers_python("dbos")
            if status.get("dbos") != "ok":
                print(f"DBOS skipped: {status.get('dbos')}")
            else:
                history = 1000
                print(f"DBOS: kill a workflow in its 2nd step after {history} completed workflows, resume ...", flush=True)
                runs = []
                for i in range(args.repeat):
                    path = os.path.join(workdir, f"dbos-{i}.sqlite")
                    runs.append(_kill_and_recover(c, me, path, py, ["--dbos-victim", str(history)], ["--dbos-recover"],
                                                  "IN_STEP_2"))
                med = lambda k: c.median(x[k] for x in runs)  # noqa: E731
                dbos_rows.append({"system": "dbos", "history_workflows": history, "version": c.peer_version(py, "dbos"),
                                  **{k: med(k) for k in ("interpreter_start", "imports", "to_request", "to_answer",
                                                         "harness_to_request")}, "runs": runs})
                print(f"  restart -> step 2 again {c.ms(dbos_rows[0]['to_request'])} ms, -> result "
                      f"{c.ms(dbos_rows[0]['to_answer'])} ms", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    def mm(r: dict, k: str) -> str:  # median (min-max) over the kills, in ms
        xs = [x[k] for x in r["runs"]]
        return f"{c.ms(c.median(xs))} ({c.ms(min(xs))}-{c.ms(max(xs))})"

    body = [[f"{r['entries']:,} entries ({r['bytes'] / 1e6:.0f} MB)", mm(r, "interpreter_start"), mm(r, "imports"),
             mm(r, "open"), mm(r, "harness_to_request"), mm(r, "to_request"), mm(r, "to_answer")]
            for r in rows]
    for d in dbos_rows:
        body.append([f"DBOS {d['version']}: {d['history_workflows']:,} workflows before", c.ms(d["interpreter_start"]),
                     c.ms(d["imports"]), "-", c.ms(d["harness_to_request"]) + " (launch -> step 2)",
                     c.ms(d["to_request"]), c.ms(d["to_answer"])])
    out = ["### Recovery: SIGKILL mid-stream, then a new process resumes the turn\n",
           c.table(["history", "python start", "imports", "open (incl. charge commit)",
                    "harness: open -> retry request", "process start -> retry request (work runs again)",
                    "process start -> answer"], body) + "\n"]
    targets = []
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        ratio = b["to_request"] / a["to_request"]
        targets.append((f"restart -> work running again: {b['entries']:,} within 1.5x of {a['entries']:,} entries",
                        f"{ratio:.2f}x", ratio <= 1.5))
        ratio = b["to_answer"] / a["to_answer"]
        targets.append((f"restart -> answer: {b['entries']:,} within 1.5x of {a['entries']:,} entries",
                        f"{ratio:.2f}x", ratio <= 1.5))
    for r in rows:
        xs = [x["to_request"] for x in r["runs"]]
        targets.append((f"process start -> interrupted request sent again <= 250 ms at {r['entries']:,} entries",
                        f"{c.ms(r['to_request'])} ms ({c.ms(min(xs))}-{c.ms(max(xs))})", r["to_request"] <= 0.250))
        targets.append((f"harness's own share (open -> retry request) < 50 ms at {r['entries']:,} entries",
                        f"{c.ms(r['harness_to_request'])} ms", r["harness_to_request"] < 0.050))
    out.append(c.table(["target", "measured", "result"], [(a, b, c.verdict(ok)) for a, b, ok in targets]))
    out.append("")
    out.append(f"Medians (min-max) of {args.repeat} kills per size. The victim streamed \"{PARTIAL}\" (committed, "
               "persist_within 0.1 s) and hung; SIGKILL; the new process charged the attempt (report "
               f"{', '.join(rows[0]['reports']) if rows else '-'}), kept the partial as an aborted entry, slept the "
               f"1 ms backoff and sent attempt 2 with a context of {rows[0]['context_messages'] if rows else '?'} "
               "messages (the last compaction summary and the entries after it). Histories written with sqlite3 "
               "(entries, terminal tasks and answered submissions encoded by durable.codec; a compaction every "
               f"{COMPACT_EVERY:,} entries and {TAIL} entries before the end).")
    if dbos_rows:
        out.append("")
        out.append("DBOS: a 3-step workflow killed in its 2nd step, WAL system database; the new process's "
                   "`DBOS.launch()` recovers it (re-enqueued on DBOS's internal queue, polled every 1 s by default); "
                   "\"launch -> step 2\" is from after the imports to the 2nd step running again.")
    md = "\n".join(out)
    print()
    print(md)
    c.save("recovery", {"repeat": args.repeat, "rows": rows, "dbos": dbos_rows,
                        "targets": [{"target": a, "measured": b, "met": ok} for a, b, ok in targets]}, md)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "--victim":
        victim(sys.argv[2])
    elif mode == "--recover":
        recover(sys.argv[2], sys.argv[3])
    elif mode == "--dbos-victim":
        dbos_victim(sys.argv[3], int(sys.argv[2]))
    elif mode == "--dbos-recover":
        dbos_recover(sys.argv[2])
    else:
        main(sys.argv[1:])
