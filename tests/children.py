"""Child processes for the tests that kill one: run it, read the first line it prints (what it saw),
then SIGKILL it, a death and not an exit, whatever it was doing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def first_line_then_kill(code: str, *args: str) -> str:
    """Run `python -c code args...`, return the first line it prints, once it is dead by SIGKILL."""
    child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    try:
        line = child.stdout.readline()
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    return line
