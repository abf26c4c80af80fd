"""No Ctrl-C is lost: each one is pressed while the chat's main thread runs a weakref callback
(`press_child.py`), as when the garbage collector collects another thread's garbage there at the
moment of the press. With Python's own SIGINT handler the `KeyboardInterrupt` was raised in the
callback, printed as "Exception ignored in ..." and lost: the prompt went on waiting, the run
went on. At the prompt, during a run, at an approval prompt, and with stdin a pipe."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from durable.chat import ChatApp, ChatOptions

from .conftest import PRESS_CHILD
from .test_chat_terminal import EDIT_AND_BASH, FAST, HANGS, LONG_BASH, entries


def test_at_the_prompt_a_first_then_a_second_ctrl_c_quits(spawn):
    chat = spawn(HANGS, press_on="you> ")
    chat.expect("you> ", "(Ctrl-C again to quit)")
    chat.prompt()
    chat.child.sendintr()
    chat.ended()
    assert "Exception ignored" not in chat.transcript()
    assert entries(chat.db) == []


def test_during_a_run_it_aborts_the_run(spawn):
    chat = spawn(LONG_BASH, "--yes", press_on="  | started")
    chat.ask("watch the logs")
    chat.expect("  | started", "^C: aborting the run...", "[aborted: the partial answer is kept in the conversation]")
    chat.prompt()
    chat.quit()
    assert "Exception ignored" not in chat.transcript()
    assert entries(chat.db) == [
        ("user", "watch the logs"),
        ("assistant", "Watching.", "tool_use", ("bash",)),
        ("result", "bash", "The tool call was aborted\nPartial output:\nstarted\n", True),
    ]


def test_at_an_approval_prompt_it_aborts_the_run(spawn):
    chat = spawn(EDIT_AND_BASH, press_on="approve? [y]es")
    chat.ask("fix the greeting", **{"hello.txt": "helo world\n"})
    chat.expect('?? edit_file(path="hello.txt", old="helo", new="hello") wants to run',
                "approve? [y]es / [n]o / [e]dit the arguments: ", "^C: aborting the run...",
                "[aborted: the partial answer is kept in the conversation]")
    chat.prompt()
    chat.quit()
    assert "Exception ignored" not in chat.transcript()
    assert (chat.work / "hello.txt").read_text() == "helo world\n"
    assert entries(chat.db) == [
        ("user", "fix the greeting"),
        ("assistant", "Let me fix it.", "tool_use", ("edit_file",)),
        ("result", "edit_file", "The tool call was aborted", True),
    ]


def test_with_stdin_a_pipe_it_is_a_ctrl_c_at_the_prompt(tmp_path):
    db, out = piped(tmp_path, "you> ", "hi\n/quit\n")
    assert out == [
        "you> (Ctrl-C again to quit)",
        "you> hi",
        "agent: Hello.",
        "you> /quit",
        f"bye: the conversation is saved in {db} (run durable chat --session {db} to go on)",
    ]


def test_pressed_while_a_command_works_it_counts_at_the_next_prompt(tmp_path):
    db, out = piped(tmp_path, "compacting (task", "/compact\n/quit\n")
    assert out == [
        "you> /compact",
        "compacting (task 1)...",
        "nothing to compact yet (the last 4 entries are always kept as they are)",
        "(Ctrl-C again to quit)",
        "you> /quit",
        f"bye: the conversation is saved in {db} (run durable chat --session {db} to go on)",
    ]


def piped(tmp_path, press_on: str, lines: str) -> tuple[Path, list[str]]:
    """The session file, and what the chat printed after its greeting, with `lines` as stdin (a
    pipe: the plain reader) and Ctrl-C pressed inside a weakref callback on `press_on`."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"tokens_per_second": FAST, "turns": [{"user": "hi", "steps": [{"text": "Hello."}]}]}))
    db = tmp_path / "chat.sqlite"
    done = subprocess.run([sys.executable, PRESS_CHILD, press_on, "chat", "--session", str(db), "--cwd", str(tmp_path),
                           "--model", f"faux:{script}"], input=lines, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return db, done.stdout.splitlines()[2:]


def test_in_process_the_chat_puts_back_the_sigint_handler_it_found(tmp_path, monkeypatch, capsys):
    def before(signum, frame):  # a handler of the program that runs the chat
        raise AssertionError("not pressed in this test")

    r, w = os.pipe()
    os.write(w, b"/quit\n")
    os.close(w)
    monkeypatch.setattr(sys, "stdin", open(r, encoding="utf-8"))
    previous = signal.signal(signal.SIGINT, before)
    try:
        app = ChatApp(ChatOptions(session=str(tmp_path / "chat.sqlite"), cwd=str(tmp_path)))
        assert app.run() == 0
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.stdin.close()
    assert capsys.readouterr().out.splitlines()[2:] == [
        "you> /quit", f"bye: the conversation is saved in {tmp_path / 'chat.sqlite'} (run durable chat --session "
                      f"{tmp_path / 'chat.sqlite'} to go on)"]
