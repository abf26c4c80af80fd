"""Driving `durable chat` in a pseudo-terminal (pexpect): a real process, a real terminal, the
faux model scripted from a JSON file. Every step waits for the text it expects (never a sleep).

With DURABLE_CHAT_TRANSCRIPT=1, `test_session_transcript` writes what the terminal showed
(escape sequences removed) to docs/chat-session.txt, the recording in docs/chat.md."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

pexpect = pytest.importorskip("pexpect")

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]|\r")



def _interruptible() -> None:
    """Ctrl-C reaches the chat as a terminal's would, even when the tests run where SIGINT is
    ignored (a background job of a script): Python installs its KeyboardInterrupt handler only
    over the default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


PRESS_CHILD = str(Path(__file__).with_name("press_child.py"))


class Chat:
    """One `durable chat` process in a pty, with everything it printed so far in `seen`. With
    `press_on`, Ctrl-C is pressed inside a weakref callback when the chat first writes that text
    (`press_child.py`)."""

    def __init__(self, tmp: Path, script: dict[str, Any] | None, *args: str, press_on: str | None = None) -> None:
        self.tmp = tmp
        self.work = tmp / "work"
        self.work.mkdir(exist_ok=True)
        self.db = tmp / "chat.sqlite"
        model = "faux"
        if script is not None:
            path = tmp / "script.json"
            path.write_text(json.dumps(script))
            model = f"faux:{path}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "GEMINI"))}
        env.update(NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1", TERM="dumb", XDG_STATE_HOME=str(tmp / "state"))
        program = ["-m", "durable"] if press_on is None else [PRESS_CHILD, press_on]
        self.child = pexpect.spawn(sys.executable, [*program, "chat", "--session", str(self.db), "--cwd",
                                                    str(self.work), "--model", model, *args],
                                   env=env, encoding="utf-8", timeout=30, dimensions=(50, 250), cwd=str(tmp),
                                   preexec_fn=_interruptible)
        self.log: list[str] = []
        self.child.logfile_read = _Sink(self.log)

    def expect(self, *texts: str) -> None:
        """Wait for each of `texts`, in order."""
        for text in texts:
            try:
                self.child.expect_exact(text)
            except (pexpect.TIMEOUT, pexpect.EOF) as exc:  # what the terminal showed, to see why
                raise AssertionError(f"{text!r} did not come ({type(exc).__name__}); the terminal showed:\n"
                                     f"{self.transcript()[-3000:]}") from None

    def send(self, line: str) -> None:
        self.child.sendline(line)

    def prompt(self) -> None:
        self.expect("you> ")

    def ask(self, line: str, **files: str) -> None:
        """Write `files` (name: text) into the folder, then give `line` at the first prompt."""
        for name, text in files.items():
            (self.work / name).write_text(text)
        self.prompt()
        self.send(line)

    def quit(self) -> None:
        self.send("/quit")
        self.ended()

    def ended(self) -> None:
        """Wait for the chat's goodbye, then its exit (status 0)."""
        self.expect("bye: the conversation is saved in")
        self.child.expect(pexpect.EOF)
        self.child.close()
        assert self.child.exitstatus == 0

    def transcript(self) -> str:
        """What the terminal showed, as plain lines."""
        return ANSI.sub("", "".join(self.log))


class _Sink:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def write(self, data: str) -> None:
        self.log.append(data)

    def flush(self) -> None:
        pass


@pytest.fixture
def spawn(tmp_path):
    made: list[Chat] = []

    def make(script: dict[str, Any] | None, *args: str, press_on: str | None = None) -> Chat:
        chat = Chat(tmp_path, script, *args, press_on=press_on)
        made.append(chat)
        return chat

    yield make
    for chat in made:
        if chat.child.isalive():
            chat.child.terminate(force=True)
