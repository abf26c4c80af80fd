"""The kill loop, short (issue 13, "must show"): `benchmarks/kill_loop.py --kills 20` SIGKILLs a real
agent process (a fresh interpreter running `durable.open_harness` with an unsafe tool that appends
a line per execution to a side file) 20 times at random on one session file; after each kill the
file passes `integrity_check` and every invariant, every acknowledged input is in it, no unsafe
call ran twice and no submission settled twice; then a last process runs every input to the end.
The full loop (150 kills) is `python benchmarks/kill_loop.py`. `pytest -s` prints the figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "kill_loop.py"
SEED = os.environ.get("DURABLE_KILL_SEED", "1")


def test_twenty_random_sigkills_on_one_session_file_keep_every_invariant_and_it_runs_to_the_end():
    done = subprocess.run([sys.executable, str(SCRIPT), "--kills", "20", "--inputs", "80", "--seed", SEED, "--json"],
                          capture_output=True, text=True, timeout=240)
    print("\n" + "\n".join(line for line in done.stdout.splitlines() if not line.startswith("{")))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["violation"] is None
    assert result["kills"] >= 20
    assert result["submissions"] == result["settled"] == 80  # every input given once, and settled
    assert result["acknowledged"] >= 1 and result["unsafe executions"] >= 40


def test_random_sigkills_with_two_sub_agents_per_input_keep_every_invariant_and_roll_usage_up_exactly():
    done = subprocess.run([sys.executable, str(SCRIPT), "--subagents", "--kills", "8", "--inputs", "12", "--seed", SEED,
                           "--json"], capture_output=True, text=True, timeout=300)
    print("\n" + "\n".join(line for line in done.stdout.splitlines() if not line.startswith("{")))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["violation"] is None and result["kills"] >= 8
    assert result["submissions"] == result["settled"] == 12
    assert result["child conversations"] == result["child inputs answered"] == 24  # one researcher, one writer each
