"""`durable chat` in a pseudo-terminal: approvals, Ctrl-C, /usage, a path escaping --cwd."""

from __future__ import annotations

import os
import signal

from durable import records as r
from durable.storage.sqlite.reader import SessionReader

FAST = 400  # faux tokens a second


def entries(db) -> list[tuple]:
    """The root conversation as (kind, what) pairs, from the file."""
    with SessionReader(str(db)) as reader:
        stored = reader.entries("root")
    out = []
    for s in stored:
        e = s.entry
        if isinstance(e, r.UserEntry):
            out.append(("user", e.text))
        elif isinstance(e, r.AssistantEntry):
            out.append(("assistant", e.text, e.stop_reason, tuple(c.name for c in e.tool_calls)))
        elif isinstance(e, r.ToolResultEntry):
            out.append(("result", e.tool_name, e.content, e.is_error))
    return out


EDIT_AND_BASH = {"tokens_per_second": FAST, "turns": [{"user": "fix the greeting", "steps": [
    {"reasoning": "Read it, then fix the typo.", "text": "Let me fix it.",
     "tool_calls": [{"name": "edit_file", "arguments": {"path": "hello.txt", "old": "helo", "new": "hello"}}]},
    {"text": "Fixed. Now the tests.",
     "tool_calls": [{"name": "bash", "arguments": {"command": "echo ran >> side.txt"}}]},
    {"text": "You said no to the tests; the edit is in place."},
]}]}


def test_an_approved_edit_and_a_denied_bash(spawn):
    chat = spawn(EDIT_AND_BASH)
    chat.ask("fix the greeting", **{"hello.txt": "helo world\n"})
    chat.expect("thinking: Read it, then fix the typo.", "agent: Let me fix it.",
                '-> edit_file(path="hello.txt", old="helo", new="hello")',
                '?? edit_file(path="hello.txt", old="helo", new="hello") wants to run',
                "approve? [y]es / [n]o / [e]dit the arguments: ")
    chat.send("y")
    chat.expect("<- edit_file ok: Edited hello.txt: replaced 1 occurrence")
    chat.expect("agent: Fixed. Now the tests.")
    chat.expect('?? bash(command="echo ran >> side.txt") wants to run')
    chat.expect("approve? [y]es / [n]o / [e]dit the arguments: ")
    chat.send("n")
    chat.expect("why not (optional, the model reads it): ")
    chat.send("not now")
    chat.expect("<- bash error: The user denied tool bash: not now")
    chat.expect("agent: You said no to the tests; the edit is in place.")
    chat.prompt()
    chat.quit()
    assert (chat.work / "hello.txt").read_text() == "hello world\n"
    assert not (chat.work / "side.txt").exists()
    assert entries(chat.db) == [
        ("user", "fix the greeting"),
        ("assistant", "Let me fix it.", "tool_use", ("edit_file",)),
        ("result", "edit_file", "Edited hello.txt: replaced 1 occurrence", False),
        ("assistant", "Fixed. Now the tests.", "tool_use", ("bash",)),
        ("result", "bash", "The user denied tool bash: not now", True),
        ("assistant", "You said no to the tests; the edit is in place.", "stop", ()),
    ]


HANGS = {"tokens_per_second": FAST, "turns": [{"user": "write a long essay", "steps": [
    {"text": "Here is the first part of a very long essay", "hang": True}]}]}


def test_ctrl_c_aborts_the_answer_keeps_it_and_twice_at_the_prompt_quits(spawn):
    chat = spawn(HANGS)
    chat.prompt()
    chat.send("write a long essay")
    chat.expect("agent: Here is the first part of a very long essay")
    chat.child.sendintr()
    chat.expect("^C: aborting the run...")
    chat.expect("[aborted: the partial answer is kept in the conversation]")
    chat.prompt()
    chat.child.sendintr()
    chat.expect("(Ctrl-C again to quit)")
    chat.prompt()
    chat.child.sendintr()
    chat.ended()
    assert entries(chat.db) == [
        ("user", "write a long essay"),
        ("assistant", "Here is the first part of a very long essay", "aborted", ()),
    ]


PRICED = {"tokens_per_second": FAST, "price": {"input": 2.0, "output": 8.0}, "turns": [
    {"user": "hello", "steps": [{"text": "Hi there.", "usage": {"input_tokens": 1200, "output_tokens": 300}}]}]}


def test_usage_shows_tokens_cost_and_tool_runtime(spawn):
    chat = spawn(PRICED)
    chat.prompt()
    chat.send("/usage")
    chat.expect("no requests yet")
    chat.expect("tools: 0 calls, 0.0 s of tool runtime")
    chat.send("hello")
    chat.expect("agent: Hi there.")
    chat.prompt()
    chat.send("/usage")
    chat.expect("/usage")
    chat.prompt()
    lines = [line for line in chat.child.before.splitlines() if line.strip()]
    assert lines[-3:] == [
        "faux: 1 request, 1200 input tokens (0 cached), 300 output tokens (0 reasoning), cost $0.004800",
        "total: 1500 tokens, cost $0.004800",
        "tools: 0 calls, 0.0 s of tool runtime",
    ]
    chat.quit()


ESCAPES = {"tokens_per_second": FAST, "turns": [{"user": "read the secrets", "steps": [
    {"text": "Reading.", "tool_calls": [
        {"name": "read_file", "arguments": {"path": "../secret.txt"}},
        {"name": "read_file", "arguments": {"path": "link.txt"}},
        {"name": "write_file", "arguments": {"path": "link.txt", "content": "owned"}},
        {"name": "list_files", "arguments": {"path": "../"}}]},
    {"text": "I cannot reach outside the folder."}]}]}


def test_a_path_escaping_the_folder_is_an_error_result(spawn):
    chat = spawn(ESCAPES, "--yes")
    secret = chat.tmp / "secret.txt"
    secret.write_text("TOP-SECRET-42\n")
    os.symlink(secret, chat.work / "link.txt")
    folder = os.path.realpath(chat.work)
    chat.prompt()
    chat.send("read the secrets")
    chat.expect("<- read_file error: Tool read_file failed: ToolRefused: Path ../secret.txt is outside the working")
    chat.expect("<- read_file error: Tool read_file failed: ToolRefused: Path link.txt is outside the working")
    chat.expect("<- write_file error: Tool write_file failed: ToolRefused: Path link.txt is outside the working")
    chat.expect("<- list_files error: Tool list_files failed: ToolRefused: Path ../ is outside the working")
    chat.expect("agent: I cannot reach outside the folder.")
    chat.prompt()
    chat.quit()
    assert secret.read_text() == "TOP-SECRET-42\n"
    outside = f"is outside the working folder {folder}; only files inside it can be used"
    assert [e[1:] for e in entries(chat.db) if e[0] == "result"] == [
        ("read_file", f"Tool read_file failed: ToolRefused: Path ../secret.txt {outside}", True),
        ("read_file", f"Tool read_file failed: ToolRefused: Path link.txt {outside}", True),
        ("write_file", f"Tool write_file failed: ToolRefused: Path link.txt {outside}", True),
        ("list_files", f"Tool list_files failed: ToolRefused: Path ../ {outside}", True),
    ]
    assert "TOP-SECRET-42" not in chat.transcript()


LONG_BASH = {"tokens_per_second": FAST, "turns": [{"user": "watch the logs", "steps": [
    {"text": "Watching.", "tool_calls": [{"name": "bash", "arguments": {
        "command": "echo $$ > group.pid; sleep 60 & echo started; wait"}}]}]}]}


def test_ctrl_c_during_bash_kills_its_process_group(spawn):
    """The abort kills the command's process group (the background sleep too) before the run
    settles: nothing of it is left running when the prompt comes back."""
    chat = spawn(LONG_BASH, "--yes")
    chat.ask("watch the logs")
    chat.expect("  | started")
    group = int((chat.work / "group.pid").read_text())
    assert _members(group) != []
    chat.child.sendintr()
    chat.expect("^C: aborting the run...", "[aborted: the partial answer is kept in the conversation]")
    chat.prompt()
    assert _gone(group)
    chat.quit()
    assert entries(chat.db)[2] == ("result", "bash", "The tool call was aborted\nPartial output:\nstarted\n", True)


def _gone(group: int) -> bool:
    """Whether every process of `group` is dead (waits for SIGKILLs sent to land, at most ~5 s)."""
    for _ in range(500):
        if not _members(group):
            return True
        signal.sigtimedwait([], 0.01)
    return False


def _members(group: int) -> list[int]:
    """The processes of process group `group` that are not zombies (killed, waiting to be reaped)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(pid))
    return found
