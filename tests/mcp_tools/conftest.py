"""Helpers for the MCP tests: the test server (`mcp_server.py`) over stdio or over streamable
HTTP on 127.0.0.1, a side file its tools append to, and harness settings that commit every
output."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import durable

pytest.importorskip("mcp")

HERE = Path(__file__).parent
SERVER = str(HERE / "mcp_server.py")


def settings(**kw: Any) -> durable.Settings:
    return durable.Settings(progress=durable.Progress(persist_within=0, output_interval=0), **kw)


class Side:
    """The file the server's tools append to: it outlives every process of a test."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text("")

    def lines(self) -> list[str]:
        return self.path.read_text().splitlines()

    def wait_for(self, line: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while line not in self.lines():
            if time.monotonic() > deadline:
                raise AssertionError(f"{line!r} never appeared; the side file has {self.lines()}")
            time.sleep(0.01)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpServer:
    """The test server as its own process, over streamable HTTP on 127.0.0.1."""

    def __init__(self, side: Side, log: Path, name: str = "tests", port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._log = open(log, "w")
        self.proc = subprocess.Popen([sys.executable, SERVER, str(side.path), "--http", str(self.port), "--name", name],
                                     stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the HTTP MCP server did not start: {log.read_text()}") from None
                time.sleep(0.05)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        self._log.close()


@pytest.fixture
def side(tmp_path: Path) -> Side:
    return Side(tmp_path / "side.txt")


@pytest.fixture
def http_server(side: Side, tmp_path: Path):
    server = HttpServer(side, tmp_path / "http-server.log")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server_spec(transport: str, side: Side, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    """The test server, as `durable.mcp.stdio(...)` or `durable.mcp.http(...)`, named "tests"."""
    from durable import mcp

    if transport == "stdio":
        errlog = open(tmp_path / "stdio-server.log", "w")
        request.addfinalizer(errlog.close)
        return mcp.stdio(sys.executable, [SERVER, str(side.path)], name="tests", stderr=errlog)
    server = request.getfixturevalue("http_server")
    return mcp.http(server.url, name="tests")
