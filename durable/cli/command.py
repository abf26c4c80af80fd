"""The `durable` command: the click group, its commands, and errors as one line.

    durable demo [--db PATH] [--kill-after SECONDS] [--model faux|openai|anthropic|google] [--plain]
    durable inspect PATH [--json] [--last N] [--kind KIND]... [--state STATE]... [--key-file KEY]
    durable export PATH [--conversation ID] [--format json|markdown] [--output FILE] [--key-file KEY]
    durable watch PATH [--interval SECONDS] [--timeout SECONDS] [--once] [--last N] [--key-file KEY]
    durable prune PATH --older-than AGE [--keep-last N] [--vacuum] [--key-file KEY]
    durable rekey PATH [--key-file OLD] --new-key-file NEW
    durable console [PATH...] [--key-file KEY] [--dsn DSN --space PATTERN] [--port N] [--host H]
    durable worker --dsn DSN --app MODULE:ATTR [--space-pattern P] [--lease S] [--poll S] [--max-spaces N]

`demo` runs (or, on an existing file, resumes) a scripted agent session that survives `kill -9`
(`durable.cli.demo`). `inspect` (a summary: the last entries, tasks by kind and state), `export`
(every entry of the conversations) and `watch` (the file live, as its owner commits) read a
session file without owning it (`durable.storage.sqlite.reader`), as does `console` (a web page),
but for the decisions it puts in a file's inbox. `worker` takes over PostgreSQL spaces whose owner
is gone. Errors a person can act on (a missing file, a file another process owns, a newer schema, a file
that is not a session, a missing API key) are one line on stderr and exit status 2; `--debug`
shows the traceback. Heavy imports (anyio and trio through the engine, rich, the provider SDKs)
happen inside the commands that need them: `durable inspect` never imports the event-loop libraries.
"""

from __future__ import annotations

import codecs
import json
import os
import re
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
    from ..errors import DurableError

    if isinstance(exc, DurableError):
        return str(exc)
    # A provider's `MissingCredentials` can only have been raised once its module was imported;
    # looked up there, so that this check imports no provider module (nor anyio) itself.
    models_errors = sys.modules.get("durable.models.errors")
    if models_errors is not None and isinstance(exc, models_errors.MissingCredentials):
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
        except Exception as group:  # shown as one line unless --debug
            exc = _unwrap(group)
            if isinstance(exc, BrokenPipeError):  # `durable inspect x | head`: the reader left
                sys.stdout = open(os.devnull, "w")
                ctx.exit(1)
            if (ctx.obj or {}).get("debug"):
                raise
            message = _user_message(exc)
            if message is not None:  # escaped: a file name may hold a lone surrogate
                click.echo(f"durable: error: {_escaped(message)}", err=True)
                ctx.exit(EXIT_USER_ERROR)
            click.echo(f"durable: internal error: {type(exc).__name__}: {_escaped(str(exc))} "
                       "(run with --debug for the traceback)", err=True)
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
@click.option("--model", "model", type=click.Choice(["faux", "openai", "anthropic", "google"]), default="faux",
              show_default=True,
              help="faux needs no key; openai/anthropic/google read OPENAI_API_KEY/ANTHROPIC_API_KEY/"
                   "GEMINI_API_KEY (and OPENAI_BASE_URL/ANTHROPIC_BASE_URL/GOOGLE_GEMINI_BASE_URL), "
                   "the model name from DURABLE_DEMO_MODEL.")
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
        from ..errors import StorageError

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


# --------------------------------------------------------------------------- chat


@cli.command()
@click.option("--session", metavar="PATH",
              help="The session file (default: one per folder under ~/.local/state/durable-chat).")
@click.option("--model", default="faux", show_default=True, envvar="DURABLE_CHAT_MODEL", metavar="SPEC",
              help="faux (no key), faux:SCRIPT.json, openai:NAME, anthropic:NAME, google:NAME, or URL/NAME "
                   "for an OpenAI-compatible server (keys from OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY).")
@click.option("--cwd", default=".", show_default=True, metavar="DIR",
              help="The folder the agent works in; its tools cannot reach outside it.")
@click.option("--yes", is_flag=True, help="Run write_file, edit_file and bash without asking for approval.")
@click.option("--bash-timeout", type=click.FloatRange(min=0, min_open=True), default=300.0, show_default=True,
              metavar="SECONDS", help="A bash command is killed (its whole process group) after SECONDS.")
@click.pass_context
def chat(ctx: click.Context, session: str | None, model: str, cwd: str, yes: bool, bash_timeout: float) -> None:
    """A coding agent in the terminal that survives kill -9: run it again on the same session to go on.

    Tools: read_file, list_files, grep, write_file, edit_file, bash (the last three ask for approval
    unless --yes). Ctrl-C stops an answer; twice at the prompt quits. /help lists the commands."""
    from ..chat import ChatOptions, main as chat_main

    ctx.exit(chat_main(ChatOptions(session=session, model=model, cwd=cwd, yes=yes, bash_timeout=bash_timeout)))


# --------------------------------------------------------------------------- inspect

# A lone surrogate (U+D800-U+DFFF) is a valid Python str but has no UTF-8 form: the harness stores
# such text (as a JSON escape), and a file name undecodable in the locale arrives as one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(text: str) -> str:
    """`text` with each lone surrogate written as its escape `\\udXXX`, so any output can encode it."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _printable(value: Any) -> Any:
    """`value` (plain data) with every string, keys included, `_escaped`: for the text view."""
    if isinstance(value, str):
        return _escaped(value)
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable(v) for v in value]
    return value


def _utf8(stream: Any) -> bool:
    try:
        return codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name == "utf-8"
    except LookupError:
        return False


def _json_text(data: Any) -> str:
    """`data` as indented JSON that any stdout can print. A lone surrogate only occurs inside a
    JSON string, where its escape `\\udXXX` is valid JSON that decodes to the very same str; when
    stdout cannot encode the rest either (an ASCII locale), every non-ASCII character is escaped."""
    if not _utf8(sys.stdout):
        return json.dumps(data, indent=2, ensure_ascii=True)
    return _escaped(json.dumps(data, indent=2, ensure_ascii=False))


_KEY_FILE = click.option("--key-file", type=click.Path(exists=True, dir_okay=False), metavar="PATH",
                         help="The key of an encrypted session file (its bytes; a trailing newline is ignored).")

# What `--state` accepts (durable.cli.inspect_data.TASK_STATES, written here so that the
# command line is built without importing the reader).
_TASK_STATES = ("pending", "running", "sleeping", "waiting", "terminal", "done", "failed", "faulted", "aborted")


@cli.command()
@click.argument("path", metavar="PATH")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (stable keys) for scripts.")
@click.option("--last", type=click.IntRange(min=1), default=10, show_default=True,
              help="Entries per conversation, and ended tasks and settled submissions, to show.")
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              help="Only tasks of this kind (generation, tool, compaction, cancel); repeat for several.")
@click.option("--state", "states", multiple=True, type=click.Choice(_TASK_STATES),
              help="Only tasks in this state, or ended with this outcome; repeat for several.")
@_KEY_FILE
def inspect(path: str, as_json: bool, last: int, kinds: tuple[str, ...], states: tuple[str, ...],
            key_file: str | None) -> None:
    """Show a session file: conversations, submissions, tasks, the live document and file facts.

    With --kind or --state, every matching task is listed (ended ones too, not bound by --last).
    Read-only and without the lock: safe while the owner process runs."""
    from .inspect_data import read_session
    from .keys import naming_key_file, read_key

    with naming_key_file(key_file):
        data = read_session(path, last=last, kinds=kinds, states=states, key=read_key(key_file))
    if as_json:
        click.echo(_json_text(data))
    else:
        from .inspect_view import print_session

        reconfigure = getattr(sys.stdout, "reconfigure", None)
        if reconfigure is not None and not _utf8(sys.stdout):  # an ASCII locale: é prints as \xe9
            reconfigure(errors="backslashreplace")
        print_session(_printable(data))


# --------------------------------------------------------------------------- export


@cli.command()
@click.argument("path", metavar="PATH")
@click.option("--older-than", "older_than", required=True, metavar="AGE",
              help="Delete conversations that ended longer ago than AGE (30d, 12h, 90m, 45s, 2w).")
@click.option("--keep-last", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="Keep the N conversations that ended last, however old.")
@click.option("--vacuum", is_flag=True, help="Then rewrite the file to give back every free page (slow).")
@click.option("--key-file", type=click.Path(exists=True, dir_okay=False), metavar="PATH",
              help="The key of an encrypted session file.")
def prune(path: str, older_than: str, keep_last: int, vacuum: bool, key_file: str | None) -> None:
    """Delete the ended conversations of a session file (never anything live).

    Owns the file while it runs: refused while its owner process runs. Crash-safe."""
    from .keys import naming_key_file, read_key
    from .prune import parse_age, prune_file

    with naming_key_file(key_file):
        lines = prune_file(path, older_than=parse_age(older_than), keep_last=keep_last, vacuum=vacuum,
                           key=read_key(key_file))
    for line in lines:
        click.echo(line)


@cli.command()
@click.argument("path", metavar="PATH")
@click.option("--conversation", metavar="ID", help="Only this conversation (default: every one).")
@click.option("--format", "fmt", type=click.Choice(["json", "markdown"]), default="json", show_default=True,
              help="JSON (the stored records, for scripts) or a Markdown transcript (for people).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="Write to FILE instead of standard output.")
@_KEY_FILE
def export(path: str, conversation: str | None, fmt: str, output: str | None, key_file: str | None) -> None:
    """Write whole conversations of a session file: every entry, its submissions, its live document.

    Read-only and without the lock: safe while the owner process runs."""
    from .export_data import export_session, to_json, to_markdown
    from .keys import naming_key_file, read_key

    with naming_key_file(key_file):
        data = export_session(path, conversation=conversation, key=read_key(key_file))
    text = to_json(data) + "\n" if fmt == "json" else to_markdown(data)
    if output is None:
        click.echo(text, nl=False)
    else:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)


# --------------------------------------------------------------------------- watch


@cli.command()
@click.argument("path", metavar="PATH")
@click.option("--interval", type=click.FloatRange(min=0.01), default=0.2, show_default=True, metavar="SECONDS",
              help="How often to read the file.")
@click.option("--timeout", type=click.FloatRange(min=0), metavar="SECONDS", help="Stop after SECONDS.")
@click.option("--once", is_flag=True, help="Print what the file holds now, then stop.")
@click.option("--last", type=click.IntRange(min=0), default=10, show_default=True,
              help="Entries per conversation to show at the start.")
@_KEY_FILE
@click.pass_context
def watch(ctx: click.Context, path: str, interval: float, timeout: float | None, once: bool, last: int,
          key_file: str | None) -> None:
    """Follow a session file live while another process owns it: new entries, live documents, tasks.

    One line per event. Read-only and without the lock; stops on Ctrl-C."""
    from .follow import follow
    from .keys import naming_key_file, read_key

    def echo(line: str) -> None:
        click.echo(line)
        sys.stdout.flush()

    try:
        with naming_key_file(key_file):
            follow(path, interval=interval, timeout=timeout, once=once, last=last, echo=echo, key=read_key(key_file))
    except KeyboardInterrupt:
        click.echo("durable watch: stopped", err=True)
        ctx.exit(130)


@cli.command()
@click.argument("path", metavar="PATH")
@click.option("--key-file", type=click.Path(exists=True, dir_okay=False), metavar="OLD",
              help="The file's key now (omit for a file not yet encrypted).")
@click.option("--new-key-file", required=True, type=click.Path(exists=True, dir_okay=False), metavar="NEW",
              help="The key to encrypt it with from now on.")
def rekey(path: str, key_file: str | None, new_key_file: str) -> None:
    """Encrypt a session file with a new key, a few hundred rows a commit.

    Owns the file while it runs (refused while its owner runs). Crash-safe: run it again after a
    kill to finish; meanwhile either key opens the file."""
    from .keys import read_key, rekey_file

    click.echo(rekey_file(path, read_key(key_file), read_key(new_key_file)))


@cli.command()
@click.argument("paths", metavar="[PATH]...", nargs=-1)
@click.option("--dsn", envvar="DURABLE_DSN", metavar="DSN",
              help="A PostgreSQL server whose session spaces to show too (env DURABLE_DSN).")
@click.option("--space", "space_pattern", default="%", show_default=True, metavar="PATTERN",
              help="With --dsn: only spaces whose name matches this SQL LIKE pattern.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True,
              help="The port to listen on (0: any free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on; another than 127.0.0.1 lets other machines in (with the token).")
@click.option("--token", envvar="DURABLE_CONSOLE_TOKEN", hidden=True, help="The token (default: a random one).")
@_KEY_FILE
@click.pass_context
def console(ctx: click.Context, paths: tuple[str, ...], dsn: str | None, space_pattern: str, port: int, host: str,
            token: str | None, key_file: str | None) -> None:
    """Serve a web page that follows session files (or PostgreSQL spaces, --dsn) live and decides
    tool calls waiting for approval.

    Read-only on the files and spaces (their owners write them), but for their inboxes: a decision
    from the page is committed there and applied by the owner. The URL printed holds a random token."""
    from .console import run_console
    from .keys import naming_key_file, read_key

    if not paths and dsn is None:
        raise click.UsageError("give session files (PATH...) or a PostgreSQL server (--dsn DSN)")
    try:
        with naming_key_file(key_file):
            run_console(list(paths), host=host, port=port, token=token, dsn=dsn, space_pattern=space_pattern,
                        key=read_key(key_file))
    except KeyboardInterrupt:
        click.echo("durable console: stopped", err=True)
        ctx.exit(130)


@cli.command()
@click.option("--dsn", required=True, envvar="DURABLE_DSN", metavar="DSN",
              help="The PostgreSQL server (libpq connection string or URL; env DURABLE_DSN).")
@click.option("--app", "app_spec", required=True, envvar="DURABLE_WORKER_APP", metavar="MODULE:ATTR",
              help="A durable.worker.WorkerApp (or a callable returning one): the model and tools.")
@click.option("--space-pattern", default="%", show_default=True, metavar="PATTERN",
              help="Only spaces whose name matches this SQL LIKE pattern.")
@click.option("--lease", "lease", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
              metavar="SECONDS", help="The lease this worker takes on each space.")
@click.option("--poll", type=click.FloatRange(min=0.01), default=1.0, show_default=True, metavar="SECONDS",
              help="How often to look for spaces to take over.")
@click.option("--max-spaces", type=click.IntRange(min=1), default=8, show_default=True,
              help="Spaces run at once.")
@click.pass_context
def worker(ctx: click.Context, dsn: str, app_spec: str, space_pattern: str, lease: float, poll: float,
           max_spaces: int) -> None:
    """Take over PostgreSQL session spaces whose owner is gone, run them until idle, let them go.

    One line per space taken, released or found locked; stops on Ctrl-C (a clean close)."""
    import anyio

    from ..worker import load_app, run_worker

    app = load_app(app_spec)

    def said(space: str, what: str) -> None:
        click.echo(f"{what} {space}")
        sys.stdout.flush()

    try:
        anyio.run(lambda: run_worker(dsn, app, space_pattern=space_pattern, lease_seconds=lease,
                                     poll_seconds=poll, max_spaces=max_spaces, on_space=said), backend="trio")
    except KeyboardInterrupt:
        click.echo("durable worker: stopped", err=True)
        ctx.exit(130)


def main(argv: list[str] | None = None) -> None:
    """The console script `durable`."""
    cli.main(args=argv, prog_name="durable")

