"""The example that shows users how to crash-test their own agent runs, finds nothing, and is
quick (the README promises under 30 seconds)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "crash_test_your_agent.py")


def test_the_crash_testing_example_runs_clean_in_under_30_seconds():
    started = time.monotonic()
    done = subprocess.run([sys.executable, EXAMPLE], capture_output=True, text=True, timeout=60)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 with violations" in done.stdout
    assert done.stdout.count("every invariant holds") == 2
    assert took < 30, took
