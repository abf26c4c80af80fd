"""`durable demo`: a run to completion, and runs killed with SIGKILL at named points (or by
`--kill-after`) that the same command resumes. The recovered session is checked through
`durable inspect --json`, with exact transcripts."""

from __future__ import annotations

import signal

from .conftest import FAST, entries, inspect_json, run_durable, transcript

HOST_STOPPED_1 = "The host stopped while the model was answering, on attempt 1"
FULL_RUN = [
    "user", "assistant:stop",
    "user", "assistant:tool_use", "tool_result", "tool_result", "assistant:stop",
    "user", "assistant:stop",
    "user", "assistant:stop",
]


def demo(db, *args, kill_at=None, speed=FAST, cwd=None):
    env = {"DURABLE_DEMO_SPEED": speed}
    if kill_at:
        env["DURABLE_DEMO_KILL_AT"] = kill_at
    return run_durable("demo", "--db", str(db), *args, env=env, cwd=cwd)


def recovery_lines(out, task_id):
    return [line for line in out.splitlines() if line.startswith(f"[recovery] task {task_id} ")]


def assert_every_input_settled(data, *, answered=4):
    subs = data["submissions"]
    assert len(subs) == 4
    assert [s["status"] for s in subs].count("done") == answered
    assert all(s["status"] in ("done", "unanswered") for s in subs)
    assert all(t["state"] == "terminal" for t in data["tasks"])
    assert data["live"]["root"]["run"] is None


def assert_every_tool_call_has_one_result(data):
    es = entries(data)
    calls = [c["id"] for e in es if e["type"] == "assistant" for c in e["tool_calls"]]
    results = [e["call_id"] for e in es if e["type"] == "tool_result"]
    assert sorted(calls) == sorted(results)


def test_the_demo_runs_all_four_inputs_to_completion_and_exits_0(tmp_path):
    done = demo(tmp_path / "demo.sqlite", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "[done] all 4 inputs settled: 4 answered" in out
    for line in ("[input 1/4] you: Hi! What is this demo about?",
                 "[tool done] weather: 21 °C and clear",
                 "[tool done] save_note: saved 5 lines to",
                 "[retry] attempt 1 failed (rate_limit, HTTP 429): Rate limit reached: too many requests; attempt 2 in",
                 "[deferred] attempt 1 asks for the answer as a background job",
                 "[answer] (attempt 1, 17 tokens) Power cut mid-word;"):
        assert line in out
    assert "[recovery]" not in out
    data = inspect_json(tmp_path / "demo.sqlite")
    assert transcript(data) == FULL_RUN
    assert [e.get("attempt") for e in entries(data) if e["type"] == "assistant"] == [1, 1, 1, 2, 1]
    assert_every_input_settled(data)
    note = (tmp_path / "demo-scratch" / "lisbon.txt").read_text().splitlines()
    assert note[0] == "Lisbon, today" and len(note) == 5
    assert data["tasks"][-1]["phase"] == "poll"  # the fourth answer came through a deferred job


def test_a_demo_killed_mid_stream_then_mid_tool_resumes_twice_and_charges_each_cut_once(tmp_path):
    db = tmp_path / "demo.sqlite"
    first = demo(db, kill_at="stream")
    assert first.returncode == -signal.SIGKILL, first.stdout + first.stderr
    assert "[kill] DURABLE_DEMO_KILL_AT=stream" in first.stdout
    cut = inspect_json(db)
    assert transcript(cut) == ["user"]
    assert [(s["status"], s["task_id"]) for s in cut["submissions"]] == [("queued", 1)]
    task = cut["tasks"][0]
    assert (task["state"], task["phase"], task["attempt"], task["restarts"]) == ("running", "request", 1, 0)
    partial = cut["live"]["root"]["generation"]["message"]["text"]
    assert len(partial) >= 20
    assert cut["file"]["owner_pid"] is None  # the kill released the lock

    second = demo(db, kill_at="tool")
    assert second.returncode == -signal.SIGKILL, second.stdout + second.stderr
    out = second.stdout
    assert "[resume]" in out and "1 of 4 inputs already given, input 1 not yet settled" in out
    # One line for the cut-off task: what it was doing and what recovery does about it.
    assert recovery_lines(out, 1) == [
        ("[recovery] task 1 (generation) was cut off by the crash in its request phase; counted as a failed "
        f"attempt (restarts=1): {HOST_STOPPED_1}")]
    lines = out.splitlines()
    kept = next(i for i, line in enumerate(lines) if line.startswith("[kept partial] attempt 1 was cut off"))
    # Counted once recovery has written the partial it keeps, so the two lines agree.
    assert lines.index("[history] the conversation has 2 entries, 1 aborted partial") > kept
    assert "charge" not in out
    mid = inspect_json(db)
    assert transcript(mid) == ["user", "assistant:aborted", "assistant:stop", "user", "assistant:tool_use"]
    aborted = entries(mid)[1]
    assert aborted["text"] == partial and aborted["error"] == HOST_STOPPED_1 and aborted["attempt"] == 1
    note_task = next(t for t in mid["tasks"] if t["tool"] and t["tool"]["name"] == "save_note")
    assert (note_task["state"], note_task["tool"]["replay"]) == ("running", "unsafe")

    third = demo(db)
    assert third.returncode == 0, third.stdout + third.stderr
    out = third.stdout
    assert "2 of 4 inputs already given, input 2 not yet settled" in out
    weather_task = next(t for t in mid["tasks"] if t["tool"] and t["tool"]["name"] == "weather")
    assert recovery_lines(out, 2) == [
        "[recovery] task 2 (generation) is waiting on its tools: it was not running, so nothing was cut off"]
    assert recovery_lines(out, weather_task["id"]) == [
        f"[recovery] task {weather_task['id']} (tool weather, safe) was cut off by the crash; it runs again (restarts=1)"]
    assert recovery_lines(out, note_task["id"]) == [
        (f"[recovery] task {note_task['id']} (tool save_note, unsafe) was cut off by the crash and is not run again "
        "(restarts=1): Tool save_note was interrupted and may have partially run")]
    assert "[history] the conversation has 5 entries, 1 aborted partial" in out.splitlines()
    assert [line for line in out.splitlines() if line.startswith("[done]")] == [
        f"[done] all 4 inputs settled: 4 answered. Inspect it: durable inspect {db}"]
    assert "charge" not in out

    data = inspect_json(db)
    assert transcript(data) == [
        "user", "assistant:aborted", "assistant:stop",
        "user", "assistant:tool_use", "tool_result", "tool_result:error", "assistant:stop",
        "user", "assistant:stop",
        "user", "assistant:stop",
    ]
    es = entries(data)
    assert [(e["stop_reason"], e["attempt"]) for e in es if e["type"] == "assistant"] == [
        ("aborted", 1), ("stop", 2), ("tool_use", 1), ("stop", 1), ("stop", 2), ("stop", 1)]
    weather, note = es[5], es[6]
    assert (weather["tool_name"], weather["is_error"]) == ("weather", False)
    assert note["tool_name"] == "save_note" and note["is_error"]
    assert note["content"].startswith("Tool save_note was interrupted and may have partially run\nPartial output:\nwrote: ")
    assert [d["code"] for d in note["diagnostics"]] == ["interrupted"]
    assert "may be incomplete" in es[7]["text"]  # the model read the error result
    assert_every_input_settled(data)
    assert_every_tool_call_has_one_result(data)
    tasks = {t["id"]: t for t in data["tasks"]}
    assert tasks[note_task["id"]]["outcome"] == "failed"
    assert tasks[note_task["id"]]["error"]["reason"] == "interrupted"
    # The unsafe tool ran once: the note file holds only what the killed run wrote.
    written = (tmp_path / "demo-scratch" / "lisbon.txt").read_text().splitlines()
    assert 1 <= len(written) < 5


def test_a_kill_in_a_retry_backoff_or_a_deferred_poll_is_resumed_without_an_aborted_entry(tmp_path):
    db = tmp_path / "demo.sqlite"
    assert demo(db, kill_at="backoff").returncode == -signal.SIGKILL
    cut = inspect_json(db)
    sleeping = cut["tasks"][-1]
    assert (sleeping["state"], sleeping["phase"], sleeping["restarts"]) == ("sleeping", "retry", 0)
    assert cut["live"]["root"]["generation"]["retry"]["status_code"] == 429

    resumed = demo(db, kill_at="poll")
    assert resumed.returncode == -signal.SIGKILL, resumed.stdout + resumed.stderr
    timer = [line for line in resumed.stdout.splitlines() if "is in a durable timer until" in line]
    assert len(timer) == 1 and timer[0].endswith(": it was not running, so nothing was cut off"), resumed.stdout
    polled = inspect_json(db)
    assert polled["tasks"][-1]["phase"] == "poll"

    final = demo(db)
    assert final.returncode == 0, final.stdout + final.stderr
    assert "[reopen] opening the file with stream.deferred=True" in final.stdout
    data = inspect_json(db)
    assert transcript(data) == FULL_RUN
    assert_every_input_settled(data)


def test_kill_after_sigkills_the_demo_and_the_same_command_then_finishes(tmp_path):
    db = tmp_path / "demo.sqlite"
    killed = demo(db, "--kill-after", "0.8", speed="2")
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert "[kill] --kill-after 0.8: the demo kills itself with SIGKILL now" in killed.stdout
    resumed = demo(db)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "[resume]" in resumed.stdout
    data = inspect_json(db)
    assert_every_input_settled(data)
    assert_every_tool_call_has_one_result(data)
    attempts = [e["attempt"] for e in entries(data) if e["type"] == "assistant"]
    assert max(attempts) <= 4  # max_retries + 1


def test_a_second_demo_on_a_finished_file_has_nothing_left_to_do(tmp_path):
    db = tmp_path / "demo.sqlite"
    assert demo(db).returncode == 0
    again = demo(db)
    assert again.returncode == 0
    assert "4 of 4 inputs already given" in again.stdout
    assert "[input" not in again.stdout
    assert transcript(inspect_json(db)) == FULL_RUN


def test_a_crash_loop_mid_stream_ends_visibly_after_max_retries_plus_one_attempts(tmp_path):
    db = tmp_path / "demo.sqlite"
    for _ in range(4):  # attempts 1..4 of input 1 are each killed mid-stream
        assert demo(db, kill_at="stream@1").returncode == -signal.SIGKILL
    final = demo(db, kill_at="stream@1")  # charges attempt 4: none left, so input 1 ends; no stream to kill
    assert final.returncode == 0, final.stdout + final.stderr
    detail = "The host stopped while the model was answering, on attempt 4"
    assert f"[unanswered] run of task 1 ended: interrupted: {detail}" in final.stdout
    assert "[done] all 4 inputs settled: 3 answered, 1 visibly unanswered" in final.stdout
    data = inspect_json(db)
    first = data["submissions"][0]
    assert (first["status"], first["reason"], first["detail"]) == ("unanswered", "interrupted", detail)
    assert transcript(data)[:5] == ["user"] + ["assistant:aborted"] * 4
    assert [e["attempt"] for e in entries(data)[1:5]] == [1, 2, 3, 4]
    assert transcript(data)[5:] == FULL_RUN[2:]
    assert_every_input_settled(data, answered=3)
