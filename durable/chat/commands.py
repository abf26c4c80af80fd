"""The slash commands of `durable chat`: /usage, /fork, /compact, /history, /sessions, /help,
/quit. Each gets the app (`durable.chat.app.ChatApp`) and the line; `run_command` returns "quit"
for /quit."""

from __future__ import annotations

from typing import Any

from .. import records as r
from ..errors import DurableError
from .render import history_line, usage_lines

HELP = """\
/usage            tokens, cost and tool runtime of this conversation
/history [N]      the last N entries (default 20)
/fork [ID]        copy this conversation into a new one (ID, default fork-N) and go on there
/sessions [ID]    the conversations of this session file; with ID, switch to it
/compact          summarize the older part of the conversation (a compaction)
/help             this help
/quit             leave (Ctrl-D, or Ctrl-C twice, does too)"""


def run_command(app: Any, line: str) -> str | None:
    name, _, rest = line.partition(" ")
    rest = rest.strip()
    command = COMMANDS.get(name)
    if command is None:
        app.screen.line(f"unknown command {name}; /help lists them", "31")
        return None
    try:
        return command(app, rest)
    except DurableError as exc:
        app.screen.line(f"{name}: {exc}", "31")
        return None


async def _usage_of(conv: Any) -> r.UsageTotals:
    return conv.usage()  # type: ignore[no-any-return]  # the harness runs on another thread, typed Any here


def usage(app: Any, rest: str) -> None:
    for line in usage_lines(app.call(_usage_of, app.conv)):
        app.screen.line(line)


def history(app: Any, rest: str) -> None:
    count = int(rest) if rest.isdigit() else 20
    entries = app.call(app.conv.entries)
    if not entries:
        app.screen.line("(no entries yet)")
    for stored in entries[-count:]:
        app.screen.line(history_line(stored))


async def conversations_of(h: Any) -> list[r.ConversationInfo]:
    return h.conversations()  # type: ignore[no-any-return]  # on the harness's thread; typed Any here


def fork(app: Any, rest: str) -> None:
    names = {c.id for c in app.call(conversations_of, app.h)}
    new_id = rest or next(f"fork-{n}" for n in range(1, len(names) + 2) if f"fork-{n}" not in names)
    source = app.conv_id
    app.call(app.conv.fork, new_id)
    app.conv_id = new_id
    app.screen.line(f"forked {source} into {new_id}; now in {new_id} (/sessions {source} goes back)")


def sessions(app: Any, rest: str) -> None:
    convs = app.call(conversations_of, app.h)
    if rest:
        if rest not in {c.id for c in convs}:
            app.screen.line(f"no conversation {rest} in {app.path}", "31")
            return
        app.conv_id = rest
        app.screen.line(f"now in {rest}")
        return
    app.screen.line(f"conversations in {app.path}:")
    for c in convs:
        if c.parent is not None:
            continue  # a sub-agent's
        mark = "*" if c.id == app.conv_id else " "
        forked = f", forked from {c.forked_from} at entry {c.forked_at}" if c.forked_from else ""
        busy = ", answering" if c.busy else ""
        app.screen.line(f"{mark} {c.id}: {c.usage.requests} requests{forked}{busy}")


async def _live_of(conv: Any) -> r.Live:
    return conv.live()  # type: ignore[no-any-return]  # the harness runs on another thread, typed Any here


def compact(app: Any, rest: str) -> None:
    task_id = app.call(app.conv.compact)
    app.screen.line(f"compacting (task {task_id})...", "2")
    task = app.call(app.h.wait_for_task, task_id)
    outcome = task.state.outcome if isinstance(task.state, r.Terminal) else None
    result = outcome.result if isinstance(outcome, r.Done) else None
    if isinstance(result, dict) and "first_kept_seq" in result:
        app.screen.line(f"compacted: the entries before {result['first_kept_seq']} are now one summary "
                        "(/history shows it)")
    elif isinstance(outcome, r.Done):
        keep = app.h.settings.compaction.keep_last
        app.screen.line(f"nothing to compact yet (the last {keep} entries are always kept as they are)")
    else:
        failure = app.call(_live_of, app.conv).compaction_failure
        app.screen.line(f"the compaction failed: {failure.error if failure else outcome}", "31")


def help_(app: Any, rest: str) -> None:
    for line in HELP.splitlines():
        app.screen.line(line)


def quit_(app: Any, rest: str) -> str:
    return "quit"


COMMANDS = {"/usage": usage, "/history": history, "/fork": fork, "/sessions": sessions, "/compact": compact,
            "/help": help_, "/quit": quit_, "/exit": quit_}

__all__ = ["COMMANDS", "HELP", "run_command"]
