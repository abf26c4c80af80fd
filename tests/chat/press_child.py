"""`durable chat` (the arguments after the first) in a process where Ctrl-C is pressed inside a
weakref callback run by the main thread, the first time the chat writes a text holding the first
argument to stdout (a prompt, a line of output).

The callback sends SIGINT to the process and runs on, so the signal's Python handler runs inside
it: as when the main thread, collecting garbage of the harness's thread with WeakSet members,
runs `WeakSet._remove` callbacks at the moment of a Ctrl-C. Python's own handler raises
`KeyboardInterrupt` there, which is only printed ("Exception ignored in ...") and so lost."""

from __future__ import annotations

import runpy
import signal
import sys
import weakref
from typing import Any, TextIO

# As a terminal's process has it, even where the tests run with SIGINT ignored (a background job).
signal.signal(signal.SIGINT, signal.default_int_handler)


class _Thing:
    pass


def press_in_a_weakref_callback() -> None:
    def callback(ref: Any) -> None:
        signal.raise_signal(signal.SIGINT)  # its C handler runs now; the Python one at the next check, here
        _on()

    thing = _Thing()
    ref = weakref.ref(thing, callback)
    del thing  # the callback runs now, in this thread
    assert ref() is None


def _on() -> None:
    pass


class PressingStdout:
    def __init__(self, out: TextIO, text: str) -> None:
        self._out = out
        self._text: str | None = text

    def write(self, data: str) -> int:
        written = self._out.write(data)
        if self._text is not None and self._text in data:
            self._text = None
            self._out.flush()
            press_in_a_weakref_callback()
        return written

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # prompt-toolkit writes to stdout's buffer when it has one: here it writes here
            raise AttributeError(name)
        return getattr(self._out, name)


if __name__ == "__main__":
    text, *args = sys.argv[1:]
    sys.stdout = PressingStdout(sys.stdout, text)  # type: ignore[assignment]
    sys.argv = ["durable", *args]
    runpy.run_module("durable", run_name="__main__")
