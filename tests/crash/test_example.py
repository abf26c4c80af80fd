"""The example that shows users how to crash-test their own agent runs and finds nothing (how long
it takes is measured by benchmarks/crash_example.py, not asserted here)."""

from __future__ import annotations

import os
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "crash_test_your_agent.py")


def test_the_crash_testing_example_runs_clean():
    done = subprocess.run([sys.executable, EXAMPLE], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 with violations" in done.stdout
    assert done.stdout.count("every invariant holds") == 2
