"""`python -m durable` is the `durable` command: the same help, the same `inspect` output, and
`inspect` stays light (it imports no event-loop library nor provider SDK)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import durable
from durable import records as r
from durable.models.faux import FauxModel, reply

from .conftest import run_durable

HEAVY = ("trio", "anyio", "sniffio", "httpx", "openai", "anthropic", "google")


def python_m_durable(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "durable", *args], capture_output=True,
                          text=True, timeout=60, env=env)


def imported(stderr: str) -> set[str]:
    """The top-level packages `-X importtime` saw imported."""
    found = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", stderr, re.M)
    return {name.split(".")[0] for name in found}


def shown(stderr: str) -> str:
    return "\n".join(line for line in stderr.splitlines() if not line.startswith("import time:"))


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("main") / "agent.sqlite"

    async def write() -> None:
        async with durable.open_harness(path, model=FauxModel([reply("Hello")])) as h:
            assert await (await h.root.submit("Hi")).wait() == r.Answered("Hello", 2)

    anyio.run(write, backend="trio")
    return path


def test_python_m_durable_help_is_the_commands_help():
    done = python_m_durable("--help")
    assert (done.returncode, shown(done.stderr)) == (0, "")
    assert done.stdout.startswith("Usage: durable [OPTIONS] COMMAND [ARGS]...")
    assert done.stdout == run_durable("--help", env={"COLUMNS": "200"}).stdout
    assert "inspect" in done.stdout and "demo" in done.stdout


def test_python_m_durable_inspect_prints_what_durable_inspect_prints_and_stays_light(session):
    done = python_m_durable("inspect", str(session))
    assert (done.returncode, shown(done.stderr)) == (0, "")
    assert done.stdout == run_durable("inspect", str(session), env={"COLUMNS": "200"}).stdout
    assert "Hello" in done.stdout
    modules = imported(done.stderr)
    assert "durable" in modules and "click" in modules
    assert sorted(modules & set(HEAVY)) == []
