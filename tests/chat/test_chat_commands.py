"""The slash commands, with stdin a pipe (no terminal: plain `input()`, each line echoed after its
prompt): /fork, /sessions, /compact, /history, /help and an unknown command, exact output."""

from __future__ import annotations

import json
import subprocess
import sys

from .test_chat_terminal import FAST

SCRIPT = {"tokens_per_second": FAST, "turns": [
    {"user": "hi", "steps": [{"text": "Hello."}]},
    {"user": "more", "steps": [{"text": "More, in the fork."}]},
    {"user": "again", "steps": [{"text": "Again."}]},
    {"user": "once more", "steps": [{"text": "Once more."}]}]}


def test_fork_sessions_compact_and_history(tmp_path):
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    db = tmp_path / "chat.sqlite"
    lines = ("hi\n/fork\n/sessions\nmore\n/compact\nagain\nonce more\n/compact\n/history\n/sessions root\n"
             "/history 1\n/nope\n/quit\n")
    done = subprocess.run([sys.executable, "-m", "durable", "chat", "--session", str(db), "--cwd", str(tmp_path),
                           "--model", f"faux:{tmp_path / 'script.json'}"], input=lines, capture_output=True,
                          text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1",
                                                       "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2:] == [
        "you> hi",
        "agent: Hello.",
        "you> /fork",
        "forked root into fork-1; now in fork-1 (/sessions root goes back)",
        "you@fork-1> /sessions",
        f"conversations in {db}:",
        "* fork-1: 0 requests, forked from root at entry 2",
        "  root: 1 requests",
        "you@fork-1> more",
        "agent: More, in the fork.",
        "you@fork-1> /compact",
        "compacting (task 3)...",
        "nothing to compact yet (the last 4 entries are always kept as they are)",
        "you@fork-1> again",
        "agent: Again.",
        "you@fork-1> once more",
        "agent: Once more.",
        "you@fork-1> /compact",
        "compacting (task 6)...",
        "compacted: the entries before 5 are now one summary (/history shows it)",
        "you@fork-1> /history",
        "  1 you: hi",
        "  2 agent: Hello.",
        "  3 you: more",
        "  4 agent: More, in the fork.",
        "  5 you: again",
        "  6 agent: Again.",
        "  7 you: once more",
        "  8 agent: Once more.",
        "  9 summary: Summary: 5 messages about the user's folder.",
        "you@fork-1> /sessions root",
        "now in root",
        "you> /history 1",
        "  2 agent: Hello.",
        "you> /nope",
        "unknown command /nope; /help lists them",
        "you> /quit",
        f"bye: the conversation is saved in {db} (run durable chat --session {db} to go on)",
    ]
