"""The examples run as they are, in a subprocess, in a temporary directory, without an API key;
and the chat example survives `kill -9`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from .conftest import REPO, inspect_json, transcript

EXAMPLES = REPO / "examples"


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_example(name: str, *args: str, cwd, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=cwd, env=clean_env(), input=stdin,
                          capture_output=True, text=True, timeout=60)


def kill_when_printed(name: str, *args: str, cwd, marker: bytes, stdin: bytes | None = None) -> tuple[bytes, bytes]:
    """Run example `name` (with `stdin` written to it, left open), SIGKILL it as soon as `marker`
    is on its stdout, and return its stdout and stderr up to the kill. It must still be running
    then: one that ends first (or never prints `marker` within 30 s) fails the test."""
    proc = subprocess.Popen([sys.executable, str(EXAMPLES / name), *args], cwd=cwd, env=clean_env(),
                            stdin=subprocess.PIPE if stdin is not None else None, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    output = bytearray()
    printed = threading.Event()

    def read() -> None:
        while chunk := proc.stdout.read1(64):  # type: ignore[union-attr]
            output.extend(chunk)
            if marker in output:
                printed.set()
        printed.set()  # the output ended: the marker will not come

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.flush()
    printed.wait(timeout=30)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    reader.join(timeout=5)
    stderr = proc.stderr.read()
    assert proc.returncode == -signal.SIGKILL, f"{name} ended before the kill: {proc.returncode}, {stderr!r}"
    return bytes(output), stderr


def test_quickstart_opens_submits_waits_and_closes(tmp_path):
    db = tmp_path / "quick.sqlite"
    done = run_example("quickstart.py", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Answered(text='Hello! This answer is committed to the session file as it streams.', seq=2, output=None)" in done.stdout
    assert "answer: Hello! This answer is committed to the session file as it streams.\n" in done.stdout
    assert transcript(inspect_json(db)) == ["user", "assistant:stop"]
    again = run_example("quickstart.py", str(db), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert transcript(inspect_json(db)) == ["user", "assistant:stop"] * 2


def test_quickstart_without_a_path_uses_a_temporary_directory(tmp_path, monkeypatch):
    work, temp = tmp_path / "work", tmp_path / "temp"
    work.mkdir()
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    done = run_example("quickstart.py", cwd=work)
    assert done.returncode == 0, done.stderr
    assert os.listdir(work) == []
    (made,) = os.listdir(temp)  # one new directory, kept: it holds the session file
    assert made.startswith("durable-") and "quickstart.sqlite" in os.listdir(temp / made)
    assert done.stdout.splitlines()[-1] == f"session file: {temp / made / 'quickstart.sqlite'}"


def test_the_quickstarts_given_a_path_make_no_temporary_directory(tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    for example in ("quickstart.py", "sync_quickstart.py"):
        done = run_example(example, str(tmp_path / f"{example}.sqlite"), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert os.listdir(temp) == []


def test_sync_quickstart_does_the_same_without_async_and_leaves_no_thread(tmp_path):
    db = tmp_path / "quick.sqlite"
    done = run_example("sync_quickstart.py", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Answered(text='Hello! This answer is committed to the session file as it streams.', seq=2, output=None)" in done.stdout
    assert "answer: Hello! This answer is committed to the session file as it streams.\n" in done.stdout
    again = run_example("sync_quickstart.py", str(db), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "seq=4, output=None)" in again.stdout
    assert transcript(inspect_json(db)) == ["user", "assistant:stop"] * 2


def test_tools_runs_a_safe_an_unsafe_and_a_client_tool(tmp_path):
    db = tmp_path / "tools.sqlite"
    done = run_example("tools.py", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "host: the model asks the user to confirm" in done.stdout
    assert "confirm result: The user clicked: yes" in done.stdout
    assert transcript(inspect_json(db)) == [
        "user", "assistant:tool_use", "tool_result", "tool_result", "tool_result", "assistant:stop"]
    assert (tmp_path / "notes.txt").read_text() == "durable: able to withstand wear\n"


def test_chat_cli_reads_piped_lines_until_the_end_of_stdin(tmp_path):
    db = tmp_path / "chat.sqlite"
    done = run_example("chat_cli.py", str(db), cwd=tmp_path, stdin="hello\n\nhow are you?\n")
    assert done.returncode == 0, done.stderr
    assert "assistant> You said: 'hello'." in done.stdout
    assert "assistant> You said: 'how are you?'." in done.stdout
    assert transcript(inspect_json(db)) == ["user", "assistant:stop"] * 2


def test_chat_cli_killed_while_answering_resumes_the_answer_on_restart(tmp_path):
    db = tmp_path / "chat.sqlite"
    output, _ = kill_when_printed("chat_cli.py", str(db), cwd=tmp_path, stdin=b"hello there\n",
                                  marker=b"You said: 'hel")  # the partial is on screen, so it is committed
    assert b"assistant> You said: 'hel" in output
    assert b"(This is the echo model; set" not in output, "the answer finished before the kill"

    done = run_example("chat_cli.py", str(db), cwd=tmp_path, stdin="")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "(the last process stopped before answering) you> hello there" in out
    # streamed from what the dead process committed, then the retry, then attempt 2 from the start
    assert "(the last process stopped before answering) you> hello there\nassistant> You said: 'hel" in out
    assert ("  [attempt 1 failed: The host stopped while the model was answering, on attempt 1; retrying]\n"
            "assistant> You said: 'hello there'. (This is the echo model;") in out
    assert ("(recovery: task 1 (generation): The host stopped while the model was answering, on attempt 1)") in out
    assert "assistant> You said: 'hello there'. (This is the echo model;" in out
    assert transcript(inspect_json(db)) == ["user", "assistant:aborted", "assistant:stop"]


def test_mcp_agent_killed_during_a_safe_mcp_tool_runs_it_again_and_never_repeats_the_unsafe_one(tmp_path):
    pytest.importorskip("mcp")
    db = tmp_path / "mcp.sqlite"
    output, stderr = kill_when_printed("mcp_agent.py", str(db), cwd=tmp_path,
                                       marker=b"summarize_notes: [1/3]")  # summarize_notes takes about 3 s
    assert b"summarize_notes: [1/3] reading the notes" in output, stderr
    assert b"result:" not in output, "the run finished before the kill"

    done = run_example("mcp_agent.py", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("tools: add_note [unsafe], list_notes [safe], summarize_notes [safe]\n"
                          "(resuming the run the last process left: 'Note that durable survives kill -9, then "
                          "summarize my notes.')\n")
    assert ("summarize my notes.')\n"
            "(recovery: task 3 (tool): Tool summarize_notes runs again (replay safe))\n"
            "  summarize_notes: [1/3] reading the notes\n"
            "  summarize_notes: [2/3] thinking\n"
            "  summarize_notes: [3/3] writing the summary\n"
            "result: answered (") in out
    assert out.endswith(
        "  you: Note that durable survives kill -9, then summarize my notes.\n"
        "  assistant: I'll add the note. -> add_note{\"text\": \"durable survives kill -9\"}\n"
        "  add_note result: added note 1: durable survives kill -9\n"
        "  assistant: Now the summary. -> summarize_notes{}\n"
        "  summarize_notes result: 1 note(s); the latest: durable survives kill -9\n"
        "  assistant: Done. Summary: 1 note(s); the latest: durable survives kill -9\n"
        f"notes in {tmp_path / 'notes.txt'}: ['durable survives kill -9']\n")
    assert transcript(inspect_json(db)) == ["user", "assistant:tool_use", "tool_result", "assistant:tool_use",
                                            "tool_result", "assistant:stop"]
