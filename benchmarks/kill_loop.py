"""Kill loop: one session file, a real agent process SIGKILLed at random times, over and over.

Run: `python benchmarks/kill_loop.py [--kills 150] [--inputs 400] [--seed 1] [--keep] [--json]`.
Not a timing benchmark: a correctness loop that prints its figures and exits 1 on any violation
(issue 13, "must show"). `tests/crash/test_kill_loop.py` runs a short version (`--kills 20`).

The agent (`--child`, a fresh `python` process each time) opens the session file with
`durable.open_harness`, first waits for every input an earlier process left unsettled, then gives
the inputs `input 0` .. `input N-1` that are not yet in the file, one at a time, waiting for each.
Its faux model answers every input with a call of the unsafe tool `append_line` (two calls for
odd inputs), streamed in small chunks, and then with a text answer; every delta is committed.
The tool appends one line, `<call id> <input>`, per execution to a side file (one `write` on an
`O_APPEND` file: a SIGKILL cannot tear it). The child says on stdout when `submit` returned
(`ack SUB_ID`: the input is acknowledged) and when a wait returned (`settled SUB_ID OUTCOME`).

The parent starts a child and SIGKILLs it at a random time (seeded): a fifth of the kills uniform
over 1.5 times what an interpreter takes to import durable (while it starts, opens and recovers
the file), the others uniform over the `--window` seconds after it said `open` (while it
recovers, streams, commits, runs the tool). After each kill it checks, reading the file only:

- `PRAGMA integrity_check` is ok (and `durable.testing.check_invariants` finds nothing: every row
  decodes, the live document, tool calls and attempts agree);
- every acknowledged input (every `ack` any child said) is in the file, as a submission with its
  one user entry;
- each unsafe call ran at most once (lines per call id in the side file), and only for a call
  whose tool task (its committed intent) is in the file;
- every submission settled at most once: once the file shows it settled, its outcome never
  changes in a later check, and every `settled` line a child said agrees with the file; no input
  text was ever given twice.

After `--kills` kills, one last child runs to the end without a kill: every input is settled
(answered), the file passes every check with a clean close and nothing left to do.

`--subagents` (docs/spec.md §8): the agent's model hands every input to two sub-agents at once, a
`researcher` (no tools, its own model) and a `writer` (the unsafe `append_line`, its own model),
and answers with their results. Checked besides, after every kill: each sub-agent call has at most
one child conversation (named after it) holding one input and one user entry; every child's parent
call is in the file; the root's own usage holds no child's model and no tool runtime (the waiting
calls are never billed), and its rolled-up usage is its own and its children's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOOL = "append_line"


# --------------------------------------------------------------------------- the agent (child)


def say(line: str) -> None:
    os.write(1, (line + "\n").encode())  # one write per line: a reader sees every line said before the kill


def _model(name: str = "faux") -> Any:
    from durable.models.faux import FauxModel, call, reply
    from durable.records import ToolResultEntry, UserEntry

    def decide(request: Any) -> Any:
        last = request.messages[-1]
        if isinstance(last, ToolResultEntry):
            return reply(f"Done: the line for this input was appended ({last.call_id}).")
        text = last.text if isinstance(last, UserEntry) else "input ?"
        number = text.split()[-1]
        calls = [call(TOOL, {"input": number}, id=f"call_{uuid.uuid4().hex[:12]}")
                 for _ in range(2 if number.isdigit() and int(number) % 2 else 1)]
        return reply(f"I will append a line for {text}.", tool_calls=calls)

    # Every step decides from the request it sees, so the script never runs out in any process.
    return FauxModel([decide] * 1_000_000, tokens_per_second=400, token_size=6, name=name)


SUBAGENTS = ("researcher", "writer")


def _team(side: str) -> tuple[Any, list[Any]]:
    """The `--subagents` agent: a model that calls both sub-agents for each input, and the tools."""
    import durable
    from durable.models.faux import FauxModel, call, reply
    from durable.records import ToolResultEntry, UserEntry

    def decide(request: Any) -> Any:
        last = request.messages[-1]
        if isinstance(last, ToolResultEntry):
            return reply("Done: both sub-agents answered.")
        text = last.text if isinstance(last, UserEntry) else "input ?"
        return reply(f"Asking the team about {text}.", tool_calls=[
            call(name, {"task": f"{name} {text}"}, id=f"call_{uuid.uuid4().hex[:12]}") for name in SUBAGENTS])

    research = FauxModel([lambda request: reply("Researched: nothing to add.")] * 1_000_000, tokens_per_second=400,
                         token_size=6, name="faux-research")
    tools = [durable.subagent("researcher", "Researches an input", model=research),
             durable.subagent("writer", "Appends the input's line", tools=[_tool(side)], model=_model("faux-writer"))]
    return FauxModel([decide] * 1_000_000, tokens_per_second=400, token_size=6), tools


def _tool(side: str) -> Any:
    import anyio

    from durable import define_tool

    async def execute(args: Any, api: Any, ctx: Any) -> str:
        await api.output("appending ")
        await anyio.sleep(0.004)
        fd = os.open(side, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{ctx.call_id} {args.get('input')}\n".encode())
        finally:
            os.close(fd)
        await api.output("appended")
        await anyio.sleep(0.004)
        return f"appended a line for input {args.get('input')}"

    return define_tool(TOOL, "Append a line to the side file (not safe to repeat)",
                       {"type": "object", "properties": {"input": {"type": "string"}}},
                       replay="unsafe", execute=execute)


def settings() -> Any:
    import durable

    return durable.Settings(progress=durable.Progress(persist_within=0, output_interval=0),
                            retry=durable.RetryPolicy(base_delay=0.01, max_delay=0.05))


async def child(path: str, side: str, inputs: int, subagents: bool = False) -> None:
    import durable
    from durable import records as r
    from durable.storage.sqlite.reader import SessionReader

    known: list[Any] = []
    if os.path.exists(path):
        try:
            with SessionReader(path, writer_may_run=False) as reader:  # no other process runs now
                known = reader.submissions(conversation_id="root")
        except durable.NotASession:  # a kill came before the file became a session
            pass
    given = {sub.text for sub in known}
    model, tools = _team(side) if subagents else (_model(), [_tool(side)])
    async with durable.open_harness(path, model=model, tools=tools, settings=settings()) as h:
        say("open")
        for sub in sorted(known, key=lambda s: s.created_at):
            if not sub.settled:
                outcome = await h.root.submission(sub.id).wait()
                say(f"settled {sub.id} {_tag(outcome, r)}")
        for number in range(inputs):
            text = f"input {number}"
            if text in given:
                continue
            handle = await h.root.submit(text)
            say(f"ack {handle.id} {number}")
            outcome = await handle.wait()
            say(f"settled {handle.id} {_tag(outcome, r)}")
        say("done")
    say("closed")


def _tag(outcome: Any, r: Any) -> str:
    return "answered" if isinstance(outcome, r.Answered) else f"unanswered:{outcome.reason}"


# --------------------------------------------------------------------------- the parent


class Violation(AssertionError):
    pass


class Loop:
    def __init__(self, workdir: str, inputs: int, subagents: bool = False) -> None:
        self.subagents = subagents
        self.path = os.path.join(workdir, "session.sqlite")
        self.side = os.path.join(workdir, "side.txt")
        self.stderr = os.path.join(workdir, "stderr.txt")
        self.inputs = inputs
        self.acked: dict[str, int] = {}  # submission id -> input number
        self.said_settled: dict[str, set[str]] = defaultdict(set)
        self.settled_seen: dict[str, str] = {}  # submission id -> outcome, as first seen settled in the file
        self.figures: Counter[str] = Counter()
        self.unanswered: Counter[str] = Counter()

    def argv(self) -> list[str]:
        return [sys.executable, os.path.abspath(__file__), "--child", self.path, self.side, str(self.inputs),
                *(["--subagents"] if self.subagents else [])]

    def run_child(self, kill: tuple[str, float] | None, timeout: float) -> tuple[list[str], bool, int | None]:
        """Start a child and SIGKILL it: `("start", t)` t seconds after it was started, `("open", t)`
        t seconds after it said `open` (None: let it finish). Returns its lines, whether the kill
        landed (the child died of it), and its exit status."""
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        with open(self.stderr, "ab") as err:
            proc = subprocess.Popen(self.argv(), stdout=subprocess.PIPE, stderr=err, env=env)
        started = time.monotonic()
        kill_at = started + kill[1] if kill is not None and kill[0] == "start" else None
        buffer = b""
        sent = False
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = started + timeout
        while True:
            until = min(deadline, kill_at) if kill_at is not None else deadline
            ready, _, _ = select.select([fd], [], [], max(0.0, until - time.monotonic()))
            if ready:
                data = os.read(fd, 65536)
                if not data:
                    break
                if kill is not None and kill[0] == "open" and kill_at is None and (buffer + data).startswith(b"open\n"):
                    kill_at = time.monotonic() + kill[1]
                buffer += data
                continue
            now = time.monotonic()
            if kill_at is not None and now >= kill_at and not sent:
                try:
                    os.kill(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                sent, kill_at = True, None
                deadline = now + 10  # drain what it said before it died
            elif now >= deadline:
                proc.kill()
                proc.wait()
                raise Violation(f"a child ran longer than {timeout:g} s; its last lines: {buffer[-500:]!r}")
        code = proc.wait()
        proc.stdout.close()
        lines = buffer.decode(errors="replace").splitlines()
        for line in lines:
            parts = line.split()
            if parts[:1] == ["ack"]:
                self.acked[parts[1]] = int(parts[2])
            elif parts[:1] == ["settled"]:
                self.said_settled[parts[1]].add(parts[2])
        return lines, sent and code == -signal.SIGKILL, code

    def check(self, *, final: bool) -> None:
        """Every check of the module docstring, on the file as it is now."""
        from durable.errors import NotASession
        from durable.storage.sqlite.reader import SessionReader
        from durable.testing import check_invariants

        problems: list[str] = []
        if not os.path.exists(self.path) or os.path.getsize(self.path) == 0:  # killed while creating it
            if self.acked or _lines(self.side) or final:
                raise Violation(f"no session file, but {len(self.acked)} inputs were acknowledged")
            self.figures["kills that left no session yet"] += 1
            return
        try:
            with SessionReader(self.path, writer_may_run=False) as reader:  # the child was killed and reaped
                integrity = reader.integrity_check()
                subs = {s.id: s for s in reader.submissions(conversation_id="root")}
                tool_tasks = reader.tasks(kind="tool")
                tool_calls = {t.input.call.id for t in tool_tasks}
                conversations = reader.conversation_ids()
                user_entries = Counter(e.entry.submission_id for cid in conversations for e in reader.entries(cid)
                                       if getattr(e.entry, "submission_id", None))
                children = [s for s in reader.submissions() if s.conversation_id != "root"]
                lives = reader.live_documents()
        except NotASession as exc:
            # Killed during the very first open: the next child must adopt the file (if it
            # cannot, its exit is the violation); nothing can have been acknowledged yet.
            if self.acked or _lines(self.side) or final:
                raise Violation(f"the session file is not a session: {exc}") from exc
            self.figures["kills that left no session yet"] += 1
            return
        except Exception as exc:  # an unreadable file is the violation
            raise Violation(f"the session file cannot be read: {type(exc).__name__}: {exc}") from exc
        if integrity != ["ok"]:
            problems.append(f"integrity_check: {integrity}")
        problems += check_invariants(self.path, settings=settings(), acknowledged=list(self.acked),
                                     clean_close=final, quiescent=final)
        for sid, number in self.acked.items():
            if sid not in subs:
                problems.append(f"acknowledged input {number} ({sid}) is not in the file")
            elif subs[sid].text != f"input {number}":
                problems.append(f"acknowledged {sid} holds {subs[sid].text!r}, not 'input {number}'")
        texts = Counter(s.text for s in subs.values())
        problems += [f"{text!r} was given {n} times" for text, n in texts.items() if n > 1]
        problems += [f"submission {sid} has {n} user entries" for sid, n in user_entries.items() if n > 1]
        runs = Counter(line.split()[0] for line in _lines(self.side))
        problems += [f"unsafe call {cid} ran {n} times" for cid, n in runs.items() if n > 1]
        problems += [f"unsafe call {cid} ran without its tool task in the file"
                     for cid in runs if cid not in tool_calls]
        for sid, sub in subs.items():
            if not sub.settled:
                if final:
                    problems.append(f"submission {sid} ({sub.text}) is not settled after the last run")
                continue
            outcome = "answered" if type(sub.status).__name__ == "Answered" else f"unanswered:{sub.status.reason}"
            first = self.settled_seen.setdefault(sid, outcome)
            if first != outcome:
                problems.append(f"submission {sid} settled {first}, later {outcome}")
            said = self.said_settled.get(sid, set())
            if said - {outcome}:
                problems.append(f"a child said {sid} settled {sorted(said)}, the file says {outcome}")
        if self.subagents:
            problems += _subagent_problems(tool_tasks, conversations, children, lives, final=final)
            self.figures["child conversations"] = len(children)
            self.figures["child inputs answered"] = sum(1 for s in children if type(s.status).__name__ == "Answered")
        if final:
            missing = [n for n in range(self.inputs) if f"input {n}" not in texts]
            if missing:
                problems.append(f"inputs never given: {missing[:10]}")
        self.figures["unsafe executions"] = sum(runs.values())
        unsafe = {t.input.call.id for t in tool_tasks if t.input.call.name == TOOL}
        self.figures["unsafe calls committed"] = len(unsafe)
        self.figures["unsafe calls cut off, not run again"] = len(unsafe - set(runs))
        self.figures["submissions"] = len(subs)
        self.figures["settled"] = sum(1 for s in subs.values() if s.settled)
        self.figures["answered"] = sum(1 for s in subs.values() if type(s.status).__name__ == "Answered")
        self.unanswered = Counter(s.status.reason for s in subs.values()
                                  if s.settled and type(s.status).__name__ == "Unanswered")
        self.figures["acknowledged"] = len(self.acked)
        if problems:
            raise Violation("; ".join(problems))


def _subagent_problems(tool_tasks: list[Any], conversations: list[str], children: list[Any],
                       lives: dict[str, Any], *, final: bool) -> list[str]:
    """The `--subagents` checks of the module docstring, on what the file holds."""
    problems = []
    calls = {f"root/{t.input.call.name}-{t.id}": t for t in tool_tasks
             if t.conversation_id == "root" and t.input.call.name in SUBAGENTS}
    problems += [f"conversation {cid!r} has no sub-agent call that started it"
                 for cid in conversations if cid != "root" and cid not in calls]
    per_child = Counter(s.conversation_id for s in children)
    problems += [f"child conversation {cid!r} holds {n} inputs" for cid, n in per_child.items() if n > 1]
    for s in children:
        link = lives[s.conversation_id].parent if s.conversation_id in lives else None
        if (link is None or f"root/{link.agent}-{link.task_id}" != s.conversation_id
                or s.id != f"subagent-{link.task_id}"):
            problems.append(f"child input {s.id} in {s.conversation_id!r} is not linked to its call ({link})")
        elif final and not s.settled:
            problems.append(f"child input {s.id} is not settled after the last run")
    root = lives.get("root")
    if root is not None:
        from durable.records import rolled_up

        # Its own document: its model's requests and tokens, its calls, and no tool runtime (the
        # sub-agent calls' waits are never billed); the children's usage, each in its own model.
        if [m.model for m in root.usage.models if m.model != "faux"] or root.usage.tool_seconds:
            problems.append(f"root's own usage holds its children's or a billed wait: {root.usage}")
        problems += [f"child {cid!r} used {m.model}" for cid, live in lives.items() if cid != "root"
                     for m in live.usage.models if m.model not in ("faux-research", "faux-writer")]
        total, kids = rolled_up(lives, "root"), [lives[cid].usage for cid in lives if cid != "root"]
        if total.requests != root.usage.requests + sum(k.requests for k in kids):
            problems.append(f"the rolled-up usage of root ({total.requests} requests) is not its own and its "
                            f"children's")
    return problems


def _lines(path: str) -> list[str]:
    try:
        with open(path) as f:
            return [line for line in f.read().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    workdir = tempfile.mkdtemp(prefix="durable-kill-loop-")
    loop = Loop(workdir, args.inputs, args.subagents)
    began = time.monotonic()
    attempts = kills = missed = 0
    where: Counter[str] = Counter()
    failure: str | None = None
    settled_by_kill_phase = 0
    try:
        startup = _startup_estimate()
        while kills < args.kills:
            attempts += 1
            if attempts > args.kills * 3:
                raise Violation(f"only {kills} of {args.kills} kills landed in {attempts - 1} tries")
            # A fifth anywhere from the start (imports, opening, recovery), the rest once it works.
            early = rng.random() < 0.2
            kill = ("start", rng.uniform(0.0, startup * 1.5)) if early else ("open", rng.uniform(0.0, args.window))
            lines, killed, code = loop.run_child(kill, timeout=args.timeout)
            said = [line.split()[0] for line in lines]
            if killed:
                kills += 1
                where["before open" if "open" not in said else ("after done" if "done" in said else "after open")] += 1
            else:
                missed += 1
                if code != 0:
                    raise Violation(f"a child exited {code} before its kill: {lines[-5:]}; see {loop.stderr}")
            loop.check(final=False)
            if args.progress and kills % 10 == 0 and killed:
                print(f"  {kills} kills, {loop.figures['settled']} settled, "
                      f"{loop.figures['unsafe executions']} unsafe runs, {time.monotonic() - began:.0f} s", flush=True)
        settled_by_kill_phase = loop.figures["settled"]
        lines, _, code = loop.run_child(None, timeout=args.timeout * 4)
        if code != 0 or "closed" not in lines:
            raise Violation(f"the last child did not finish cleanly (exit {code}): {lines[-5:]}; see {loop.stderr}")
        loop.check(final=True)
    except Violation as exc:
        failure = str(exc)
    seconds = time.monotonic() - began
    result = {
        "kills": kills, "children": attempts + 1, "ended_before_kill": missed, "kills_by_phase": dict(where),
        "inputs": args.inputs, **dict(loop.figures),
        "unanswered_reasons": dict(loop.unanswered), "settled_during_kills": settled_by_kill_phase,
        "seed": args.seed, "seconds": round(seconds, 1), "subagents": args.subagents,
        "violation": failure, "workdir": workdir if (failure or args.keep) else None,
    }
    if failure is None and not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return result


def _startup_estimate() -> float:
    """Seconds from spawning `python` to durable imported (what a child spends before `open`)."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import durable, durable.tasks, trio"], check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.monotonic() - started


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        import trio

        path, side, inputs = sys.argv[2], sys.argv[3], int(sys.argv[4])
        trio.run(child, path, side, inputs, "--subagents" in sys.argv[5:])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kills", type=int, default=150, help="SIGKILLs that must land (default 150)")
    p.add_argument("--inputs", type=int, default=400, help="inputs to give in all (default 400)")
    p.add_argument("--window", type=float, default=0.8,
                   help="seconds after the start-up in which a kill may land (default 0.8)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a child may run (default 60)")
    p.add_argument("--keep", action="store_true", help="keep the session file and the side file")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON line at the end")
    p.add_argument("--progress", action="store_true", help="a line every 10 kills")
    p.add_argument("--subagents", action="store_true", help="each input handed to two sub-agents (see above)")
    args = p.parse_args()
    result = run(args)
    print(f"kill loop: {result['kills']} SIGKILLs of {result['children']} agent processes on one session file "
          f"(seed {result['seed']}, {result['seconds']} s)")
    print(f"  kills landed: {result['kills_by_phase']}; children that finished before their kill: "
          f"{result['ended_before_kill']}")
    print(f"  inputs: {result.get('submissions', 0)} given, {result.get('acknowledged', 0)} acknowledged, "
          f"{result.get('settled', 0)} settled ({result.get('answered', 0)} answered, unanswered: "
          f"{result['unanswered_reasons'] or 'none'}) of {result['inputs']}")
    print(f"  {result.get('settled_during_kills', 0)} inputs settled while the kills went on, the rest by the last "
          f"process; {result.get('kills that left no session yet', 0)} kill(s) came before the file was a session")
    print(f"  unsafe tool calls: {result.get('unsafe calls committed', 0)} committed, "
          f"{result.get('unsafe executions', 0)} executions, each call at most once; "
          f"{result.get('unsafe calls cut off, not run again', 0)} cut off by a kill and not run again")
    print("  after every kill: integrity_check ok, every acknowledged input present, no unsafe call twice, "
          "no submission settled twice" if result["violation"] is None else f"  VIOLATION: {result['violation']}")
    if result["subagents"]:
        print(f"  sub-agents: {result.get('child conversations', 0)} child conversations, "
              f"{result.get('child inputs answered', 0)} answered; each call one child at most, no wait billed, "
              f"usage rolled up after every kill" if result["violation"] is None else "")
    if result["workdir"]:
        print(f"  files kept in {result['workdir']}")
    if args.json:
        print(json.dumps(result))
    return 0 if result["violation"] is None else 1


if __name__ == "__main__":
    sys.exit(main())
