"""The Makefile's quick start, run by `make` against a stand-in Python: `make demo` installs
durable alone, `make test` with its test extras; a Python older than 3.11 is refused before
anything is made; a .venv made by another Python is made again; `make clean` removes what the
commands made. The stand-in answers the Makefile's questions with the real interpreter and logs
what would have been installed or run, so nothing is downloaded and no suite runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

# `python -m venv DIR` makes DIR/bin/{python,pip,durable,ruff,mypy}: python answers `-c` with the real
# interpreter and logs anything else (`-m pytest`), as pip and durable log their arguments.
STAND_IN = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  echo "venv $3" >> "{log}"
  mkdir -p "$3/bin"
  for tool in python pip durable ruff mypy; do
    printf '#!/bin/sh\\nif [ "$1" = "-c" ]; then exec "{real}" "$@"; fi\\necho "%s $*" >> "{log}"\\n' "$tool" > "$3/bin/$tool"
    chmod +x "$3/bin/$tool"
  done
  exit 0
fi
exec "{real}" "$@"
"""

OLD_PYTHON = """#!/bin/sh
if [ "$1" = "-V" ]; then echo "Python 3.10.12"; exit 0; fi
if [ "$1" = "-c" ]; then exit 1; fi
echo "ran $*" >> "{log}"
"""


def script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def checkout(tmp_path):
    work = tmp_path / "checkout"
    work.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, work / name)
    log = tmp_path / "log"
    log.touch()
    (work / "scripts").mkdir()  # `make test` first makes sure PostgreSQL is installed: logged here
    script(work / "scripts" / "ensure-postgres", f'#!/bin/sh\necho ensure-postgres >> "{log}"\n')
    script(work / "scripts" / "ensure-chromium", f'#!/bin/sh\necho ensure-chromium >> "{log}"\n')
    python = script(tmp_path / "python3", STAND_IN.format(log=log, real=os.path.realpath(sys.executable)))
    return work, python, log


def make(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=work, capture_output=True, text=True, check=False,
                          timeout=60, env=env)


def logged(log: Path) -> list[str]:
    return log.read_text().splitlines()


def test_demo_installs_durable_alone_and_test_adds_the_test_extras(checkout):
    work, python, log = checkout
    assert make(work, "demo", f"PYTHON={python}").returncode == 0
    assert logged(log) == ["venv .venv", "pip install -q --disable-pip-version-check -e .", "durable demo"]
    log.write_text("")
    assert make(work, "demo", f"PYTHON={python}").returncode == 0
    assert logged(log) == ["durable demo"]  # set up once
    log.write_text("")
    assert make(work, "test", f"PYTHON={python}").returncode == 0
    assert logged(log) == ["pip install -q --disable-pip-version-check -e .[test]", "ensure-postgres",
                           "ensure-chromium", "ruff check durable", "mypy durable",
                           "python -m mkdocs build --strict --quiet --site-dir site",
                           "python -m pytest -q -p no:cacheprovider -n auto --dist loadgroup"]


def test_a_python_older_than_3_11_is_refused_before_anything_is_made(checkout, tmp_path):
    work, _, log = checkout
    old = script(tmp_path / "python3.10", OLD_PYTHON.format(log=log))
    for target in ("demo", "test"):
        done = make(work, target, f"PYTHON={old}")
        assert done.returncode != 0
        assert done.stderr.splitlines()[0] == (f"durable needs Python 3.11 or newer, and {old} is Python 3.10.12: "
                                               f"run make {target} PYTHON=python3.11 (or newer)")
    missing = make(work, "demo", "PYTHON=no-such-python")
    assert missing.stderr.splitlines()[0] == ("durable needs Python 3.11 or newer, and no-such-python was not "
                                              "found: run make demo PYTHON=python3.11 (or newer)")
    assert not (work / ".venv").exists()
    assert logged(log) == []


def test_a_venv_made_by_another_python_is_made_again(checkout):
    work, python, log = checkout
    assert make(work, "demo", f"PYTHON={python}").returncode == 0
    script(work / ".venv" / "bin" / "python", "#!/bin/sh\necho 3.10.12 /opt/old-python\n")
    log.write_text("")
    done = make(work, "demo", f"PYTHON={python}")
    assert done.returncode == 0, done.stderr
    assert ".venv was made by another Python: making it again with " + str(python) in done.stdout
    assert logged(log) == ["venv .venv", "pip install -q --disable-pip-version-check -e .", "durable demo"]
    (work / ".venv" / "bin" / "python").unlink()  # its Python is gone
    log.write_text("")
    assert make(work, "demo", f"PYTHON={python}").returncode == 0
    assert logged(log) == ["venv .venv", "pip install -q --disable-pip-version-check -e .", "durable demo"]


def test_clean_removes_the_venv_and_the_demos_files(checkout):
    work, python, _ = checkout
    assert make(work, "demo", f"PYTHON={python}").returncode == 0
    made = ["durable-demo.sqlite", "durable-demo.sqlite-wal", "durable-demo.sqlite.lock", "durable-demo-scratch/a.txt",
            "build/x", "pkg/__pycache__/m.pyc"]
    for name in made:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("x")
    assert make(work, "clean").returncode == 0
    assert sorted(p.name for p in work.iterdir()) == ["Makefile", "pkg", "pyproject.toml", "scripts"]
    assert list((work / "pkg").iterdir()) == []
