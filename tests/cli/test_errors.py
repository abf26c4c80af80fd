"""Errors a person can act on: one line on stderr, exit status 2, no traceback (unless
`--debug`), and the file left as it was."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3

import pytest

from durable.storage.sqlite.schema import SCHEMA_VERSION

from .conftest import inspect_json, one_line_error, run_durable


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def newer_schema_copy(source, target):
    target.write_bytes(source.read_bytes())
    conn = sqlite3.connect(target)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    return target


def test_inspect_of_a_missing_file_says_so(tmp_path):
    line = one_line_error(run_durable("inspect", str(tmp_path / "nope.sqlite")))
    assert line == f"durable: error: No session file at {tmp_path / 'nope.sqlite'}"
    assert not (tmp_path / "nope.sqlite").exists()


@pytest.mark.parametrize("command", ["inspect", "demo"])
def test_a_text_file_is_not_a_session_and_is_left_unchanged(tmp_path, command):
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\n")
    args = ["inspect", str(path)] if command == "inspect" else ["demo", "--db", str(path)]
    line = one_line_error(run_durable(*args))
    assert line == f"durable: error: {path} is not a durable session file (not an SQLite database)"
    assert path.read_text() == "just some notes\n"
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]


@pytest.mark.parametrize("command", ["inspect", "demo"])
def test_an_sqlite_file_of_another_program_is_not_a_session(tmp_path, command):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE things (x)")
    conn.commit()
    conn.close()
    before = digest(path)
    args = ["inspect", str(path)] if command == "inspect" else ["demo", "--db", str(path)]
    line = one_line_error(run_durable(*args))
    assert line == f"durable: error: {path} is an SQLite database of another program, not a durable session file"
    assert digest(path) == before


@pytest.mark.parametrize("command", ["inspect", "demo"])
def test_a_newer_schema_is_refused_naming_both_versions(tmp_path, finished_session, command):
    path = newer_schema_copy(finished_session, tmp_path / "newer.sqlite")
    before = digest(path)
    args = ["inspect", str(path)] if command == "inspect" else ["demo", "--db", str(path)]
    line = one_line_error(run_durable(*args))
    assert line == (f"durable: error: Session file {path} has schema version 99; this version of durable reads "
                    f"up to version {SCHEMA_VERSION}. Upgrade durable to open it.")
    assert digest(path) == before


def test_a_demo_on_a_file_another_process_owns_is_refused_naming_the_owner(tmp_path, lock_holder):
    db = tmp_path / "owned.sqlite"
    holder = lock_holder(db)
    line = one_line_error(run_durable("demo", "--db", str(db)))
    assert line == f"durable: error: Session file {db} is already open in process {holder.pid}"


def test_inspect_reads_a_file_another_process_owns_and_names_the_owner(finished_session, tmp_path, lock_holder):
    db = tmp_path / "copy.sqlite"
    db.write_bytes(finished_session.read_bytes())
    holder = lock_holder(db)
    data = inspect_json(db)
    assert data["file"]["owner_pid"] == holder.pid
    assert [s["status"] for s in data["submissions"]] == ["done"] * 4
    human = run_durable("inspect", str(db))
    assert human.returncode == 0 and f"process {holder.pid}" in human.stdout
    holder.release()
    assert inspect_json(db)["file"]["owner_pid"] is None


def test_a_demo_in_a_missing_folder_says_which_folder(tmp_path):
    db = tmp_path / "no" / "such" / "demo.sqlite"
    line = one_line_error(run_durable("demo", "--db", str(db)))
    assert line == (f"durable: error: Cannot create the session file {db}: the folder {db.parent} does not exist")


@pytest.mark.parametrize("model, variable", [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_a_provider_without_a_key_is_one_line_and_touches_no_file(tmp_path, model, variable):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    import subprocess

    from .conftest import durable_command

    # the timeout only guards against a hang: under load the SDK import alone took over 30 s
    done = subprocess.run([*durable_command(), "demo", "--model", model, "--db", str(tmp_path / "d.sqlite")],
                          env=env, capture_output=True, text=True, timeout=120)
    line = one_line_error(done)
    assert variable in line
    assert os.listdir(tmp_path) == []


def test_debug_shows_the_traceback(tmp_path):
    done = run_durable("--debug", "inspect", str(tmp_path / "nope.sqlite"))
    assert done.returncode != 0
    assert "Traceback" in done.stderr and "StorageError: No session file at" in done.stderr


def test_inspect_json_is_one_object_with_stable_keys(finished_session):
    done = run_durable("inspect", str(finished_session), "--json")
    data = json.loads(done.stdout)
    assert list(data) == ["file", "conversations", "submissions", "tasks", "live", "costs"]
    assert {"path", "size_bytes", "schema_version", "journal_mode", "synchronous", "owner_pid"} <= set(data["file"])
    assert (data["file"]["journal_mode"], data["file"]["synchronous"]) == ("wal", "EXTERNAL")
    assert set(data["tasks"][0]) >= {"id", "kind", "state", "phase", "attempt", "restarts", "outcome"}
    assert set(data["submissions"][0]) >= {"id", "status", "reason", "detail"}
