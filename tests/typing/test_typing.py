"""The public API's types reach a user's type checker: a script using the whole public API
type-checks clean under `mypy --strict` and pyright's strict mode, and runs; and the mistakes in
misuse.py (a misspelt `when_busy`, a string for `model=`, an internal phase type...) are reported
by both, on exactly their lines. Both checkers run on durable's source in this checkout.

pyright is the PyPI package: it bundles pyright's JavaScript and runs it with the machine's
Node.js (no download); without `node` on PATH the pyright test is skipped."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
USER_SCRIPT = HERE / "user_script.py"
MISUSE = HERE / "misuse.py"


def marked_lines(path: Path) -> list[int]:
    """The lines of `path` that end with an `# error: ...` comment."""
    return [n for n, line in enumerate(path.read_text().splitlines(), 1) if re.search(r"  # error: [^#]*$", line)]


def test_misuse_marks_the_mistakes_it_makes():
    assert len(marked_lines(MISUSE)) == 10
    assert marked_lines(USER_SCRIPT) == []


def test_mypy_strict_passes_the_user_script_and_reports_each_mistake_on_its_line(tmp_path):
    cache = tmp_path / "cache"
    if (REPO / ".mypy_cache").is_dir():  # `make test` type-checked durable just before: start from a copy of its cache
        shutil.copytree(REPO / ".mypy_cache", cache)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), "--show-error-codes",
         str(USER_SCRIPT), str(MISUSE)],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    errors: dict[str, list[int]] = {}
    for match in re.finditer(r"^(.+?\.py):(\d+): error: ", done.stdout, re.M):
        errors.setdefault(Path(match[1]).name, []).append(int(match[2]))
    assert "user_script.py" not in errors, done.stdout
    assert errors.get("misuse.py") == marked_lines(MISUSE), done.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="pyright needs Node.js on PATH (it would download one)")
def test_pyright_strict_passes_the_user_script_and_reports_each_mistake_on_its_line():
    pyright = shutil.which("pyright", path=os.path.dirname(sys.executable))
    assert pyright, "pyright is in the test extra: pip install -e '.[test]'"
    env = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}  # no look-up of a newer version
    # pyrightconfig.json beside this file: strict mode, this checkout's durable on the path.
    done = subprocess.run([pyright, "--outputjson", "--pythonpath", sys.executable], cwd=HERE, env=env,
                          capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    errors: dict[str, set[int]] = {}
    for d in report["generalDiagnostics"]:
        if d["severity"] == "error":
            errors.setdefault(Path(d["file"]).name, set()).add(d["range"]["start"]["line"] + 1)
    assert report["summary"]["filesAnalyzed"] == 2
    assert "user_script.py" not in errors, [d for d in report["generalDiagnostics"] if "user_script" in d["file"]]
    assert sorted(errors.get("misuse.py", ())) == marked_lines(MISUSE), report["generalDiagnostics"]


def test_the_user_script_runs(tmp_path):
    done = subprocess.run([sys.executable, str(USER_SCRIPT), str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-11:] == [
        "answered at entry 4: Sunny.",
        "Sunny.",
        "2: assistant (tool_use) ",
        "4: assistant (stop) Sunny.",
        "tool task 2: Terminal",
        "active: False",
        "answered at entry 8: Sunny.",
        "Sunny.",
        "busy: False",
        "Paris: 18 C",
        "requests: 1 (1)",
    ]
    assert all(line.startswith("live: attempt 1 ") for line in lines[:-11])
