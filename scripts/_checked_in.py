"""What scripts/codec_hooks.py and scripts/attrs_methods.py share: write the file, or `--check`
that the checked-in one is what the script writes now."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_or_check(target: Path, text: str, script: str, argv: list[str]) -> None:
    name = target.relative_to(ROOT)
    if argv == ["--check"]:
        if target.read_text() != text:
            sys.exit(f"{name} is not what scripts/{script} writes now: run it")
        print(f"{name} is up to date")
        return
    target.write_text(text)
    print(f"wrote {name} ({text.count(chr(10))} lines)")
