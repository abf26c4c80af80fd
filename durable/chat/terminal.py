"""How `durable chat` reads a line: prompt-toolkit (line editing, history kept in a file next to
the session, Ctrl-R search) when stdin and stdout are a terminal and the `chat` extra is
installed, else plain `input()`. Ctrl-C raises `KeyboardInterrupt` and Ctrl-D `EOFError` either way."""

from __future__ import annotations

import sys
from typing import Any


class LineReader:
    def __init__(self, history_path: str | None) -> None:
        self._session: Any = None
        if sys.stdin.isatty() and sys.stdout.isatty():
            try:
                from prompt_toolkit import PromptSession
                from prompt_toolkit.history import FileHistory, InMemoryHistory
            except ImportError:
                return
            history = FileHistory(history_path) if history_path else InMemoryHistory()
            self._session = PromptSession(history=history)

    @property
    def editing(self) -> bool:
        """Whether lines are read with prompt-toolkit."""
        return self._session is not None

    def read(self, prompt: str) -> str:
        if self._session is not None:
            return str(self._session.prompt(prompt))
        line = input(prompt)
        if not sys.stdin.isatty():  # piped: show what was read, as a terminal would have
            print(line)
        return line


__all__ = ["LineReader"]
