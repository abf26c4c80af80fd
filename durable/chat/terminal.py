"""How `durable chat` reads a line and takes Ctrl-C.

Lines come from prompt-toolkit (line editing, history kept in a file next to the session, Ctrl-R
search) when stdin and stdout are a terminal and the `chat` extra is installed, else from stdin
as they are. Ctrl-C raises `KeyboardInterrupt` and Ctrl-D `EOFError` from `LineReader.read`
either way.

Ctrl-C comes as the key to prompt-toolkit while it edits a line, else as SIGINT. While the chat
runs, SIGINT's handler is `CtrlC`'s, which only records the press and wakes whoever waits for
it: the code that waits takes the press where it is (`CtrlC.take`). Python's own handler raises
`KeyboardInterrupt` wherever the main thread is between two bytecodes, and there the press can
be lost: raised in a weakref callback or a `__del__` that the garbage collector runs (for
garbage the harness's thread made), it is only printed ("Exception ignored in ..."), the reader
goes on waiting and the user's Ctrl-C did nothing.
"""

from __future__ import annotations

import os
import queue
import select
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any


class CtrlC:
    """The Ctrl-C presses not yet taken, while `catch()` is in force (until `release()`).

    A press wakes the main thread twice: a byte in a pipe (`fileno()`, for a line reader's
    select) and `wake()` (for the run being followed, a queue). Each is done after the press is
    recorded, so a waiter that clears its wake-up (`clear()`, the queue item) and then `take()`s
    finds every press it was woken for, and is woken again for any later one."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._presses: queue.SimpleQueue[None] = queue.SimpleQueue()  # its put() may run inside its get()
        self._wake = wake
        self._pipe: tuple[int, int] | None = None
        self._previous: Any = None
        self._installed = False

    def catch(self) -> None:
        """Record SIGINT from now on. Python runs signal handlers in the main thread only: in
        another one (a test's), presses are never recorded, as none would have reached it."""
        if self._pipe is None:
            self._pipe = os.pipe()
            for fd in self._pipe:
                os.set_blocking(fd, False)
            if threading.current_thread() is threading.main_thread():
                self._previous = signal.signal(signal.SIGINT, self._on_sigint)
                self._installed = True

    def release(self) -> None:
        """Put back the SIGINT handler that `catch()` found."""
        if self._pipe is not None:
            if self._installed:  # None: one not set from Python, which cannot be put back
                signal.signal(signal.SIGINT, signal.default_int_handler if self._previous is None else self._previous)
                self._installed = False
            for fd in self._pipe:
                os.close(fd)
            self._pipe = None

    def _on_sigint(self, signum: int, frame: Any) -> None:
        # Runs in the main thread wherever it is (a weakref callback, a prompt-toolkit internal,
        # inside `take`): it raises nothing, and does only what is safe there.
        self._presses.put(None)
        if self._pipe is not None:
            try:
                os.write(self._pipe[1], b"\0")
            except OSError:  # full: a wake-up is there already
                pass
        self._wake()

    def take(self) -> bool:
        """Whether Ctrl-C was pressed and not yet taken; takes one press."""
        try:
            self._presses.get_nowait()
        except queue.Empty:
            return False
        return True

    def fileno(self) -> int:
        """A pipe readable after a press (while caught); `clear()` empties it."""
        assert self._pipe is not None
        return self._pipe[0]

    def clear(self) -> None:
        try:
            os.read(self.fileno(), 4096)  # a press after this writes again
        except BlockingIOError:
            pass


class LineReader:
    def __init__(self, history_path: str | None, ctrl_c: CtrlC) -> None:
        self._session: Any = None
        self._ctrl_c = ctrl_c
        self._pending = b""  # read from stdin, after the lines returned
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
        if self._ctrl_c.take():
            raise KeyboardInterrupt
        if self._session is not None:
            line = self._edit(prompt)
            if line is None:
                raise KeyboardInterrupt
            return line
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO): nothing to wait for
            return input(prompt)
        sys.stdout.write(prompt)
        sys.stdout.flush()
        line = self._line(fd)
        if not sys.stdin.isatty():  # piped: show what was read, as a terminal would have
            print(line)
        return line

    def _edit(self, prompt: str) -> str | None:
        """A line from prompt-toolkit, or None when Ctrl-C came as SIGINT (the terminal is in
        raw mode only while prompt-toolkit reads keys, not while it starts and ends)."""
        import asyncio  # prompt-toolkit's loop (imported here: the plain reader does without)

        async def edit() -> str | None:
            task = asyncio.current_task()
            assert task is not None

            def woken() -> None:
                self._ctrl_c.clear()
                if self._ctrl_c.take():
                    loop.remove_reader(self._ctrl_c.fileno())  # one press per prompt: a next one is the next read's
                    task.cancel()

            loop = asyncio.get_running_loop()
            loop.add_reader(self._ctrl_c.fileno(), woken)
            try:
                return str(await self._session.prompt_async(prompt, handle_sigint=False))
            except asyncio.CancelledError:
                return None
            finally:
                loop.remove_reader(self._ctrl_c.fileno())

        return asyncio.run(edit())

    def _line(self, fd: int) -> str:
        """The next line of stdin (`fd`), waiting for it or for Ctrl-C."""
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd, self._ctrl_c.fileno()], [], [])
            if self._ctrl_c.fileno() in ready:
                self._ctrl_c.clear()
                if self._ctrl_c.take():
                    raise KeyboardInterrupt
            if fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:  # end of input: the last line may lack its newline
                    if not self._pending:
                        raise EOFError
                    chunk = b"\n"
                self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.removesuffix(b"\r").decode(sys.stdin.encoding or "utf-8", sys.stdin.errors or "strict")


__all__ = ["CtrlC", "LineReader"]
