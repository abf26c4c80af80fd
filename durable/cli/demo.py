"""`durable demo`: a scripted agent session that survives `kill -9`.

One run gives four inputs to the root conversation of a session file, each showing one part of
the harness: a streamed answer; a tool round with a safe tool (`weather`, run again after a
crash) and an unsafe one (`save_note`, which writes into a scratch folder next to the file and
is never run twice); a provider error (HTTP 429) retried after its retry-after; and a deferred
answer (a background job that is polled). The model is `FauxModel` streaming at about 40 tokens
a second on the real clock, so a run takes about 15 s; `speed` scales every delay. With
`--model openai|anthropic` the same four inputs go to a real model, all streamed (the 429 and the
background job are the faux model's script).

Running it again on the same file resumes: the file is reopened (which charges whatever the
killed process was running), the recovery reports and the kept partial answers are shown, and
only the inputs not yet given are submitted. The demo's progress is the conversation itself: the
inputs already submitted are read from the file, and the faux model decides every answer from
the request it gets (which input it answers, which tool results it sees, which attempt it is), so
its script always lines up with what was already answered.

The first three inputs run on a streaming harness; the fourth on the same file reopened with
`stream.deferred=True` (settings belong to a harness, so this is one clean close and reopen: a
close is not a crash and charges nothing).

What is shown comes from committed state only: the live document through `follow()`, the new
entries, the submissions' results and the harness reports. On a terminal it is a `rich` live
view; otherwise (or with `--plain`) one line per notable event, flushed at once.

For crash tests: `DURABLE_DEMO_SPEED` (hidden `--speed`) divides every delay, and
`DURABLE_DEMO_KILL_AT` (hidden `--kill-at`) SIGKILLs the process when a point is committed:
`stream` (a partial answer of 20+ characters), `tool` (the unsafe tool's first output), `backoff`
(a retry timer) or `poll` (a deferred job); `stream@1` only while input 1 is answered. What was
already committed when the file was opened is never a kill point, so a crash loop moves on.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from contextlib import aclosing
from typing import Any

import anyio
import attrs
from attrs import define, frozen

import durable
from durable import records as r
from durable._inspect import owner_of, read_session
from durable.errors import SessionLocked, StorageError
from durable.models import FauxModel, ModelRequest, faux

DEFAULT_DB = "durable-demo.sqlite"
TOKENS_PER_SECOND = 40.0
KILL_POINTS = ("stream", "tool", "backoff", "poll")


class DemoError(StorageError):
    """The demo cannot run on this file (its inputs are not the demo's)."""


# --------------------------------------------------------------------------- the script


@frozen
class Step:
    number: int  # 1-based
    kind: str  # "stream", "tools", "retry", "deferred"
    text: str


STEPS = (
    Step(1, "stream", "Hi! What is this demo about?"),
    Step(2, "tools", "What is the weather in Lisbon? Save a note about it for me."),
    Step(3, "retry", "Summarize what happened so far."),
    Step(4, "deferred", "Finally, write me a haiku about durability. Take your time."),
)
STREAMED = STEPS[:3]
DEFERRED = STEPS[3:]

HAIKU = "Power cut mid-word;\nthe file remembers the rest.\nThe answer goes on."


def scratch_dir(db: str) -> str:
    """Where the unsafe tool writes: `<db without extension>-scratch` next to the file."""
    return os.path.splitext(os.path.abspath(db))[0] + "-scratch"


def _which_step(request: ModelRequest) -> tuple[Step | None, list[Any]]:
    """The scripted step this request answers (from its last user message), and what follows
    that message in the request (tool calls and results of this run)."""
    messages = list(request.messages)
    for i in range(len(messages) - 1, -1, -1):
        entry = messages[i]
        if isinstance(entry, r.UserEntry):
            step = next((s for s in STEPS if s.text == entry.text), None)
            return step, messages[i + 1:]
    return None, []


def make_answer(db: str, speed: float) -> Callable[[ModelRequest], Any]:
    """The faux model's brain: every answer is decided from the request, so the script lines up
    with the conversation whatever an earlier process already answered."""
    note = os.path.join(os.path.basename(scratch_dir(db)), "lisbon.txt")

    def answer(request: ModelRequest) -> Any:
        step, after = _which_step(request)
        if step is None:
            return faux.reply("I only know the demo's script; this input is not part of it.")
        if step.kind == "stream":
            return faux.reply(
                "Hello! I am a scripted agent running on durable. Every step of this conversation is "
                f"committed to the SQLite file {os.path.basename(db)}: your input, my answer as it "
                "streams, each tool call and its output, every retry timer. Kill this process at any "
                "moment (kill -9, or durable demo --kill-after 3) and run durable demo again: the "
                "harness reopens the file, charges what was cut off, and carries on where it stopped."
            )
        if step.kind == "tools":
            results = {e.tool_name: e for e in after if isinstance(e, r.ToolResultEntry)}
            if not results:
                key = request.key
                return faux.reply("Let me look that up and write it down.", tool_calls=[
                    faux.call("weather", {"city": "Lisbon"}, id=f"weather-{key}"),
                    faux.call("save_note", {"name": "lisbon.txt", "lines": NOTE_LINES}, id=f"note-{key}"),
                ])
            parts = []
            weather = results.get("weather")
            if weather is not None and not weather.is_error:
                parts.append(f"In Lisbon it is {weather.content}.")
            else:
                parts.append("The weather service did not answer, so I cannot tell you the weather.")
            saved = results.get("save_note")
            if saved is not None and not saved.is_error:
                parts.append(f"I saved the note to {note}.")
            else:
                parts.append(
                    "Saving the note was cut off, and since save_note writes a file it is not safe to "
                    f"run twice: the harness did not run it again, so {note} may be incomplete."
                )
            parts.append("(weather is a safe tool: after a crash it simply runs again. save_note is "
                         "unsafe: after a crash it is never run a second time.)")
            return faux.reply(" ".join(parts))
        if step.kind == "retry":
            if request.attempt == 1:
                return faux.error("Rate limit reached: too many requests", kind="rate_limit",
                                  status_code=429, retry_after=2.0 / speed)
            inputs = sum(isinstance(e, r.UserEntry) for e in request.messages)
            return faux.reply(
                f"So far you gave me {inputs} inputs. I answered the first as a stream, then called two "
                "tools for the second. For this one the provider refused attempt 1 with HTTP 429; the "
                "harness slept out the retry-after in a durable timer (it survives a crash too) and "
                f"this is attempt {request.attempt}."
            )
        return faux.reply(HAIKU)

    return answer


NOTE_LINES = [
    "Lisbon, today",
    "21 °C and clear skies",
    "wind 12 km/h from the north-west",
    "a good day for a walk along the river",
    "(written by the durable demo)",
]


class DemoModel(FauxModel):
    """The demo's faux model: `answer` decides every step (any number of requests), and a
    deferred job submitted by an earlier, killed process is still found at the "provider", as a
    real provider keeps it: fetching its handle adopts it with the same answer."""

    def __init__(self, answer: Callable[[ModelRequest], Any], speed: float) -> None:
        # One step per request; the demo makes about a dozen, a long crash loop a few more.
        super().__init__([answer] * 512, tokens_per_second=TOKENS_PER_SECOND * speed, token_size=4,
                         deferred=True, poll_after=1.0 / speed, polls=3)
        self._adopted: dict[str, str] = {}

    async def fetch(self, handle: str):  # type: ignore[override]
        if handle not in self.submitted and handle not in self._adopted:
            request = ModelRequest("", (r.UserEntry(DEFERRED[0].text),), key=handle)
            self._adopted[handle] = (await self.submit(request)).id
        return await super().fetch(self._adopted.get(handle, handle))


# --------------------------------------------------------------------------- tools


def make_tools(db: str, speed: float) -> list[durable.Tool]:
    scratch = scratch_dir(db)
    step = 0.5 / speed

    async def weather(args: dict, api: durable.ToolApi, ctx: durable.ToolContext) -> str:
        city = args["city"]
        run = f" (run {ctx.attempt})" if ctx.attempt > 1 else ""
        for line in (f"looking up {city}{run}", "station LPPT: 21 °C", "forecast: clear, wind 12 km/h NW"):
            await api.output(line + "\n")
            await anyio.sleep(step)
        return "21 °C and clear, with a 12 km/h north-westerly wind"

    async def save_note(args: dict, api: durable.ToolApi, ctx: durable.ToolContext) -> str:
        os.makedirs(scratch, exist_ok=True)
        path = os.path.join(scratch, os.path.basename(args["name"]))
        with open(path, "w", encoding="utf-8") as f:  # not safe to repeat: it overwrites
            for line in args["lines"]:
                f.write(line + "\n")
                f.flush()
                await api.output(f"wrote: {line}\n")
                await anyio.sleep(step)
        return f"saved {len(args['lines'])} lines to {path}"

    return [
        durable.define_tool(
            "weather", "Current weather for a city.",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            replay="safe", execute=weather,
        ),
        durable.define_tool(
            "save_note", "Write a note (lines of text) into the demo's scratch folder.",
            {"type": "object", "properties": {"name": {"type": "string"},
                                              "lines": {"type": "array", "items": {"type": "string"}}},
             "required": ["name", "lines"]},
            replay="unsafe", execute=save_note,
        ),
    ]


# --------------------------------------------------------------------------- models


def make_model(kind: str, db: str, speed: float) -> Any:
    """The model for `--model`. Raises `MissingCredentials` (a ValueError) without a key."""
    name = os.environ.get("DURABLE_DEMO_MODEL")
    if kind == "openai":
        from durable.models.openai import OpenAIModel

        api = os.environ.get("DURABLE_DEMO_OPENAI_API", "responses")
        return OpenAIModel(name or "gpt-4o-mini", api=api)  # type: ignore[arg-type]
    if kind == "anthropic":
        from durable.models.anthropic import AnthropicModel

        return AnthropicModel(name or "claude-3-5-haiku-latest")
    return DemoModel(make_answer(db, speed), speed)


# --------------------------------------------------------------------------- options and state


@frozen
class DemoOptions:
    db: str = DEFAULT_DB
    kill_after: float | None = None
    model: str = "faux"
    speed: float = 1.0
    kill_at: str | None = None  # "stream", "tool", "backoff" or "poll", optionally "@<input number>"


@define
class DemoProgress:
    """What the demo knows of its conversation: submission ids by step number, and results."""

    ids: dict[int, str] = attrs.field(factory=dict)
    current: Step | None = None
    last_seq: int = 0


def read_progress(db: str) -> tuple[dict[int, str], dict[int, str]]:
    """The steps already submitted (id by step number) and their statuses, from the file."""
    if not (os.path.exists(db) and os.path.getsize(db) > 0):
        return {}, {}
    data = read_session(db, last=1 << 30)
    subs = [s for s in data["submissions"] if s["conversation_id"] == "root"]
    ids: dict[int, str] = {}
    statuses: dict[int, str] = {}
    for i, sub in enumerate(subs):
        if i >= len(STEPS) or sub["text"] != STEPS[i].text:
            raise DemoError(
                f"{db} holds a session that durable demo did not write (its input {i + 1} is "
                f"{sub['text']!r}); pass another --db", location=db)
        ids[i + 1] = sub["id"]
        statuses[i + 1] = sub["status"]
    return ids, statuses


# --------------------------------------------------------------------------- the run


async def run_demo(opts: DemoOptions, ui: Ui, model: Any = None) -> int:
    """Run (or resume) the demo on `opts.db`; returns the exit status."""
    db = opts.db
    pid = owner_of(db) if os.path.exists(db) else None
    if pid is not None:
        raise SessionLocked(db, pid if pid > 0 else None)
    ids, statuses = read_progress(db)
    if model is None:
        model = make_model(opts.model, db, opts.speed)
    faux_model = isinstance(model, DemoModel)
    ui.start(db)
    try:
        if ids:
            open_ = [n for n, st in statuses.items() if st == "queued"]
            ui.event("resume", f"{db} exists: {len(ids)} of {len(STEPS)} inputs already given"
                     + (f", input {open_[0]} not yet settled" if open_ else "") + "; resuming")
        else:
            ui.event("start", f"new session file {db} (scratch folder {scratch_dir(db)})")
        progress = DemoProgress(dict(ids))
        async with anyio.create_task_group() as tg:
            if opts.kill_after is not None:
                tg.start_soon(_kill_after, opts.kill_after, ui)
            base = durable.Settings(
                retry=durable.RetryPolicy(base_delay=1.0 / opts.speed, max_delay=30.0),
                system_prompt="You are the durable demo agent. Use the tools when they help.",
            )
            phases = [(STREAMED, base)]
            deferred = attrs.evolve(base, stream=durable.StreamSettings(deferred=faux_model))
            phases.append((DEFERRED, deferred))
            opened = False
            for n, (steps, settings) in enumerate(phases):
                todo = [s for s in steps if s.number not in progress.ids or statuses.get(s.number) == "queued"]
                if not todo:
                    continue
                if n > 0 and faux_model:
                    how = "reopening" if opened else "opening"
                    ui.event("reopen", f"{how} the file with stream.deferred=True for the deferred input"
                             + (" (a clean close and reopen: nothing is charged)" if opened else ""))
                await _run_phase(opts, ui, model, settings, steps, progress, first=not opened)
                opened = True
                if ui.failure:
                    break
            tg.cancel_scope.cancel()
        return _finish(ui, db)
    finally:
        ui.stop()


async def _run_phase(opts: DemoOptions, ui: Ui, model: Any, settings: durable.Settings,
                     steps: tuple[Step, ...], progress: DemoProgress, *, first: bool) -> None:
    harness = durable.open_harness(opts.db, model=model, tools=make_tools(opts.db, opts.speed),
                                   settings=settings, report=ui.report)
    async with harness as h:
        await _show_recovery(h, ui, progress, first=first)
        async with anyio.create_task_group() as tg:
            watcher = Watcher(h, ui, progress, opts)
            await tg.start(watcher.run)
            await h.resume()
            for step in steps:
                sid = progress.ids.get(step.number)
                if sid is None:
                    await anyio.sleep(0.6 / opts.speed)  # the user is typing
                    sub = await h.root.submit(step.text)
                    sid = progress.ids[step.number] = sub.id
                    ui.submitted(step, len(STEPS))
                progress.current = step
                result = await h.root.submission(sid).wait()
                await watcher.sync()
                if isinstance(result, r.Unanswered) and result.reason == "model_error":
                    # The provider refuses (a bad key, an unknown model, retries used up): the
                    # next inputs would fare no better. Stop; the exit status says why.
                    ui.failure = f"input {step.number} was not answered: {result.detail}"
                    break
            progress.current = None
            await watcher.sync()
            tg.cancel_scope.cancel()


async def _show_recovery(h: durable.Harness, ui: Ui, progress: DemoProgress, *, first: bool) -> None:
    """What opening the file found: tasks the dead process was running (charged by this open),
    sleeping timers and waiting tool rounds (never charged)."""
    entries = await h.root.entries()
    progress.last_seq = entries[-1].seq if entries else 0
    if first:
        ui.history(entries)
    live_tasks = []
    for state in ("pending", "sleeping", "waiting"):
        live_tasks += await h.tasks(state=state)
    for task in sorted(live_tasks, key=lambda t: t.id):
        what = f"task {task.id} ({_task_name(task)})"
        if isinstance(task.state, r.Pending) and task.restarts:
            phase = _PHASES.get(type(task.checkpoint), "")
            where = f", in its {phase} phase" if phase and task.kind == "generation" else ""
            ui.event("recovery", f"{what} was running when the last process died{where}: charged by this "
                                 f"open (restarts={task.restarts})")
        elif isinstance(task.state, r.Sleeping):
            until = time.strftime("%H:%M:%S", time.localtime(task.state.until))
            ui.event("recovery", f"{what} is in a durable timer until {until}: it was not running, "
                                 "nothing is charged")
        elif isinstance(task.state, r.Waiting):
            ui.event("recovery", f"{what} is waiting on its tools: not charged")
        elif isinstance(task.state, r.Pending):
            ui.event("recovery", f"{what} was written back pending by a clean close: it resumes without a charge")


_PHASES = {r.Prepare: "prepare", r.Request: "request", r.Poll: "poll", r.Retry: "retry", r.ToolRound: "tools"}


def _task_name(task: r.Task) -> str:
    if isinstance(task.input, r.ToolInput):
        return f"tool {task.input.call.name}, {task.input.replay}"
    return task.kind


def _finish(ui: Ui, db: str) -> int:
    """The exit status, from the file: 0 when every input of the script settled."""
    _, statuses = read_progress(db)
    settled = [n for n, st in statuses.items() if st != "queued"]
    answered = [n for n, st in statuses.items() if st == "done"]
    if len(settled) == len(STEPS):
        rest = len(settled) - len(answered)
        ui.event("done", f"all {len(STEPS)} inputs settled: {len(answered)} answered"
                 + (f", {rest} visibly unanswered" if rest else "") + f". Inspect it: durable inspect {db}")
        return 0
    ui.event("stopped", f"{len(settled)} of {len(STEPS)} inputs settled")
    if not ui.failure:
        ui.failure = f"only {len(settled)} of {len(STEPS)} inputs settled; run durable demo --db {db} again"
    return 1


async def _kill_after(seconds: float, ui: Ui) -> None:
    await anyio.sleep(seconds)
    kill_now(ui, f"--kill-after {seconds:g}: the demo kills itself with SIGKILL now")


def kill_now(ui: Ui, why: str) -> None:
    """SIGKILL this process: nothing is closed, flushed or written back (what a crash leaves)."""
    ui.event("kill", why)
    ui.stop()
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


# --------------------------------------------------------------------------- watching commits


class Watcher:
    """Follows the root conversation's committed live document; on every commit reads the new
    entries and turns the changes into events, and kills the process at `kill_at`."""

    def __init__(self, h: durable.Harness, ui: Ui, progress: DemoProgress, opts: DemoOptions) -> None:
        self.h = h
        self.ui = ui
        self.progress = progress
        self.kill_at = opts.kill_at
        self.prev: r.Live | None = None  # None: nothing shown yet (what is live at open is not "new")
        self._lock = anyio.Lock()

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        async with aclosing(self.h.root.follow()) as follow:
            first = await follow.__anext__()  # registered: no commit after this is missed
            task_status.started()
            await self._show(first)
            async for live in follow:
                await self._show(live)

    async def _show(self, live: r.Live) -> None:
        await self.sync()
        task = await self.h.task(live.run.task_id) if live.run else None
        self.ui.live(live, task, self.progress.current)
        self._events(self.prev, live)
        if self.prev is not None:  # what was committed before this process opened is no kill point
            self._maybe_kill(live)
        self.prev = live

    async def sync(self) -> None:
        """Show the entries committed since the last look."""
        async with self._lock:
            for stored in await self.h.root.entries(self.progress.last_seq + 1):
                self.progress.last_seq = stored.seq
                self.ui.entry(stored)

    def _events(self, prev: r.Live | None, live: r.Live) -> None:
        opening = prev is None
        prev = prev or r.Live()
        gen, old = live.generation, prev.generation
        if gen is not None and gen.retry is not None and (old is None or old.retry != gen.retry):
            rt = gen.retry
            code = f", HTTP {rt.status_code}" if rt.status_code else ""
            self.ui.event("retry", f"attempt {rt.attempt} failed ({rt.kind}{code}): {rt.error}; "
                                   f"attempt {rt.attempt + 1} in {max(0.0, rt.at - time.time()):.1f} s")
        if gen is not None and gen.deferred is not None and (old is None or old.deferred != gen.deferred):
            if old is None or old.deferred is None or old.attempt != gen.attempt:
                self.ui.event("deferred", f"attempt {gen.attempt} asks for the answer as a background job, "
                                          "polled until it is ready")
            else:
                wait = max(0.0, gen.deferred.poll_at - time.time())
                self.ui.event("deferred", f"the job is still running; next poll in {wait:.1f} s")
        old_slots = {s.task_id: s for s in prev.tools}
        for slot in live.tools:
            before = old_slots.get(slot.task_id)
            if before is None and not opening:
                self.ui.event("tool", f"{slot.name} started (task {slot.task_id})")
        if live.run_failure is not None and live.run_failure != prev.run_failure:
            f = live.run_failure
            self.ui.event("unanswered", f"run of task {f.task_id} ended: {f.reason}: {f.detail}")

    def _maybe_kill(self, live: r.Live) -> None:
        if not self.kill_at:
            return
        point, _, number = self.kill_at.partition("@")
        current = self.progress.current
        if number and (current is None or str(current.number) != number):
            return
        gen = live.generation
        hit = (
            (point == "stream" and gen is not None and len(gen.message.text) >= 20)
            or (point == "tool" and any(s.name == "save_note" and s.output and s.status == "running"
                                        for s in live.tools))
            or (point == "backoff" and gen is not None and gen.retry is not None)
            or (point == "poll" and gen is not None and gen.deferred is not None)
        )
        if hit:
            kill_now(self.ui, f"DURABLE_DEMO_KILL_AT={self.kill_at}: the demo kills itself with SIGKILL now")


# --------------------------------------------------------------------------- showing it


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _one_line(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_entry(entry: Any) -> tuple[str, str] | None:
    """(event kind, text) for an entry, as the plain output prints it."""
    if isinstance(entry, r.UserEntry):
        return None  # shown when submitted
    if isinstance(entry, r.AssistantEntry):
        if entry.stop_reason == "aborted":
            why = (f"was cut off ({entry.error})" if entry.error
                   else "was stopped by a clean close (it is sent again, without a charge)")
            return "kept partial", (f"attempt {entry.attempt} {why}; its partial answer stays in the conversation "
                                    f"as aborted: \"{_one_line(entry.text, 80)}\"")
        if entry.stop_reason == "error":
            return "failed attempt", f"attempt {entry.attempt}: {entry.error}: \"{_one_line(entry.text, 80)}\""
        if entry.tool_calls:
            calls = ", ".join(f"{c.name}({_one_line(_readable_json(c.arguments), 60)})" for c in entry.tool_calls)
            return "tool calls", f"(attempt {entry.attempt}) {_one_line(entry.text)} -> {calls}"
        return "answer", f"(attempt {entry.attempt}, {entry.usage.output_tokens} tokens) {_one_line(entry.text, 800)}"
    if isinstance(entry, r.ToolResultEntry):
        return ("tool error" if entry.is_error else "tool done"), f"{entry.tool_name}: {_one_line(entry.content)}"
    if isinstance(entry, r.CompactionEntry):
        return "compaction", _one_line(entry.summary)
    return None


def _readable_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except ValueError:
        return text


def describe_report(rep: Any) -> str:
    if isinstance(rep, durable.TaskInterrupted):
        what = {"interrupted": "was cut off", "not_rerun": "was cut off and is not run again",
                "restart_limit": "reached the restart limit"}.get(rep.reason, rep.reason)
        return f"task {rep.task.id} ({rep.task.kind}) {what} (restarts={rep.restarts}): {rep.detail}"
    if isinstance(rep, durable.TaskFaulted):
        return f"task {rep.task.id} ({rep.task.kind}) faulted ({rep.reason}): {rep.detail}"
    return getattr(rep, "message", str(rep))


class Ui:
    """The plain display: one line per notable event, flushed at once (a kill loses nothing)."""

    def __init__(self, out: Any = None) -> None:
        self.out = out or sys.stdout
        self.failure: str | None = None

    def start(self, db: str) -> None:
        pass

    def stop(self) -> None:
        try:
            self.out.flush()
        except (OSError, ValueError):
            pass

    def event(self, kind: str, text: str) -> None:
        print(f"[{kind}] {text}", file=self.out, flush=True)

    def submitted(self, step: Step, total: int) -> None:
        self.event(f"input {step.number}/{total}", f"you: {step.text}")

    def history(self, entries: list[r.StoredEntry]) -> None:
        aborted = [e for e in entries if isinstance(e.entry, r.AssistantEntry) and e.entry.stop_reason == "aborted"]
        if entries:
            self.event("history", f"the conversation has {_count(len(entries), 'entry', 'entries')}, "
                                  f"{_count(len(aborted), 'aborted partial', 'aborted partials')}")

    def entry(self, stored: r.StoredEntry) -> None:
        described = describe_entry(stored.entry)
        if described is not None:
            self.event(*described)

    def report(self, rep: Any) -> None:
        kind = "recovery" if isinstance(rep, (durable.TaskInterrupted, durable.TaskFaulted)) else "provider error"
        self.event(kind, describe_report(rep))

    def live(self, live: r.Live, task: r.Task | None, step: Step | None) -> None:
        pass


class RichUi(Ui):
    """The terminal display: a `rich.live.Live` view of the committed state, refreshed 10 times a
    second (so a retry countdown moves), with the transcript, the partial answer as it streams,
    tool slots with their output, attempts and restarts, and the last events."""

    def __init__(self) -> None:
        super().__init__()
        from rich.console import Console

        self.console = Console()
        self._live_view: Any = None
        self.db = ""
        self.transcript: list[r.StoredEntry] = []
        self.events: list[str] = []
        self.recovery: list[str] = []  # what the reopen found and did: kept on screen
        self.final: list[str] = []  # printed below the view when it stops
        self.state: tuple[r.Live, r.Task | None, Step | None] = (r.Live(), None, None)

    def start(self, db: str) -> None:
        from rich.live import Live

        self.db = db
        self._live_view = Live(get_renderable=self._render, console=self.console, refresh_per_second=10,
                               transient=False, redirect_stdout=False)
        self._live_view.start()

    def stop(self) -> None:
        if self._live_view is not None:
            view, self._live_view = self._live_view, None
            view.refresh()
            view.stop()
            for line in self.final:
                self.console.print(line, markup=False, highlight=False)
        self.console.show_cursor(True)

    def event(self, kind: str, text: str) -> None:
        line = f"[{kind}] {text}"
        if kind in ("recovery", "resume", "kept partial"):
            self.recovery = [*self.recovery[-7:], line]
        else:
            self.events = [*self.events[-7:], line]
        if kind in ("done", "stopped", "kill", "unanswered"):
            self.final.append(line)

    def history(self, entries: list[r.StoredEntry]) -> None:
        self.transcript = list(entries)
        super().history(entries)

    def entry(self, stored: r.StoredEntry) -> None:
        self.transcript = [*self.transcript, stored]
        described = describe_entry(stored.entry)
        if described is not None and described[0] in ("kept partial", "failed attempt", "tool error"):
            self.event(*described)

    def live(self, live: r.Live, task: r.Task | None, step: Step | None) -> None:
        self.state = (live, task, step)

    def _render(self) -> Any:
        from rich.console import Group
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text

        live, task, step = self.state
        width = max(40, self.console.width - 8)
        status = Text()
        if live.run is not None:
            status.append(f"input {step.number if step else '?'} of {len(STEPS)}", style="bold")
            status.append(f"  ·  task {live.run.task_id}")
            if live.generation is not None:
                status.append(f"  ·  attempt {live.generation.attempt}")
            if task is not None:
                status.append(f"  ·  restarts {task.restarts}", style="yellow" if task.restarts else "")
        else:
            status.append("idle", style="dim")
        now_view, now_height = self._render_live(live, width)
        events = self.events[-4:]
        recovery = self.recovery[-4:]
        # Everything fits the terminal: the transcript gets what the rest leaves (one line an entry).
        recovery_height = 2 * len(recovery) + 2 if recovery else 0  # a recovery line may wrap once
        rows = max(2, min(12, self.console.height - 8 - len(events) - now_height - recovery_height))
        transcript = Table.grid(padding=(0, 1))
        transcript.add_column(style="bold", no_wrap=True, min_width=12)
        transcript.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
        for stored in self.transcript[-rows:]:
            label, text, style = _entry_row(stored.entry)
            body = Text(" ".join(text.split()), style="dim" if style == "dim" else "")
            transcript.add_row(Text(label, style=style), body)
        parts: list[Any] = [status]
        if recovery:
            parts.append(Panel(Text("\n".join(recovery)),
                               title="recovery", title_align="left", border_style="yellow"))
        parts.append(Panel(transcript, title="conversation (committed)", title_align="left"))
        if now_view is not None:
            parts.append(Panel(now_view, title="live document (committed)", title_align="left", border_style="cyan"))
        if events:
            parts.append(Text("\n".join(events), style="dim", no_wrap=True, overflow="ellipsis"))
        return Panel(Group(*parts), title=f"durable demo · {self.db}",
                     subtitle="kill -9 me any time, then run durable demo again", border_style="blue")

    def _render_live(self, live: r.Live, width: int) -> tuple[Any, int]:
        """The live document, and the lines it takes (its border included)."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        parts: list[Any] = []
        height = 2
        gen = live.generation
        if gen is not None:
            if gen.retry is not None:
                left = max(0.0, gen.retry.at - time.time())
                code = f" HTTP {gen.retry.status_code}" if gen.retry.status_code else ""
                parts.append(Text(f"⏳ attempt {gen.retry.attempt} failed ({gen.retry.kind}{code}): {gen.retry.error}\n"
                                  f"   attempt {gen.retry.attempt + 1} in {left:.1f} s (a durable timer)",
                                  style="yellow", no_wrap=True, overflow="ellipsis"))
                height += 2
            elif gen.deferred is not None:
                left = max(0.0, gen.deferred.poll_at - time.time())
                parts.append(Text(f"⌛ background job (attempt {gen.attempt}): next poll in {left:.1f} s",
                                  style="magenta"))
                height += 1
            else:
                text = gen.message.text
                tail = 3 * width - 30  # the newest three lines of the partial answer
                if len(text) > tail:
                    text = "…" + text[-tail:]
                parts.append(Text.assemble(("assistant ", "bold green"), (f"(attempt {gen.attempt}) ", "dim"),
                                           " ".join(text.split()) if text.strip() else "", ("▍", "blink")))
                height += 3
        if live.tools:
            table = Table(box=None, show_header=True, header_style="dim", pad_edge=False)
            table.add_column("tool", no_wrap=True)
            table.add_column("status", no_wrap=True)
            table.add_column("output (newest lines)", no_wrap=True, overflow="ellipsis")
            height += 1
            for slot in live.tools:
                out = "\n".join(slot.output.splitlines()[-2:])
                style = {"done": "green", "error": "red", "waiting": "magenta"}.get(slot.status, "yellow")
                table.add_row(slot.name, Text(slot.status, style=style), out)
                height += 2
            parts.append(table)
        if live.run_failure is not None:
            f = live.run_failure
            parts.append(Text(f"✗ unanswered ({f.reason}): {f.detail}", style="red", no_wrap=True, overflow="ellipsis"))
            height += 1
        return (Group(*parts), height) if parts else (None, 0)


def _entry_row(entry: Any) -> tuple[str, str, str]:
    if isinstance(entry, r.UserEntry):
        return "you", entry.text, "cyan"
    if isinstance(entry, r.AssistantEntry):
        if entry.stop_reason in ("aborted", "error"):
            return f"assistant ✗{entry.attempt}", f"{entry.text} [{entry.error or entry.stop_reason}]", "dim"
        calls = "".join(f" → {c.name}({_readable_json(c.arguments)})" for c in entry.tool_calls)
        return "assistant", entry.text + calls, "green"
    if isinstance(entry, r.ToolResultEntry):
        mark, style = ("✗", "red") if entry.is_error else ("✓", "yellow")
        return f"{entry.tool_name} {mark}", entry.content, style
    return "summary", getattr(entry, "summary", ""), "dim"


def make_ui(plain: bool) -> Ui:
    if not plain and sys.stdout.isatty():
        return RichUi()
    return Ui()


def main(opts: DemoOptions, *, plain: bool = False) -> int:
    """Run the demo; returns the exit status. Raises `DurableError` for a file it cannot use and
    `MissingCredentials` for a provider without a key."""
    if opts.kill_at is not None and opts.kill_at.partition("@")[0] not in KILL_POINTS:
        raise ValueError(f"DURABLE_DEMO_KILL_AT must be one of {', '.join(KILL_POINTS)} (optionally @<input>), "
                         f"not {opts.kill_at!r}")
    if opts.speed <= 0:
        raise ValueError(f"the demo speed must be positive, not {opts.speed:g}")
    model = make_model(opts.model, opts.db, opts.speed)  # a missing key fails before the file is touched
    ui = make_ui(plain)
    status = anyio.run(run_demo, opts, ui, model, backend="trio")
    if ui.failure:
        print(f"durable demo: {ui.failure}", file=sys.stderr)
    return status


__all__ = ["DemoOptions", "STEPS", "main", "run_demo", "scratch_dir"]

