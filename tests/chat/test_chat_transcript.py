"""A whole session as docs/chat.md shows it: a first look with the unscripted faux model, then a
scripted fix (an edit approved after editing its arguments, a bash run with its output streamed),
/usage and /history. With DURABLE_CHAT_TRANSCRIPT=1 the terminal's text replaces the recorded
session in docs/chat.md (between its `session:start` and `session:end` markers)."""

from __future__ import annotations

import os
from pathlib import Path

from .test_chat_terminal import FAST, entries

DOCS = Path(__file__).resolve().parents[2] / "docs"

FIX = {"tokens_per_second": FAST, "turns": [
    {"user": "the greeting has a typo: fix it and run greet.sh", "steps": [
        {"reasoning": "Find the typo first.", "text": "Let me find it.",
         "tool_calls": [{"name": "grep", "arguments": {"pattern": "helo"}}]},
        {"text": "Found it in greet.sh.",
         "tool_calls": [{"name": "edit_file", "arguments": {"path": "greet.sh", "old": "helo", "new": "hello"}}]},
        {"text": "Now I run it.", "tool_calls": [{"name": "bash", "arguments": {"command": "sh greet.sh"}}]},
        {"text": "Fixed: greet.sh now says hello, world."}]}]}


def test_a_whole_session(spawn):
    chat = spawn(FIX)
    chat.ask("the greeting has a typo: fix it and run greet.sh", **{"greet.sh": "echo 'helo, world'\n"})
    chat.expect("<- grep ok: greet.sh:1: echo 'helo, world'")
    chat.expect("approve? [y]es / [n]o / [e]dit the arguments: ")
    chat.send("e")
    chat.expect('arguments now: {"path": "greet.sh", "old": "helo", "new": "hello"}')
    chat.expect("new arguments (a JSON object; Enter keeps them): ")
    chat.send('{"path": "greet.sh", "old": "helo, world", "new": "hello, world"}')
    chat.expect("<- edit_file ok: Edited greet.sh: replaced 1 occurrence")
    chat.expect("approve? [y]es / [n]o / [e]dit the arguments: ")
    chat.send("y")
    chat.expect("<- bash ok: hello, world")
    chat.expect("agent: Fixed: greet.sh now says hello, world.")
    chat.prompt()
    chat.send("/history")
    chat.expect("8 agent: Fixed: greet.sh now says hello, world.")
    chat.prompt()
    chat.send("/usage")
    chat.expect("tools: 3 calls, ")
    chat.prompt()
    chat.quit()
    assert (chat.work / "greet.sh").read_text() == "echo 'hello, world'\n"
    assert [e[:2] for e in entries(chat.db)] == [
        ("user", "the greeting has a typo: fix it and run greet.sh"), ("assistant", "Let me find it."),
        ("result", "grep"), ("assistant", "Found it in greet.sh."), ("result", "edit_file"),
        ("assistant", "Now I run it."), ("result", "bash"), ("assistant", "Fixed: greet.sh now says hello, world."),
    ]
    if os.environ.get("DURABLE_CHAT_TRANSCRIPT") == "1":
        text = chat.transcript().replace(str(chat.tmp), "/tmp/demo")
        command = ("$ durable chat --session /tmp/demo/chat.sqlite --cwd /tmp/demo/work "
                   "--model faux:/tmp/demo/script.json")
        page = DOCS / "chat.md"
        before, rest = page.read_text().split("<!-- session:start -->\n", 1)
        after = rest.split("<!-- session:end -->", 1)[1]
        block = f"```text\n{command}\n{text.rstrip()}\n```\n"
        page.write_text(f"{before}<!-- session:start -->\n{block}<!-- session:end -->{after}")
