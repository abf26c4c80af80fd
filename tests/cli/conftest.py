"""Helpers for the command-line tests: run `durable` (the installed entry point, or
`python -m durable.cli`) in a subprocess, read a session through `durable inspect --json`, and
hold a session file's lock from another process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
FAST = "8"  # DURABLE_DEMO_SPEED for tests: every delay of the demo divided by 8


def durable_command() -> list[str]:
    script = shutil.which("durable", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "durable.cli"]


def run_durable(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                timeout: float = 60, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run([*durable_command(), *args], cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=timeout, input=stdin)


def inspect_json(path: Path) -> dict[str, Any]:
    done = run_durable("inspect", str(path), "--json", "--last", "1000")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def transcript(data: dict[str, Any], conversation: str = "root") -> list[str]:
    """Entry kinds as the engine tests write them: user, assistant:<stop>, tool_result[:error]."""
    conv = next(c for c in data["conversations"] if c["id"] == conversation)
    out = []
    for e in conv["entries"]:
        if e["type"] == "assistant":
            out.append(f"assistant:{e['stop_reason']}")
        elif e["type"] == "tool_result":
            out.append("tool_result:error" if e["is_error"] else "tool_result")
        else:
            out.append(e["type"])
    return out


def entries(data: dict[str, Any], conversation: str = "root") -> list[dict[str, Any]]:
    return next(c for c in data["conversations"] if c["id"] == conversation)["entries"]


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """Assert the process failed the way a person can act on: status 2, one line, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


LIGHT_PROBE = textwrap.dedent("""
    import json, sys
    sys.argv = ["durable", *sys.argv[1:]]
    from durable.cli import main
    try:
        main()
    except SystemExit as exc:
        status = exc.code
    heavy = sorted(m for m in ("trio", "anyio", "openai", "anthropic", "httpx", "sniffio") if m in sys.modules)
    print(json.dumps({"status": status, "heavy": heavy}), file=sys.stderr)
""")


def run_light(*args: str) -> tuple[dict[str, Any], str]:
    """Run `durable ARGS` in this interpreter's process the way the entry point does, and return
    its exit status with the heavy libraries (event loops, provider SDKs) it imported, and its
    stdout: a reading command must import none of them."""
    probe = subprocess.run([sys.executable, "-c", LIGHT_PROBE, *args], capture_output=True, text=True, timeout=30)
    return json.loads(probe.stderr.strip().splitlines()[-1]), probe.stdout


@pytest.fixture(scope="module")
def finished_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session file the demo ran to completion on (made once per test module that uses it)."""
    db = tmp_path_factory.mktemp("finished") / "demo.sqlite"
    done = run_durable("demo", "--db", str(db), env={"DURABLE_DEMO_SPEED": FAST})
    assert done.returncode == 0, done.stderr
    return db


HOLDER = textwrap.dedent("""
    import sys, anyio
    from durable.storage import SQLiteStorage

    async def main():
        store = SQLiteStorage(sys.argv[1])
        await store.open()
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)  # until the test closes our stdin
        await store.close()

    anyio.run(main, backend="trio")
""")


class LockHolder:
    """Another process that owns a session file until `release()`."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        assert line.strip() == "ready", line

    @property
    def pid(self) -> int:
        return self.proc.pid

    def release(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def lock_holder():
    holders: list[LockHolder] = []

    def hold(path: Path) -> LockHolder:
        holder = LockHolder(path)
        holders.append(holder)
        return holder

    yield hold
    for holder in holders:
        holder.release()
