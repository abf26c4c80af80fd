"""The file tools of `durable chat`, confined to its working folder: `read_file`, `list_files`,
`grep` (safe: run again after a crash), `write_file` and `edit_file` (unsafe: never run twice;
they ask for approval unless `--yes`). `bash` is in `durable.chat.shell`.

Every path is resolved against the folder and then through its symlinks (`confined`): a path
that lands outside (`../x`, `/etc/passwd`, a symlink pointing out) is an error result the model
reads ("... is outside the working folder"), and nothing outside is ever opened. `edit_file`
replaces one exact occurrence of a text: none, or several, is an error result saying which.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from ..tools import Tool, ToolApi, ToolContext, define_tool

MAX_READ = 100_000  # characters of a file shown to the model
MAX_LIST = 500  # entries of a listing
MAX_MATCHES = 200  # lines of a grep
SKIPPED = (".git", "__pycache__", "node_modules", ".venv")


class ToolRefused(Exception):
    """A call the tool refuses (a path outside the folder, an edit that does not match): the
    model reads the message as the error result."""


def confined(root: str, path: str) -> str:
    """The real path of `path` (relative to `root`, or absolute) when it is inside `root`, through
    every symlink; `ToolRefused` naming it otherwise."""
    if not isinstance(path, str) or not path or "\0" in path:
        raise ToolRefused(f"Invalid path {path!r}")
    base = os.path.realpath(root)
    real = os.path.realpath(os.path.join(base, path))
    if real != base and not real.startswith(base + os.sep):
        raise ToolRefused(f"Path {path} is outside the working folder {root}; only files inside it can be used")
    return real


def shown(root: str, real: str) -> str:
    """`real` as the model sees it: relative to the folder."""
    rel = os.path.relpath(real, os.path.realpath(root))
    return "." if rel == "." else rel


def _read_text(real: str, path: str) -> str:
    if not os.path.isfile(real):
        raise ToolRefused(f"No file {path}")
    with open(real, encoding="utf-8", errors="replace") as f:
        return f.read()


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_STR = {"type": "string"}


def make_file_tools(root: str, *, approve: bool, session: str | None = None) -> list[Tool]:
    """The five file tools on folder `root`; `approve`: the writing ones ask for a decision.
    `session`: the chat's session file, which (with its -wal, -shm... companions) they refuse to touch."""
    own = os.path.realpath(session) if session else None

    def inside(root: str, path: str) -> str:
        real = confined(root, path)
        if own is not None and real.startswith(own):
            raise ToolRefused(f"Path {path} is the chat's own session file; it is not for tools")
        return real

    async def read_file(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> str:
        real = inside(root, args["path"])
        text = _read_text(real, args["path"])
        if len(text) > MAX_READ:
            return text[:MAX_READ] + f"\n[... {len(text) - MAX_READ} more characters not shown]"
        return text

    async def list_files(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> str:
        path = args.get("path") or "."
        real = inside(root, path)
        if not os.path.isdir(real):
            raise ToolRefused(f"No folder {path}")
        names = []
        for entry in sorted(os.scandir(real), key=lambda e: e.name):
            if entry.name in SKIPPED:
                continue
            names.append(entry.name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
        more = len(names) - MAX_LIST
        return "\n".join(names[:MAX_LIST]) + (f"\n[... {more} more]" if more > 0 else "") if names else "(empty)"

    async def grep(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> str:
        try:
            pattern = re.compile(args["pattern"])
        except re.error as exc:
            raise ToolRefused(f"Invalid regular expression {args['pattern']!r}: {exc}") from None
        start = inside(root, args.get("path") or ".")
        found: list[str] = []
        for real in _walk(root, start, inside):
            try:
                with open(real, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        if pattern.search(line):
                            found.append(f"{shown(root, real)}:{number}: {line.rstrip()}")
                            if len(found) >= MAX_MATCHES:
                                return "\n".join(found) + "\n[... stopped at the first matches]"
            except (UnicodeDecodeError, OSError):
                continue  # a binary or unreadable file
        return "\n".join(found) if found else "(no match)"

    async def write_file(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> str:
        real = inside(root, args["path"])
        os.makedirs(os.path.dirname(real), exist_ok=True)
        with open(real, "w", encoding="utf-8") as f:
            f.write(args["content"])
        return f"Wrote {len(args['content'])} characters to {shown(root, real)}"

    async def edit_file(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> str:
        path, old, new = args["path"], args["old"], args["new"]
        real = inside(root, path)
        text = _read_text(real, path)
        count = text.count(old) if old else 0
        if count == 0:
            raise ToolRefused(f"The text to replace was not found in {path} (it must match exactly, "
                              f"whitespace included)")
        if count > 1:
            raise ToolRefused(f"The text to replace occurs {count} times in {path}; give a longer text that "
                              f"occurs once")
        with open(real, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        return f"Edited {shown(root, real)}: replaced 1 occurrence"

    return [
        define_tool("read_file", "Read a text file of the working folder.", _object({"path": _STR}, ["path"]),
                    replay="safe", execute=read_file),
        define_tool("list_files", "List a folder of the working folder (default: the folder itself).",
                    _object({"path": _STR}, []), replay="safe", execute=list_files),
        define_tool("grep", "Search the files under a path for a regular expression; prints file:line: text.",
                    _object({"pattern": _STR, "path": _STR}, ["pattern"]), replay="safe", execute=grep),
        define_tool("write_file", "Write a file of the working folder (created, or replaced whole).",
                    _object({"path": _STR, "content": _STR}, ["path", "content"]), replay="unsafe",
                    execute=write_file, approval=approve),
        define_tool("edit_file", "Replace one exact occurrence of `old` by `new` in a file of the working folder.",
                    _object({"path": _STR, "old": _STR, "new": _STR}, ["path", "old", "new"]), replay="unsafe",
                    execute=edit_file, approval=approve),
    ]


def _walk(root: str, start: str, inside: Callable[[str, str], str]) -> list[str]:
    """The files under `start` (itself when it is a file) that `inside` lets through: never
    leaving `root` through a symlink."""
    if os.path.isfile(start):
        return [start]
    out: list[str] = []
    seen: set[str] = set()
    for folder, dirs, files in os.walk(start):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        for name in sorted(files):
            try:
                real = inside(root, os.path.join(folder, name))
            except ToolRefused:
                continue
            if real not in seen:  # a symlink to a file inside: searched once
                seen.add(real)
                out.append(real)
    return out


__all__ = ["ToolRefused", "confined", "make_file_tools", "shown"]
