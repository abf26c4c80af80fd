"""The `durable` command.

    durable demo [--db PATH] [--kill-after SECONDS] [--model faux|openai|anthropic] [--plain]
    durable inspect PATH [--json] [--last N]
    durable --debug ...     show the traceback of an error

`demo` runs (or, on an existing file, resumes) a scripted agent session that survives `kill -9`
(see `durable.demo`). `inspect` shows a session file without owning it: read-only, without the
lock, safe while its owner runs (see `durable._inspect`).

Errors a person can act on (a missing file, a file another process owns, a newer schema, a file
that is not a session, a missing API key) are one line on stderr and exit status 2; `--debug`
shows the traceback. Heavy imports (anyio and trio through the engine, rich, the provider SDKs)
happen inside the commands that need them, so `durable inspect` starts fast and never imports
the event-loop libraries.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

EXIT_USER_ERROR = 2


def _unwrap(exc: BaseException) -> BaseException:
    """The one error inside (nested) exception groups of one error each (task groups wrap)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _user_message(exc: BaseException) -> str | None:
    """The one line to show for an error a person can act on; None for anything else (a bug)."""
    from .errors import DurableError

    if isinstance(exc, DurableError):
        return str(exc)
    if type(exc).__name__ == "MissingCredentials":  # durable.models.errors, not imported here
        return str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return None


class _Group(click.Group):
    """Turns errors a person can act on into one line on stderr and exit status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as group:  # noqa: BLE001 - shown as one line unless --debug
            exc = _unwrap(group)
            if isinstance(exc, BrokenPipeError):  # `durable inspect x | head`: the reader left
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Python flushes stdout at exit
                ctx.exit(1)
            if (ctx.obj or {}).get("debug"):
                raise
            message = _user_message(exc)
            if message is not None:
                click.echo(f"durable: error: {message}", err=True)
                ctx.exit(EXIT_USER_ERROR)
            click.echo(f"durable: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
                       err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show the traceback of an error.")
@click.version_option(package_name="durable-harness", prog_name="durable")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """durable: an LLM agent harness that survives the death of its process."""
    ctx.obj = {"debug": debug}


# --------------------------------------------------------------------------- demo


@cli.command()
@click.option("--db", default="durable-demo.sqlite", show_default=True, metavar="PATH",
              help="The session file (created, or resumed when it exists).")
@click.option("--kill-after", type=click.FloatRange(min=0), metavar="SECONDS",
              help="SIGKILL this process after SECONDS (then run the same command again to resume).")
@click.option("--model", "model", type=click.Choice(["faux", "openai", "anthropic"]), default="faux",
              show_default=True,
              help="faux needs no key; openai/anthropic read OPENAI_API_KEY/ANTHROPIC_API_KEY "
                   "(and *_BASE_URL), the model name from DURABLE_DEMO_MODEL.")
@click.option("--plain", is_flag=True, help="One line per event, even on a terminal.")
@click.option("--speed", type=click.FloatRange(min=0, min_open=True), default=1.0, envvar="DURABLE_DEMO_SPEED",
              hidden=True, help="Scale every delay (tests run the demo fast).")
@click.option("--kill-at", envvar="DURABLE_DEMO_KILL_AT", hidden=True,
              help="SIGKILL when a point is committed: stream, tool, backoff or poll (optionally @<input>).")
@click.pass_context
def demo(ctx: click.Context, db: str, kill_after: float | None, model: str, plain: bool, speed: float,
         kill_at: str | None) -> None:
    """Run a scripted agent session on an SQLite file; kill it any time and run it again.

    Four inputs: a streamed answer, a tool round (a safe and an unsafe tool), a provider error
    retried after a backoff, and a deferred answer. Running the same command on the same file
    resumes: it shows what recovery did and gives only the inputs not yet given."""
    from . import demo as demo_module

    if kill_at is not None and kill_at.partition("@")[0] not in demo_module.KILL_POINTS:
        raise click.BadParameter(f"must be one of {', '.join(demo_module.KILL_POINTS)} (optionally @<input>)",
                                 param_hint="DURABLE_DEMO_KILL_AT / --kill-at")
    folder = os.path.dirname(os.path.abspath(db))
    if not os.path.isdir(folder):
        from .errors import StorageError

        raise StorageError(f"Cannot create the session file {db}: the folder {folder} does not exist", location=db)
    opts = demo_module.DemoOptions(db=db, kill_after=kill_after, model=model, speed=speed, kill_at=kill_at or None)
    try:
        status = demo_module.main(opts, plain=plain)
    except BaseException as exc:
        if not isinstance(_unwrap(exc), KeyboardInterrupt):
            raise
        click.echo(f"durable demo: stopped (a clean close); the session is saved in {db}: "
                   f"run the same command again to continue", err=True)
        ctx.exit(130)
    ctx.exit(status)


# --------------------------------------------------------------------------- inspect


@cli.command()
@click.argument("path", metavar="PATH")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (stable keys) for scripts.")
@click.option("--last", type=click.IntRange(min=1), default=10, show_default=True,
              help="Entries per conversation, and ended tasks and settled submissions, to show.")
def inspect(path: str, as_json: bool, last: int) -> None:
    """Show a session file: conversations, submissions, tasks, the live document and file facts.

    Read-only and without the lock: safe while the owner process runs."""
    from ._inspect import read_session

    data = read_session(path, last=last)
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print_session(data)


def _print_session(data: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Piped output has no terminal width to respect: use a wide one (COLUMNS still wins).
    wide = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 140
    console = Console(highlight=False, soft_wrap=False, width=wide)
    f = data["file"]
    owner = f["owner_pid"]
    owner_text = "none (not open)" if owner is None else ("another process" if owner < 0 else f"process {owner}")
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    facts.add_row("file", f["path"])
    facts.add_row("size", f"{f['size_bytes']:,} bytes (+ {f['wal_bytes']:,} in the WAL)")
    facts.add_row("schema", f"version {f['schema_version']} (this durable reads up to {f['supported_schema_version']})")
    facts.add_row("journal", f["journal_mode"])
    facts.add_row("synchronous", f"{f['synchronous']}: {f['synchronous_source']}")
    facts.add_row("owner", owner_text)
    c = f["counts"]
    facts.add_row("holds", f"{c['conversations']} conversation(s), {c['entries']} entries, "
                           f"{c['submissions']} submissions, {c['tasks']} tasks ({c['live_tasks']} not ended)")
    console.print(Text("Session file", style="bold underline"))
    console.print(facts)

    for conv in data["conversations"]:
        shown = len(conv["entries"])
        console.print()
        console.print(Text(f"Conversation {conv['id']!r}: {conv['entry_count']} entries"
                           + (f" (last {shown})" if shown < conv["entry_count"] else ""), style="bold underline"))
        table = Table(show_header=True, header_style="dim", box=None, pad_edge=False)
        for col in ("seq", "entry", "text"):
            table.add_column(col, overflow="fold")
        for e in conv["entries"]:
            table.add_row(str(e["seq"]), _entry_kind(e), _entry_text(e))
        console.print(table)
        live = data["live"].get(conv["id"])
        if live is not None:
            console.print(Text("live document: ", style="bold") + Text(_live_text(live)))

    console.print()
    console.print(Text(f"Submissions ({len(data['submissions'])} shown)", style="bold underline"))
    table = Table(show_header=True, header_style="dim", box=None, pad_edge=False)
    for col in ("id", "conv", "task", "status", "text"):
        table.add_column(col, no_wrap=col != "text", overflow="fold")
    for s in data["submissions"]:
        style = {"done": "green", "unanswered": "red", "queued": "yellow"}.get(s["status"] or "", "")
        status = Text(s["status"] or "?", style=style)
        if s["reason"]:
            status.append(f" ({s['reason']}): {s['detail']}")
        table.add_row(s["id"], s["conversation_id"], str(s["task_id"] or ""), status, _short(s["text"] or "", 60))
    console.print(table)

    console.print()
    console.print(Text(f"Tasks ({len(data['tasks'])} shown)", style="bold underline"))
    table = Table(show_header=True, header_style="dim", box=None, pad_edge=False)
    for col in ("id", "kind", "state", "phase", "attempt", "restarts", "about"):
        table.add_column(col, no_wrap=col != "about", overflow="fold")
    for t in data["tasks"]:
        state = t["state"] or "?"
        if t["outcome"]:
            state = t["outcome"] + (f" ({t['error']['reason']})" if t["error"] else "")
        elif t["until"] is not None:
            state += f" (+{t['until'] - _now():.1f} s)" if t["until"] > _now() else " (due)"
        elif t["waiting_on"]:
            state += f" (on {', '.join(map(str, t['waiting_on']))})"
        about = ""
        if t["tool"]:
            about = f"{t['tool']['name']} ({'client' if t['tool']['client'] else t['tool']['replay']})"
        elif t["inputs"] is not None:
            about = f"{len(t['inputs'])} input(s)"
        if t["stop"]:
            about += f", stopped: {t['stop']}"
        if t["error"]:
            about += f"; {t['error']['message']}"
        style = "red" if t["outcome"] in ("failed", "faulted") else ("green" if t["outcome"] == "done" else "yellow")
        table.add_row(str(t["id"]), t["kind"] or "", Text(state, style=style), t["phase"] or "",
                      str(t["attempt"] or ""), Text(str(t["restarts"]), style="yellow" if t["restarts"] else ""), about)
    console.print(table)


def _now() -> float:
    import time

    return time.time()


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _entry_kind(e: dict[str, Any]) -> str:
    kind = e.get("type", "?")
    if kind == "assistant":
        attempt = e.get("attempt", 1)
        return f"assistant:{e.get('stop_reason')}" + (f" (attempt {attempt})" if attempt > 1 else "")
    if kind == "tool_result":
        return f"tool_result:{e.get('tool_name')}" + (" (error)" if e.get("is_error") else "")
    return kind


def _entry_text(e: dict[str, Any]) -> str:
    kind = e.get("type")
    if kind == "assistant":
        text = _short(e.get("text") or "")
        calls = ", ".join(f"{c.get('name')}({_short(c.get('arguments') or '', 40)})" for c in e.get("tool_calls") or ())
        if calls:
            text = (text + " " if text else "") + f"→ {calls}"
        if e.get("error"):
            text += f" [{e['error']}]"
        return text
    if kind == "tool_result":
        return _short(e.get("content") or "")
    if kind == "compaction":
        return _short(e.get("summary") or "")
    return _short(e.get("text") or "")


def _live_text(live: dict[str, Any]) -> str:
    parts = []
    run = live.get("run")
    if run:
        parts.append(f"busy with task {run['task_id']} ({len(run.get('inputs') or ())} input(s))")
    gen = live.get("generation")
    if gen:
        g = f"generation attempt {gen.get('attempt')}"
        message = (gen.get("message") or {}).get("text") or ""
        if message:
            g += f", partial {_short(message, 60)!r}"
        retry = gen.get("retry")
        if retry:
            g += f", retry at +{retry['at'] - _now():.1f} s after {retry.get('kind')}: {retry.get('error')}"
        deferred = gen.get("deferred")
        if deferred:
            g += f", deferred: next poll at +{deferred['poll_at'] - _now():.1f} s"
        parts.append(g)
    for slot in live.get("tools") or ():
        out = (slot.get("output") or "").strip().splitlines()
        parts.append(f"tool {slot.get('name')} {slot.get('status')}" + (f" ({_short(out[-1], 40)})" if out else ""))
    failure = live.get("run_failure")
    if failure:
        parts.append(f"last run unanswered ({failure.get('reason')}): {failure.get('detail')}")
    cf = live.get("compaction_failure")
    if cf:
        parts.append(f"compaction failed: {cf.get('error')}")
    if live.get("compactions"):
        parts.append(f"{live['compactions']} compaction(s)")
    return "; ".join(parts) if parts else "idle"


def main(argv: list[str] | None = None) -> None:
    """The console script `durable`."""
    cli.main(args=argv, prog_name="durable")


if __name__ == "__main__":
    main()
