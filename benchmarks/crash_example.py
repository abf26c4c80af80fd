"""Benchmark: how long examples/crash_test_your_agent.py takes (the README promises under 30 s).

Run: `python benchmarks/crash_example.py [--rounds 3]`. Not a test: it prints the median (min-max)
wall time of `--rounds` runs of the example, each as its own process, beside the bare
interpreter's start measured in the same rounds (interleaved), and whether the target is met.
Prints only; tests/crash/test_example.py checks what the example finds, not how fast.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "crash_test_your_agent.py"
TARGET = 30.0


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    bare: list[float] = []
    example: list[float] = []
    for _ in range(rounds):
        bare.append(timed([sys.executable, "-c", "pass"]))
        example.append(timed([sys.executable, str(EXAMPLE)]))
    median = statistics.median(example)
    print(f"python -c pass:          {statistics.median(bare):.3f} s ({min(bare):.3f}-{max(bare):.3f})")
    print(f"crash_test_your_agent:   {median:.1f} s ({min(example):.1f}-{max(example):.1f}), "
          f"{median / statistics.median(bare):.0f}x the bare interpreter")
    print(f"target <= {TARGET:g} s: {'met' if median <= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()
