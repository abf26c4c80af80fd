"""How many Ctrl-C presses `durable chat` loses when the garbage collector runs in its main
thread: a chat in a pseudo-terminal (pexpect, TERM=dumb and prompt-toolkit, as in tests/chat)
whose process also runs a thread making cyclic garbage with WeakSet members (each collection of
it runs `WeakSet._remove` callbacks, in whichever thread collects; `--threshold` sets
gc.set_threshold there). Ctrl-C is pressed N times per mode:

- `prompt`: just after the prompt shows; taken when "(Ctrl-C again to quit)" comes;
- `run`: while an answer streams; taken when "^C: aborting the run..." comes;
- `approval`: just after "approve? ..." shows; taken when "^C: aborting the run..." comes.

A press not answered within --wait seconds is counted lost (the chat then gets an empty line, or
a second Ctrl-C, to go on). `--before DIR` runs the same rounds, interleaved, on another copy of
the code (a folder holding a `durable` package, e.g. `git archive main durable | tar -x -C DIR`).
Prints, per code and mode, the presses lost per round (median, min-max) and the "Exception
ignored" reports the chat printed (Python's report of an exception raised in a weakref callback
or a `__del__`).

    python benchmarks/chat_ctrl_c.py [--presses N] [--rounds R] [--modes prompt,run,approval]
                                     [--before DIR] [--wait S] [--threshold T]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import sys
import tempfile
from pathlib import Path

import pexpect
from _common import machine_line, median, table

# The chat's process: a thread making cyclic garbage with WeakSet members, then `durable chat`.
CHILD = """
import gc, runpy, sys, threading, time, weakref
sys.path.insert(0, {code!r})
gc.set_threshold({threshold})
class Node:
    pass
def churn():
    members = weakref.WeakSet()
    while True:
        for _ in range(400):
            node = Node(); node.me = node; members.add(node)
        time.sleep(0.0005)
threading.Thread(target=churn, daemon=True).start()
sys.argv = ["durable", *{argv!r}]
runpy.run_module("durable", run_name="__main__")
"""

ESSAY = " ".join(["many words"] * 2000)
STEPS = {
    "prompt": lambda n: [{"text": "unused"}],
    "run": lambda n: [{"text": ESSAY, "hang": True}],
    "approval": lambda n: [{"text": "Writing.", "tool_calls": [
        {"name": "write_file", "arguments": {"path": f"f{n}.txt", "content": "x"}}]}],
}


def spawn(tmp: Path, code: str, threshold: int, mode: str, presses: int) -> pexpect.spawn:
    (tmp / "work").mkdir(exist_ok=True)
    script = {"tokens_per_second": 400, "turns": [{"steps": STEPS[mode](n)} for n in range(presses)]}
    (tmp / "script.json").write_text(json.dumps(script))
    argv = ["chat", "--session", str(tmp / "chat.sqlite"), "--cwd", str(tmp / "work"), "--model",
            f"faux:{tmp / 'script.json'}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "GEMINI"))}
    env.update(NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1", TERM="dumb", XDG_STATE_HOME=str(tmp / "state"))
    source = CHILD.format(code=code, threshold=threshold, argv=argv)
    return pexpect.spawn(sys.executable, ["-c", source], env=env, encoding="utf-8", timeout=60,
                         dimensions=(50, 250), cwd=str(tmp), preexec_fn=_interruptible)


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as a terminal's process has it (see tests/chat/conftest.py)


def taken(chat: pexpect.spawn, text: str, wait: float) -> bool:
    return chat.expect_exact([text, pexpect.TIMEOUT], timeout=wait) == 0


def at_prompt(chat: pexpect.spawn, presses: int, wait: float) -> int:
    lost = 0
    chat.expect_exact("you> ")
    for _ in range(presses):
        chat.sendintr()
        if taken(chat, "(Ctrl-C again to quit)", wait):
            chat.expect_exact("you> ")
        else:
            lost += 1
        chat.sendline("")  # an empty line: the next Ctrl-C is a first one again
        chat.expect_exact("you> ")
    return lost


def during(chat: pexpect.spawn, presses: int, wait: float, shown: str) -> int:
    lost = 0
    chat.expect_exact("you> ")
    for n in range(presses):
        chat.sendline(f"input {n}")
        chat.expect_exact(shown)
        chat.sendintr()
        if not taken(chat, "^C: aborting the run...", wait):
            lost += 1
            chat.sendintr()
            chat.expect_exact("^C: aborting the run...")
        chat.expect_exact("[aborted: the partial answer is kept in the conversation]")
        chat.expect_exact("you> ")
    return lost


def once(code: str, mode: str, presses: int, wait: float, threshold: int) -> tuple[int, int]:
    """(presses lost, "Exception ignored" reports) of one chat."""
    with tempfile.TemporaryDirectory() as tmp:
        chat = spawn(Path(tmp), code, threshold, mode, presses)
        chat.logfile_read = log = io.StringIO()
        if mode == "prompt":
            lost = at_prompt(chat, presses, wait)
        else:
            lost = during(chat, presses, wait, "words " if mode == "run" else "approve? [y]es")
        chat.sendline("/quit")
        chat.expect(pexpect.EOF)
        chat.close()
        return lost, log.getvalue().count("Exception ignored")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presses", type=int, default=100, help="per mode and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--modes", default="prompt,run,approval")
    parser.add_argument("--before", metavar="DIR", help="another copy of the code, run in the same rounds")
    parser.add_argument("--wait", type=float, default=3.0, help="seconds after which a press is lost")
    parser.add_argument("--threshold", type=int, default=700, help="gc.set_threshold in the chat's process")
    args = parser.parse_args()
    print(machine_line())
    codes = {"now": str(Path(__file__).resolve().parents[1])}
    if args.before:
        codes = {"before": str(Path(args.before).resolve()), **codes}
    modes = args.modes.split(",")
    results: dict[tuple[str, str], list[tuple[int, int]]] = {(c, m): [] for c in codes for m in modes}
    for r in range(args.rounds):
        for name, code in codes.items():
            for mode in modes:
                results[name, mode].append(once(code, mode, args.presses, args.wait, args.threshold))
                print(f"round {r + 1}: {name} {mode}: lost {results[name, mode][-1][0]} of {args.presses}",
                      flush=True)
    rows = []
    for (name, mode), got in results.items():
        lost = [x for x, _ in got]
        rows.append([name, mode, f"{median(lost):g} ({min(lost)}-{max(lost)})",
                     f"{100 * sum(lost) / (args.presses * len(got)):.1f}%", sum(i for _, i in got)])
    print(table(["code", "mode", f"lost of {args.presses} per round: median (min-max)", "lost in all",
                 "'Exception ignored'"], rows))


if __name__ == "__main__":
    main()
