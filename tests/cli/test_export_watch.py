"""`durable export` (whole conversations, JSON or Markdown), `durable inspect --kind/--state`, and
`durable watch` following a session file that another process owns."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading

import anyio
import pytest

import durable
from durable.cli.command import _TASK_STATES
from durable.cli.inspect_data import TASK_STATES
from durable.models import FauxModel, faux

from .conftest import durable_command, one_line_error, run_durable, run_light

T0 = 1_000_000.0  # FakeClock's start: every timestamp of the small session


async def _lookup(args, api, ctx):
    return f"found {args['q']}"


LOOKUP = durable.define_tool("lookup", "Looks a word up", {"type": "object", "properties": {"q": {"type": "string"}}},
                             execute=_lookup)


@pytest.fixture(scope="module")
def small_session(tmp_path_factory):
    """A closed session: "hi" answered after one tool round, on a fake clock. Returns (path, sub id)."""
    path = tmp_path_factory.mktemp("small") / "small.sqlite"
    model = FauxModel([faux.reply("Let me look.", tool_calls=[faux.call("lookup", {"q": "caf\u00e9"}, id="c1")]),
                       faux.reply("It means `coffee`.")])

    async def build():
        async with durable.open_harness(str(path), model=model, tools=[LOOKUP], clock=durable.FakeClock()) as h:
            sub = await h.root.submit("What is café?")
            await sub.wait()
            return sub.id

    return path, anyio.run(build, backend="trio")


def test_export_json_is_every_entry_submission_and_the_live_document(small_session):
    path, sid = small_session
    done = run_durable("export", str(path))
    assert done.returncode == 0, done.stderr
    usage = {"input_tokens": 0, "output_tokens": 0}
    got = json.loads(done.stdout)
    # The faux model counts tokens from the texts; they are read back, not guessed.
    u2, u4 = got["conversations"][0]["entries"][1]["usage"], got["conversations"][0]["entries"][3]["usage"]
    assert set(u2) == set(usage) and set(u4) == set(usage)
    assert got == {
        "file": str(path),
        "conversations": [{
            "id": "root",
            "entries": [
                {"seq": 1, "type": "user", "text": "What is café?", "submission_id": sid},
                {"seq": 2, "type": "assistant", "text": "Let me look.", "stop_reason": "tool_use",
                 "tool_calls": [{"id": "c1", "name": "lookup", "arguments": '{"q": "caf\\u00e9"}'}],
                 "usage": u2, "error": None, "attempt": 1, "interrupted": False, "model": "faux"},
                {"seq": 3, "type": "tool_result", "call_id": "c1", "tool_name": "lookup", "content": "found café",
                 "is_error": False, "diagnostics": []},
                {"seq": 4, "type": "assistant", "text": "It means `coffee`.", "stop_reason": "stop", "tool_calls": [],
                 "usage": u4, "error": None, "attempt": 1, "interrupted": False, "model": "faux"},
            ],
            "submissions": [{"id": sid, "conversation_id": "root", "text": "What is café?", "status": "done",
                             "reason": None, "detail": None, "task_id": 1, "seq": 1, "created_at": T0}],
            "live": {"run": None, "generation": None, "tools": [], "approvals": [], "run_failure": None, "compaction_failure": None,
                     "compactions": 0,
                     # The tool ran in no time on the fake clock: no tool_seconds.
                     "usage": {"models": [{"model": "faux", "requests": 2, "input_tokens": 20,
                                           "output_tokens": u2["output_tokens"] + u4["output_tokens"]}],
                               "tool_calls": 1}},
        }],
    }


def test_export_markdown_is_a_transcript(small_session, tmp_path):
    path, _ = small_session
    out = tmp_path / "t.md"
    done = run_durable("export", str(path), "--format", "markdown", "--conversation", "root", "-o", str(out))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert out.read_text(encoding="utf-8") == textwrap.dedent(f"""\
        # Conversation `root`

        _4 entries, from {path}_

        ### 1 · user

        What is café?

        ### 2 · assistant (tool_use, by faux)

        Let me look.

        Tool call `lookup` (call c1):

        ```text
        {{
          "q": "café"
        }}
        ```

        ### 3 · tool result `lookup` (call c1)

        ```text
        found café
        ```

        ### 4 · assistant (stop, by faux)

        It means `coffee`.
        """)


def test_export_of_a_conversation_the_file_does_not_hold_is_one_line_naming_both(small_session):
    path, _ = small_session
    done = run_durable("export", str(path), "--conversation", "nope")
    assert one_line_error(done) == f"durable: error: Session file {path} has no conversation 'nope' (it has: 'root')"


def test_export_has_no_cap(tmp_path):
    path = tmp_path / "long.sqlite"
    n = 30

    async def build():
        model = FauxModel([faux.reply(f"answer {i}") for i in range(n)])
        async with durable.open_harness(str(path), model=model, clock=durable.FakeClock()) as h:
            for i in range(n):
                await (await h.root.submit(f"question {i}")).wait()

    anyio.run(build, backend="trio")
    data = json.loads(run_durable("export", str(path)).stdout)
    assert [e["seq"] for e in data["conversations"][0]["entries"]] == list(range(1, 2 * n + 1))
    assert len(data["conversations"][0]["submissions"]) == n


def inspect_tasks(path, *args):
    done = run_durable("inspect", str(path), "--json", *args)
    assert done.returncode == 0, done.stderr
    return [(t["id"], t["kind"], t["outcome"] or t["state"]) for t in json.loads(done.stdout)["tasks"]]


def test_inspect_filters_tasks_by_kind_and_state(small_session):
    path, _ = small_session
    assert inspect_tasks(path) == [(1, "generation", "done"), (2, "tool", "done")]
    assert inspect_tasks(path, "--kind", "tool") == [(2, "tool", "done")]
    assert inspect_tasks(path, "--kind", "tool", "--kind", "generation") == [(1, "generation", "done"),
                                                                           (2, "tool", "done")]
    assert inspect_tasks(path, "--state", "done", "--kind", "generation") == [(1, "generation", "done")]
    assert inspect_tasks(path, "--state", "terminal", "--kind", "tool") == [(2, "tool", "done")]
    assert inspect_tasks(path, "--state", "running") == []
    assert inspect_tasks(path, "--kind", "compaction") == []
    text = run_durable("inspect", str(path), "--kind", "tool")
    assert "Tasks (1 shown)" in text.stdout and "lookup (unsafe)" in text.stdout


def test_inspect_refuses_an_unknown_state_and_lists_the_known_ones(small_session):
    path, _ = small_session
    done = run_durable("inspect", str(path), "--state", "sleepy")
    assert done.returncode == 2 and "'sleepy' is not one of 'pending', 'running'" in done.stderr
    assert _TASK_STATES == TASK_STATES


@pytest.mark.parametrize("args", [["export"], ["export", "--format", "markdown"], ["watch", "--once"],
                                  ["inspect", "--state", "done", "--kind", "tool"]])
def test_the_reading_commands_import_no_event_loop_or_provider_library(small_session, args):
    path, _ = small_session
    assert run_light(args[0], str(path), *args[1:])[0] == {"status": 0, "heavy": []}


def test_watch_once_prints_the_last_entries_and_stops(small_session):
    path, _ = small_session
    done = run_durable("watch", str(path), "--once", "--last", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"watching {path} (not open); Ctrl-C to stop",
        "root #3 tool_result:lookup: found café",
        "root #4 assistant:stop (by faux): It means `coffee`.",
    ]


WRITER = textwrap.dedent("""
    # The owner: a harness on the file, one submission per line of stdin, "answered" after each.
    import sys
    import anyio
    import durable
    from durable.models import FauxModel, faux

    async def lookup(args, api, ctx):
        await api.output("looking")
        return "found " + args["q"]

    async def main():
        model = FauxModel([faux.reply("Hello back"),
                           faux.reply("", tool_calls=[faux.call("lookup", {"q": "x"}, id="c1")]),
                           faux.reply("Found it")])
        tool = durable.define_tool("lookup", "Looks up", execute=lookup)
        async with durable.open_harness(sys.argv[1], model=model, tools=[tool]) as h:
            print("ready", flush=True)
            while (line := (await anyio.to_thread.run_sync(sys.stdin.readline)).strip()) != "quit":
                await (await h.root.submit(line)).wait()
                print("answered", flush=True)

    anyio.run(main, backend="trio")
""")


class Lines:
    """A process's stdout, line by line, read on a thread: `until(text)` returns the lines read up
    to the first one that starts with `text`."""

    def __init__(self, proc, stream=None):
        self.proc = proc
        self.stream = stream if stream is not None else proc.stdout
        self.q: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.stream:
            self.q.put(line.rstrip("\n"))
        self.q.put(None)

    def rest(self, timeout=60):
        """Every line left, once the stream ends."""
        seen = []
        while (line := self.q.get(timeout=timeout)) is not None:
            seen.append(line)
        return seen

    def until(self, text, timeout=60):
        seen = []
        while True:
            line = self.q.get(timeout=timeout)
            if line is None:
                raise AssertionError(f"the output ended before {text!r}: {seen}")
            seen.append(line)
            if line.startswith(text):
                return seen


def test_watch_follows_a_file_another_process_owns_live_and_read_only(tmp_path):
    path = tmp_path / "owned.sqlite"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    watcher = None
    try:
        owner = Lines(writer)
        owner.until("ready")
        # Ctrl-C as a terminal delivers it: a test run started in the background of a
        # non-interactive shell ignores SIGINT, and a child would inherit that.
        watcher = subprocess.Popen([*durable_command(), "watch", str(path), "--interval", "0.02", "--timeout", "120"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        watch = Lines(watcher)
        watch_errors = Lines(watcher, watcher.stderr)  # drained as it comes: a full pipe would block the watcher
        assert watch.until("watching") == [f"watching {path} (owned by process {writer.pid}); Ctrl-C to stop"]

        writer.stdin.write("hi\n")
        writer.stdin.flush()
        owner.until("answered")
        first = watch.until("root #2 ")
        writer.stdin.write("look it up\n")
        writer.stdin.flush()
        owner.until("answered")
        second = watch.until("root #6 ")
        # A poll prints its entries, then its tasks by id: wait for both endings, in either order.
        for ending in ("task 2 generation: done", "task 3 tool lookup: done"):
            if not any(line.startswith(ending) for line in second):
                second += watch.until(ending)
        lines = first + second
        assert [line for line in lines if line.startswith("root #")] == [
            "root #1 user: hi",
            "root #2 assistant:stop (by faux): Hello back",
            "root #3 user: look it up",
            'root #4 assistant:tool_use (by faux): → lookup({"q": "x"})',
            "root #5 tool_result:lookup: found x",
            "root #6 assistant:stop (by faux): Found it",
        ]
        # Each task is seen at least when it ends (a poll may miss its shorter-lived states);
        # its first line comes after the entry that started it.
        tasks = [line for line in lines if line.startswith("task ")]
        assert sorted(t for t in tasks if ": done" in t) == [
            "task 1 generation: done (phase request, attempt 1)",
            "task 2 generation: done (phase request, attempt 1)",
            "task 3 tool lookup: done (phase tool_progress)",
        ]
        assert lines.index("root #1 user: hi") < lines.index(tasks[0])
        assert all(line.startswith(("root #", "root live: ", "task ")) for line in lines)
        assert "root live: idle" in lines

        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(timeout=30) == 130
        assert watch_errors.rest()[-1:] == ["durable watch: stopped"]
        writer.stdin.write("quit\n")
        writer.stdin.flush()
        assert writer.wait(timeout=60) == 0, writer.stderr.read()

    finally:
        for proc in (writer, watcher):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    # The watcher wrote nothing and holds nothing: the owner's clean close left no WAL behind.
    assert not [name for name in os.listdir(tmp_path) if name.endswith(("-wal", "-shm", "-journal"))]
