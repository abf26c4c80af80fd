"""Fixtures of the console tests: agent processes (`agent.py`) on a session file, the standalone
console (`durable console`) as a process, and headless Chromium (Debian's `chromium` and
`chromium-driver`, installed by scripts/ensure-chromium) driven by Selenium."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOKEN = "test-token-0123456789"


class Process:
    """A child process whose stdout is read a line at a time."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)

    def send(self, line: str) -> None:
        """Write `line` to the process's stdin (a gate it waits on)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, line: str) -> str:
        """Read lines until one starts with `line` (a failure when the process ends first)."""
        assert self.proc.stdout is not None
        for got in self.proc.stdout:
            if got.startswith(line):
                return got.strip()
        err = self.proc.stderr.read() if self.proc.stderr else ""
        raise AssertionError(f"process ended (status {self.proc.wait()}) before saying {line!r}: {err}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for p in started:
        p.kill()


@pytest.fixture
def agent(processes: list[Process], tmp_path: Path):
    """`agent(mode, path)`: an agent process on `path`, once it said `open`."""
    def start(mode: str, path: Path) -> Process:
        p = Process([sys.executable, str(HERE / "agent.py"), mode, str(path)], tmp_path)
        processes.append(p)
        p.expect("open")
        return p
    return start


@pytest.fixture
def console(processes: list[Process], tmp_path: Path):
    """`console(*paths)`: `durable console` on a free port; returns its printed URL."""
    def start(*paths: Path) -> str:
        durable = Path(sys.executable).with_name("durable")
        p = Process([str(durable), "console", *map(str, paths), "--port", "0", "--token", TOKEN], tmp_path)
        processes.append(p)
        return p.expect("durable console: http://").split(": ", 1)[1]
    return start


def chromium_paths() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium, one for the run. Without it (scripts/ensure-chromium installs it) the
    browser tests fail, unless DURABLE_SKIP_BROWSER=1, which skips them."""
    found = chromium_paths()
    if found is None:
        if os.environ.get("DURABLE_SKIP_BROWSER") == "1":
            pytest.skip("DURABLE_SKIP_BROWSER=1: chromium and chromedriver are not installed")
        pytest.fail("chromium and chromedriver are not installed: run scripts/ensure-chromium", pytrace=False)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,900", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(found[1]), options=options)
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()
