"""SIGKILL of the agent process in the middle of an MCP tool call: the next process connects again,
a safe (idempotent) tool runs again, an unsafe one is not run a second time and the model reads
"may have partially run". The side file the server's tools append to outlives every process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from .conftest import HERE

CHILD = str(HERE / "agent_child.py")


def kill_mid_call(tmp_path, side, server: str, tool: str) -> list[str]:
    session = str(tmp_path / "agent.sqlite")
    args = [sys.executable, CHILD, session, str(side.path), server, tool, "k"]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = first.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("submitted "), (line, first.stderr.read())  # type: ignore[union-attr]
        submission = line.split()[1]
        side.wait_for(f"{tool} k start")
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == -signal.SIGKILL
    second = subprocess.run([*args, submission], capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    [line] = [x for x in second.stdout.splitlines() if x.startswith("results ")]
    return list(json.loads(line.removeprefix("results ")))


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_safe_tool_cut_off_by_sigkill_runs_again_in_the_next_process(tmp_path, side, transport, request):
    server = "stdio" if transport == "stdio" else request.getfixturevalue("http_server").url
    assert kill_mid_call(tmp_path, side, server, "slow_safe") == ["k is done"]
    assert [x for x in side.lines() if not x.endswith("cancelled")] == [
        "slow_safe k start", "slow_safe k start", "slow_safe k done"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_unsafe_tool_cut_off_by_sigkill_is_not_run_again(tmp_path, side, transport, request):
    server = "stdio" if transport == "stdio" else request.getfixturevalue("http_server").url
    assert kill_mid_call(tmp_path, side, server, "slow_unsafe") == [
        "Tool slow_unsafe was interrupted and may have partially run"]
    assert side.lines().count("slow_unsafe k start") == 1
