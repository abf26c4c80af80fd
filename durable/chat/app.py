"""`durable chat`: the loop. The harness runs on trio in a thread of its own (an anyio blocking
portal); the main thread reads lines, prints, and takes Ctrl-C where it waits: once the harness is
open, SIGINT only records the press (`terminal.CtrlC`), which the line reader or the run being
followed takes (Python's `KeyboardInterrupt`, raised anywhere, is lost in a weakref callback).

What is printed comes from committed state: each input's run is followed with `sub.stream()`,
its events (and the harness's reports) handed to the main thread through one queue. Ctrl-C
during a run aborts it (the partial answer is kept, marked cut off); at the prompt, twice in a
row quits (a clean close). A tool call waiting for approval is asked y / n / e (edit the JSON
arguments), decided with `h.approve` / `h.deny`.

On reopening a session that a kill cut off, the tasks found cut off are awaited until each one's
recovery report says what was done (in plain words: `render.describe_report`), then the run that
was in progress is followed to its end (a pending approval is asked again) before the prompt.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import queue
from collections.abc import Callable
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from attrs import frozen

from .._open import open_harness
from ..engine.stream_events import ApprovalRequestedEvent
from ..errors import ApprovalRejected
from ..settings import Settings
from .commands import conversations_of, run_command
from .instructions import SYSTEM_PROMPT, make_instructions
from .models import make_model
from .render import EventView, Screen, arguments_text, describe_report
from .shell import DEFAULT_TIMEOUT, make_bash
from .terminal import CtrlC, LineReader
from .tools import make_file_tools

RECOVERY_WAIT = 10.0  # seconds to wait for the recovery reports of the tasks found cut off


@frozen
class ChatOptions:
    session: str | None = None
    model: str = "faux"
    cwd: str = "."
    yes: bool = False
    bash_timeout: float = DEFAULT_TIMEOUT


def default_session(cwd: str) -> str:
    """`~/.local/state/durable-chat/<folder>-<hash>.sqlite` ($XDG_STATE_HOME when set): one per folder."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    digest = hashlib.sha256(cwd.encode()).hexdigest()[:8]
    return os.path.join(state, "durable-chat", f"{os.path.basename(cwd) or 'root'}-{digest}.sqlite")


class ChatApp:
    def __init__(self, opts: ChatOptions, screen: Screen | None = None) -> None:
        self.cwd = os.path.realpath(opts.cwd)
        if not os.path.isdir(self.cwd):
            raise NotADirectoryError(20, "Not a folder", opts.cwd)
        self.path = opts.session or default_session(self.cwd)
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        self.opts = opts
        self.model, self.prices = make_model(opts.model)  # a missing key fails before the file is touched
        self.screen = screen or Screen()
        self.view = EventView(self.screen)
        # The harness's thread puts, and SIGINT's handler (in the main thread, maybe inside a get).
        self.events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.ctrl_c = CtrlC(wake=lambda: self.events.put(("ctrl-c", None)))
        self.reader = LineReader(self.path + ".history", self.ctrl_c)
        self.conv_id = "root"
        self.portal: BlockingPortal | None = None
        self.h: Any = None

    # ------------------------------------------------------------------ plumbing

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run async `fn(*args)` on the harness's thread and return its result."""
        assert self.portal is not None
        return self.portal.call(fn, *args)

    @property
    def conv(self) -> Any:
        return self.h.conversation(self.conv_id)

    def _report(self, rep: Any) -> None:  # on the harness's thread
        self.events.put(("report", rep))

    def show_report(self, rep: Any) -> None:
        line = describe_report(rep)
        if line is not None:
            self.screen.line(line, "33")

    def drain_reports(self) -> None:
        while True:
            try:
                kind, item = self.events.get_nowait()
            except queue.Empty:
                return
            if kind == "report":
                self.show_report(item)

    # ------------------------------------------------------------------ the session

    def run(self) -> int:
        yes = self.opts.yes
        tools = [*make_file_tools(self.cwd, approve=not yes, session=self.path),
                 make_bash(self.cwd, approve=not yes, timeout=self.opts.bash_timeout)]
        existed = os.path.exists(self.path) and os.path.getsize(self.path) > 0
        settings = Settings(system_prompt=SYSTEM_PROMPT, prices=self.prices)
        try:
            with start_blocking_portal("trio") as portal:
                self.portal = portal
                harness = portal.call(lambda: open_harness(  # made on the event loop's thread
                    self.path, model=self.model, tools=tools, settings=settings, report=self._report,
                    instructions=make_instructions(self.cwd)))
                with portal.wrap_async_context_manager(harness) as h:
                    self.h = h
                    self.ctrl_c.catch()  # until the harness is closed: a Ctrl-C then is no traceback
                    self.greet(existed)
                    try:
                        self.recover()
                    except EOFError:
                        pass
                    else:
                        self.loop()
        finally:
            self.ctrl_c.release()
        self.screen.line(f"bye: the conversation is saved in {self.path} (run durable chat --session "
                         f"{self.path} to go on)")
        return 0

    def greet(self, existed: bool) -> None:
        entries = self.call(self.conv.entries)
        how = f"reopened, {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}" if existed else "new"
        self.screen.line(f"durable chat: session {self.path} ({how}); model {self.opts.model}; folder {self.cwd}")
        self.screen.line("Type /help for the commands; Ctrl-C stops an answer, twice at the prompt quits.", "2")

    def recover(self) -> None:
        """What the open found: tasks cut off by a kill (one line each when its report comes), a
        run in progress (followed to its end), a run that ended unanswered."""
        pending = self.call(_pending_cut_off, self.h)
        cut_off = set(pending)
        self.call(self.h.resume)
        while cut_off:
            try:
                kind, item = self.events.get(timeout=RECOVERY_WAIT)
            except queue.Empty:
                break
            if kind == "report":
                self.show_report(item)
                task = getattr(item, "task", None)
                cut_off.discard(getattr(task, "id", None))
        self.drain_reports()
        for c in self.call(conversations_of, self.h):
            if c.busy:
                self.conv_id = c.id
                break
        live = self.conv.live()
        if live.run is None:
            if live.run_failure is not None:
                f = live.run_failure
                self.screen.line(f"(last time, {f.first!r} was not answered: {f.reason}: {f.detail})", "33")
            return
        for sid in live.run.inputs:
            sub = self.call(self.conv.submission(sid).get)
            self.screen.line(f"(this input was still being answered when the chat stopped; going on) "
                             f"you> {sub.text}", "33")
        self.follow(live.run.inputs[-1])

    def loop(self) -> None:
        interrupted = False
        while True:
            self.drain_reports()
            label = "you" if self.conv_id == "root" else f"you@{self.conv_id}"
            try:
                text = self.reader.read(f"{label}> ").strip()
            except KeyboardInterrupt:
                if interrupted:
                    return
                interrupted = True
                self.screen.line("(Ctrl-C again to quit)", "2")
                continue
            except EOFError:
                return
            interrupted = False
            if not text:
                continue
            if text.startswith("/"):
                if run_command(self, text) == "quit":
                    return
                continue
            sub = self.call(self.conv.submit, text)  # committed: survives a kill from here on
            try:
                self.follow(sub.id)
            except EOFError:
                return

    # ------------------------------------------------------------------ a run

    async def _pump(self, conv_id: str, sub_id: str) -> None:
        try:
            async for event in self.h.conversation(conv_id).submission(sub_id).stream():
                self.events.put(("event", event))
        except Exception as exc:  # noqa: BLE001 - shown, the prompt comes back
            self.events.put(("error", exc))
        finally:
            self.events.put(("end", sub_id))

    def follow(self, sub_id: str) -> None:
        """Print the run of input `sub_id` until it settles; Ctrl-C aborts it."""
        assert self.portal is not None
        self.portal.start_task_soon(self._pump, self.conv_id, sub_id)
        while True:
            try:
                if self.ctrl_c.take():  # recorded before its ("ctrl-c", None) is put: taken now or next turn
                    raise KeyboardInterrupt
                kind, item = self.events.get()
                if kind == "end" and item == sub_id:
                    return
                if kind == "report":
                    self.show_report(item)
                elif kind == "error":
                    self.screen.line(f"[error: {item}]", "31")
                elif isinstance(item, ApprovalRequestedEvent):
                    self.ask(item)
                elif kind == "event":
                    self.view.show(item)
            except KeyboardInterrupt:  # taken above, or at an approval prompt (from the line reader)
                self.screen.line("^C: aborting the run...", "33")
                self.call(self.conv.abort)
            except EOFError:  # input ended at an approval prompt: leave it asked (the next open asks again)
                self.screen.line("(input ended: the call still waits for a decision)", "33")
                raise

    def ask(self, event: ApprovalRequestedEvent) -> None:
        """Ask for a decision on a call waiting for approval, until one is committed."""
        self.screen.line(f"?? {event.tool}({arguments_text(event.arguments)}) wants to run", "1;35")
        while True:
            answer = self.reader.read("approve? [y]es / [n]o / [e]dit the arguments: ").strip().lower()
            try:
                if answer in ("y", "yes"):
                    self.call(self.h.approve, event.call_id)
                    return
                if answer in ("n", "no"):
                    reason = self.reader.read("why not (optional, the model reads it): ").strip()
                    self.call(self.h.deny, event.call_id, reason or "the user said no")
                    return
                if answer in ("e", "edit"):
                    self.screen.line(f"arguments now: {event.arguments}")
                    typed = self.reader.read("new arguments (a JSON object; Enter keeps them): ").strip()
                    edited = json.loads(typed or event.arguments)
                    if not isinstance(edited, dict):
                        raise ValueError("the arguments must be a JSON object")
                    self.call(functools.partial(self.h.approve, event.call_id, arguments=edited))
                    return
            except (ApprovalRejected, ValueError) as exc:
                self.screen.line(f"not accepted: {exc}", "31")


async def _pending_cut_off(h: Any) -> list[int]:
    """Tasks the open found cut off by a kill (pending again, with a restart counted)."""
    return [t.id for t in await h.tasks(state="pending") if t.restarts]


def main(opts: ChatOptions) -> int:
    return ChatApp(opts).run()


__all__ = ["ChatApp", "ChatOptions", "default_session", "main"]
