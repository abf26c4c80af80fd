"""Source that a script writes from what a library generates, checked in so that a process does
not generate and compile it at start (durable/_codec_hooks.py: cattrs' hooks of the records;
durable/_attrs_methods.py: the methods attrs writes for durable's classes): never stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("script", "target"), [("codec_hooks.py", "durable/_codec_hooks.py"),
                                                ("attrs_methods.py", "durable/_attrs_methods.py")])
def test_the_checked_in_source_is_what_its_script_writes_now(script: str, target: str):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--check"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"{target} is up to date"
