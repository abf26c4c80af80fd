"""How long `durable chat` takes to come up and go away: a fresh process with stdin a pipe
("/quit"), on a new session file, per round; the baseline in the same rounds is `durable
--version` (the click group alone). Prints medians of interleaved rounds with min-max.

    python benchmarks/chat_startup.py [--rounds N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import machine_line, median


def once(argv: list[str], stdin: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "durable", *argv], input=stdin, capture_output=True, text=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    chat: list[float] = []
    base: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(rounds):
            base.append(once(["--version"], ""))
            chat.append(once(["chat", "--session", str(Path(tmp) / f"s{n}.sqlite"), "--cwd", tmp], "/quit\n"))
    print(machine_line())
    for name, xs in (("durable --version", base), ("durable chat, /quit", chat)):
        print(f"{name:<22} median {median(xs) * 1000:7.0f} ms  (min {min(xs) * 1000:.0f}, max {max(xs) * 1000:.0f})")
    print(f"ratio chat / baseline: {median(chat) / median(base):.1f}x")


if __name__ == "__main__":
    main()
