"""`durable inspect`: light (no event-loop or provider libraries imported), fast, read-only, and
safe while the owner process writes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time

import pytest

from durable.storage.sqlite.schema import SCHEMA_VERSION

from .conftest import durable_command, inspect_json, run_durable, run_light


@pytest.fixture
def session(tmp_path, finished_session):
    """A copy of a finished session (closed cleanly: no -wal or -shm next to it)."""
    db = tmp_path / "demo.sqlite"
    db.write_bytes(finished_session.read_bytes())
    return db


def test_inspect_imports_no_event_loop_or_provider_library_and_starts_fast(session):
    db = session
    result, stdout = run_light("inspect", str(db), "--json")
    assert result == {"status": 0, "heavy": []}
    assert json.loads(stdout)["file"]["schema_version"] == SCHEMA_VERSION

    started = time.perf_counter()
    done = subprocess.run([*durable_command(), "inspect", str(db), "--json"], capture_output=True, text=True,
                          timeout=120)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0
    print(f"durable inspect --json took {elapsed * 1000:.0f} ms (process start included)")


def test_inspect_changes_nothing_and_creates_no_file(tmp_path, session):
    db = session
    before = {name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
              for name in os.listdir(tmp_path) if (tmp_path / name).is_file()}
    mtime = os.stat(db).st_mtime_ns
    assert run_durable("inspect", str(db)).returncode == 0
    assert run_durable("inspect", str(db), "--json").returncode == 0
    after = {name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
             for name in os.listdir(tmp_path) if (tmp_path / name).is_file()}
    assert after == before  # no -wal/-shm sidecars, no changed byte
    assert os.stat(db).st_mtime_ns == mtime


def test_inspect_while_the_demo_runs_sees_committed_progress_and_the_owner(tmp_path):
    db = tmp_path / "demo.sqlite"
    env = {**os.environ, "DURABLE_DEMO_SPEED": "4"}
    proc = subprocess.Popen([*durable_command(), "demo", "--db", str(db)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists() and os.path.getsize(db) > 0:
                done = run_durable("inspect", str(db), "--json", "--last", "100")
                if done.returncode == 0:
                    data = json.loads(done.stdout)
                    seen.append((data["file"]["owner_pid"], len(data["submissions"])))
                    if data["file"]["owner_pid"] == proc.pid and len(data["submissions"]) >= 2:
                        break
            time.sleep(0.1)
        assert (proc.pid, 2) in seen or any(pid == proc.pid and n >= 2 for pid, n in seen), seen
    finally:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert [s["status"] for s in inspect_json(db)["submissions"]] == ["done"] * 4
