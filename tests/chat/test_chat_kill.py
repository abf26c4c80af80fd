"""`kill -9` in the middle of a `bash` call, then `durable chat` again on the same session: the
command ran once (its side file says so), the reopened chat says in plain words that it was cut
off and not run again, the model reads it as possibly partial, and the conversation goes on."""

from __future__ import annotations

import os
import signal

import pexpect

from .test_chat_terminal import FAST, entries

BUILD = {"tokens_per_second": FAST, "turns": [{"user": "run the build", "steps": [
    {"text": "Running it.", "tool_calls": [
        {"name": "bash", "arguments": {"command": "echo $$ >> side.txt; echo started; sleep 60"}}]},
    {"text": "The build was cut off; I will not run it again without asking you."}]},
    {"user": "thanks", "steps": [{"text": "You are welcome."}]}]}

NOT_RERUN = ("recovery: Tool bash was interrupted and may have partially run. It is not safe to run twice, so it "
             "was not run again; the model is told it may be partial.")


def test_sigkill_mid_bash_then_resume_runs_it_once_and_says_it_may_be_partial(spawn):
    chat = spawn(BUILD)
    chat.prompt()
    chat.send("run the build")
    chat.expect('?? bash(command="echo $$ >> side.txt; echo started; sleep 60") wants to run')
    chat.expect("approve? [y]es / [n]o / [e]dit the arguments: ")
    chat.send("y")
    chat.expect("  | started")
    side = chat.work / "side.txt"
    pid = int(side.read_text())  # the command's shell, leader of its own process group
    try:
        os.kill(chat.child.pid, signal.SIGKILL)
        chat.child.expect(pexpect.EOF)
        chat.child.close()
        assert chat.child.signalstatus == signal.SIGKILL

        again = spawn(BUILD)
        again.expect("(reopened, 2 entries)")
        again.expect(NOT_RERUN)
        again.expect("(this input was still being answered when the chat stopped; going on) you> run the build")
        again.expect("agent: The build was cut off; I will not run it again without asking you.")
        again.prompt()
        again.send("thanks")
        again.expect("agent: You are welcome.")
        again.prompt()
        again.quit()
    finally:
        os.killpg(pid, signal.SIGKILL)  # the sleep the killed chat left behind
    assert side.read_text() == f"{pid}\n"  # one execution
    assert entries(again.db) == [
        ("user", "run the build"),
        ("assistant", "Running it.", "tool_use", ("bash",)),
        ("result", "bash", "Tool bash was interrupted and may have partially run\nPartial output:\nstarted\n", True),
        ("assistant", "The build was cut off; I will not run it again without asking you.", "stop", ()),
        ("user", "thanks"),
        ("assistant", "You are welcome.", "stop", ()),
    ]


WRITE = {"tokens_per_second": FAST, "turns": [{"user": "write the notes", "steps": [
    {"text": "Writing them.", "tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt",
                                                                                  "content": "notes\n"}}]},
    {"text": "The notes are written."}]}]}


def test_sigkill_at_an_approval_prompt_then_resume_asks_again(spawn):
    chat = spawn(WRITE)
    chat.prompt()
    chat.send("write the notes")
    chat.expect("approve? [y]es / [n]o / [e]dit the arguments: ")
    os.kill(chat.child.pid, signal.SIGKILL)
    chat.child.expect(pexpect.EOF)
    chat.child.close()

    again = spawn(WRITE)
    again.expect("(this input was still being answered when the chat stopped; going on) you> write the notes")
    again.expect('?? write_file(path="notes.txt", content="notes\\n") wants to run')
    again.expect("approve? [y]es / [n]o / [e]dit the arguments: ")
    again.send("y")
    again.expect("<- write_file ok: Wrote 6 characters to notes.txt")
    again.expect("agent: The notes are written.")
    again.prompt()
    again.quit()
    assert (again.work / "notes.txt").read_text() == "notes\n"
    assert "recovery:" not in again.transcript()  # a call waiting for a decision was not cut off
