"""`durable demo`: a scripted agent session that survives `kill -9` (the orchestration).

One run gives four inputs to the root conversation of a session file, each showing one part of
the harness: a streamed answer; a tool round with a safe tool (`weather`, run again after a
crash) and an unsafe one (`save_note`, which writes into a scratch folder next to the file and
is never run twice); a provider error (HTTP 429) retried after its retry-after; and a deferred
answer (a background job that is polled). The script and its faux model are in `demo_model`,
the tools in `demo_tools`, the model for `--model` in `providers`; `speed` scales every delay.

Running it again on the same file resumes: what the killed process was running is counted as
cut off, one recovery line per such task and the kept partial answers are shown, and only the
inputs not yet given (read from the file through `SessionReader`) are submitted. The fourth input
runs on the file reopened with `stream.deferred=True` (settings belong to a harness: one clean
close and reopen, which counts nothing as failed).

What is shown comes from committed state only (`watcher`): a `rich` live view on a terminal
(`live_view`), otherwise (or with `--plain`) one line per notable event (`plain_view`). For crash
tests, `kill` SIGKILLs the process at `--kill-after` or at a `DURABLE_DEMO_KILL_AT` point
(`DURABLE_DEMO_SPEED` divides every delay).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

import anyio
import attrs
from attrs import frozen

from .. import codec, records as r
from .._open import open_harness
from ..engine.reports import TaskFaulted, TaskInterrupted
from ..errors import SessionLocked, StorageError
from ..settings import RetryPolicy, Settings, StreamSettings
from ..storage.sqlite.reader import SessionReader, owner_of
from .demo_model import DEFERRED, STEPS, STREAMED, DemoModel, DemoProgress, Step, scratch_dir
from .demo_tools import make_tools
from .kill import KILL_POINTS, kill_after
from .plain_view import Ui, describe_cut_off, task_name
from .providers import make_model
from .watcher import Watcher

if TYPE_CHECKING:
    from ..engine.harness import Harness

DEFAULT_DB = "durable-demo.sqlite"


class DemoError(StorageError):
    """The demo cannot run on this file (its inputs are not the demo's)."""


@frozen
class DemoOptions:
    db: str = DEFAULT_DB
    kill_after: float | None = None
    model: str = "faux"
    speed: float = 1.0
    kill_at: str | None = None  # "stream", "tool", "backoff" or "poll", optionally "@<input number>"


def read_progress(db: str) -> tuple[dict[int, str], dict[int, str]]:
    """The steps already submitted (id by step number) and their status tags, from the file."""
    if not (os.path.exists(db) and os.path.getsize(db) > 0):
        return {}, {}
    with SessionReader(db) as reader:
        subs = sorted(reader.submissions(conversation_id="root"), key=lambda s: (s.created_at, s.id))
    ids: dict[int, str] = {}
    statuses: dict[int, str] = {}
    for i, sub in enumerate(subs):
        if i >= len(STEPS) or sub.text != STEPS[i].text:
            raise DemoError(
                f"{db} holds a session that durable demo did not write (its input {i + 1} is "
                f"{sub.text!r}); pass another --db", location=db)
        ids[i + 1] = sub.id
        statuses[i + 1] = codec.tag_of(sub.status)
    return ids, statuses


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
                tg.start_soon(kill_after, opts.kill_after, ui)
            base = Settings(
                retry=RetryPolicy(base_delay=1.0 / opts.speed, max_delay=30.0),
                system_prompt="You are the durable demo agent. Use the tools when they help.",
            )
            deferred = attrs.evolve(base, stream=StreamSettings(deferred=faux_model))
            opened = False
            for n, (steps, settings) in enumerate([(STREAMED, base), (DEFERRED, deferred)]):
                todo = [s for s in steps if s.number not in progress.ids or statuses.get(s.number) == "queued"]
                if not todo:
                    continue
                if n > 0 and faux_model:
                    how = "reopening" if opened else "opening"
                    ui.event("reopen", f"{how} the file with stream.deferred=True for the deferred input"
                             + (" (a clean close and reopen: nothing is counted as failed)" if opened else ""))
                await _run_phase(opts, ui, model, settings, steps, progress, first=not opened)
                opened = True
                if ui.failure:
                    break
            tg.cancel_scope.cancel()
        return _finish(ui, db)
    finally:
        ui.stop()


class _Recovery:
    """The tasks the open found cut off, until each one's report arrives: then one line says
    what it was doing and what recovery does about it. Other reports go to the display as they are."""

    def __init__(self, ui: Ui) -> None:
        self.ui = ui
        self.cut_off: dict[int, r.Task] = {}

    def report(self, rep: Any) -> None:
        cut_off = isinstance(rep, (TaskInterrupted, TaskFaulted))
        task = self.cut_off.pop(rep.task.id, None) if cut_off else None
        if task is not None:
            self.ui.event("recovery", describe_cut_off(task, rep))
        else:
            self.ui.report(rep)

    def unreported(self) -> None:
        """A line for each cut-off task that sent no report (so none goes unmentioned)."""
        for task in self.cut_off.values():
            self.ui.event("recovery", describe_cut_off(task, None))
        self.cut_off.clear()


async def _run_phase(opts: DemoOptions, ui: Ui, model: Any, settings: Settings,
                     steps: tuple[Step, ...], progress: DemoProgress, *, first: bool) -> None:
    recovery = _Recovery(ui)
    harness = open_harness(opts.db, model=model, tools=make_tools(opts.db, opts.speed),
                                   settings=settings, report=recovery.report)
    async with harness as h:
        await _show_recovery(h, ui, progress, recovery)
        async with anyio.create_task_group() as tg:
            watcher = Watcher(h, ui, progress, opts.kill_at, history=first,
                              recovering={t.id: t.checkpoint for t in recovery.cut_off.values()})
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
            recovery.unreported()
            await watcher.show_history()
            tg.cancel_scope.cancel()


async def _show_recovery(h: Harness, ui: Ui, progress: DemoProgress, recovery: _Recovery) -> None:
    """What opening the file found. Tasks the dead process was running are kept for one line
    each when their recovery report comes; sleeping timers, waiting tool rounds and tasks a clean
    close wrote back were not cut off, and are said so now."""
    entries = await h.root.entries()
    progress.last_seq = entries[-1].seq if entries else 0
    ui.opened(entries)
    live_tasks = []
    for state in ("pending", "sleeping", "waiting"):
        live_tasks += await h.tasks(state=state)
    for task in sorted(live_tasks, key=lambda t: t.id):
        what = f"task {task.id} ({task_name(task)})"
        if isinstance(task.state, r.Pending) and task.restarts:
            recovery.cut_off[task.id] = task
        elif isinstance(task.state, r.Sleeping):
            until = time.strftime("%H:%M:%S", time.localtime(task.state.until))
            ui.event("recovery", f"{what} is in a durable timer until {until}: it was not running, so nothing "
                                 "was cut off")
        elif isinstance(task.state, r.Waiting):
            ui.event("recovery", f"{what} is waiting on its tools: it was not running, so nothing was cut off")
        elif isinstance(task.state, r.Pending):
            ui.event("recovery", f"{what} was written back by a clean close: it resumes, nothing counted as failed")


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


def make_ui(plain: bool) -> Ui:
    if not plain and sys.stdout.isatty():
        from .live_view import RichUi

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


__all__ = ["KILL_POINTS", "STEPS", "DemoOptions", "main", "run_demo", "scratch_dir"]
