"""The faux model of `durable chat --model faux[:SCRIPT]`: no key, no network.

With a script (a JSON file), each user input is answered by a turn of it: the turn whose `user`
equals the input's text, else the next one in order. A turn is a list of steps, one per request
of its run: the first answers the input, the next one the tool results of the first, and so on.

    {"tokens_per_second": 50, "price": {"input": 1.0, "output": 2.0},
     "turns": [{"user": "fix the typo", "steps": [
         {"reasoning": "Look first.", "text": "Let me see.",
          "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
         {"text": "Done.", "usage": {"input_tokens": 100, "output_tokens": 20}}]}]}

A step may also be `{"hang": true, "text": "..."}` (streams the text, then never ends: for
Ctrl-C) or `{"error": "message"}` (a provider error). `price` (USD per million tokens) prices
the faux model for `/usage`. Without a script, a first look: it lists the folder, reads a file
of it and says what it found. Steps are chosen from the request (never from a counter), so a
run resumed after a crash goes on with the right one.
"""

from __future__ import annotations

import json
from typing import Any

from .. import records as r
from ..errors import DurableError
from ..models import FauxModel, ModelRequest, faux


class ScriptError(DurableError):
    """The faux script cannot be used (unreadable, not JSON, a step of the wrong shape)."""


def load_script(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        raise ScriptError(f"Cannot read the faux script {path}: {exc}") from None
    if isinstance(data, list):
        data = {"turns": data}
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise ScriptError(f"The faux script {path} must be a JSON list of turns or an object with \"turns\"")
    for i, turn in enumerate(data["turns"]):
        steps = turn.get("steps") if isinstance(turn, dict) else None
        if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
            raise ScriptError(f"Turn {i + 1} of the faux script {path} needs \"steps\": a list of objects")
    return data


def _position(request: ModelRequest) -> tuple[str, int, int, list[Any]]:
    """The input being answered (its text), its number among the inputs, the step (tool rounds
    so far in its run) and the entries after it."""
    messages = list(request.messages)
    users = [(i, m) for i, m in enumerate(messages) if isinstance(m, r.UserEntry)]
    if not users:
        return "", 0, 0, []
    last, entry = users[-1]
    after = messages[last + 1:]
    rounds = sum(1 for m in after if isinstance(m, r.AssistantEntry) and m.tool_calls)
    return entry.text, len(users), rounds, after


def _step(spec: dict[str, Any], request: ModelRequest, index: int) -> Any:
    if "error" in spec:
        return faux.error(str(spec["error"]), kind="server", status_code=500)
    text, reasoning = str(spec.get("text", "")), str(spec.get("reasoning", ""))
    if spec.get("hang"):
        return faux.hang(text, reasoning=reasoning)
    calls = [faux.call(c["name"], c.get("arguments", {}), id=f"call-{request.key}-{index}-{n}")
             for n, c in enumerate(spec.get("tool_calls", ()))]
    usage = spec.get("usage")
    return faux.reply(text, reasoning=reasoning, tool_calls=calls,
                      usage=r.Usage(**usage) if isinstance(usage, dict) else None)


def scripted(script: dict[str, Any]) -> Any:
    turns: list[dict[str, Any]] = script["turns"]

    def answer(request: ModelRequest) -> Any:
        if not request.tools:  # a compaction's summary request (the chat always offers tools)
            return faux.reply(f"Summary: {len(request.messages)} messages about the user's folder.")
        said, number, rounds, _ = _position(request)
        turn = next((t for t in turns if t.get("user") == said), None)
        if turn is None:
            unnamed = [t for t in turns if "user" not in t]
            turn = unnamed[number - 1] if 0 < number <= len(unnamed) else None
        if turn is None:
            return faux.reply(f"(The faux script has no turn for input {number}: {said!r}.)")
        steps = turn["steps"]
        if rounds >= len(steps):
            return faux.reply("(The faux script has no more steps for this input.)")
        return _step(steps[rounds], request, rounds)

    return answer


def first_look(request: ModelRequest) -> Any:
    """Without a script: list the folder, read a file of it, say what it found."""
    if not request.tools:
        return faux.reply(f"Summary: {len(request.messages)} messages about the user's folder.")
    said, number, rounds, after = _position(request)
    results = [m for m in after if isinstance(m, r.ToolResultEntry)]
    if number > 1:
        return faux.reply(f"You said {said!r}. I am the faux model: I only know how to take a first look at a "
                          "folder. Run durable chat with --model openai:NAME, anthropic:NAME, google:NAME or "
                          "URL/NAME for a real one.")
    if rounds == 0:
        return faux.reply("Let me look at this folder.", reasoning="A first look: list the folder, then read a file.",
                          tool_calls=[faux.call("list_files", {"path": "."}, id=f"list-{request.key}")])
    if rounds == 1:
        names = [n for n in results[-1].content.splitlines() if n and not n.endswith("/") and n != "(empty)"]
        pick = next((n for n in names if n.lower().startswith(("readme", "agents"))), names[0] if names else None)
        if pick is None:
            return faux.reply("The folder is empty: there is nothing to read yet.")
        return faux.reply(f"I will read {pick}.", tool_calls=[faux.call("read_file", {"path": pick},
                                                                          id=f"read-{request.key}")])
    listing, read = results[0].content.splitlines(), results[-1]
    first = next((line.strip() for line in read.content.splitlines() if line.strip()), "")
    return faux.reply(f"This folder has {len(listing)} entries. I read one of them; it starts with: {first[:120]!r}. "
                      "(This is the faux model's first look; give --model for a real one.)")


class ChatFaux(FauxModel):
    """The faux model, answering every request from the request itself (see the module)."""

    def __init__(self, script: dict[str, Any] | None = None, *, tokens_per_second: float | None = 60.0) -> None:
        brain = scripted(script) if script is not None else first_look
        speed = (script or {}).get("tokens_per_second", tokens_per_second)
        super().__init__([brain] * 100_000, tokens_per_second=speed, token_size=4, keep_requests=1)


__all__ = ["ChatFaux", "ScriptError", "first_look", "load_script", "scripted"]
