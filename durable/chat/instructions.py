"""The instructions of `durable chat`: what the agent is, then two sections assembled by each run
in its prepare phase (committed with the run, so a retry after a crash sends the same text):
the folder's `AGENTS.md`, and the folder with a summary of `git status`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

SYSTEM_PROMPT = (
    "You are a coding agent working in the user's folder through tools: read_file, list_files and grep "
    "to look, write_file and edit_file to change files (edit_file replaces one exact occurrence), bash to run "
    "commands. Paths are relative to the working folder; nothing outside it can be used. Look before you "
    "change, keep changes small, and say what you did."
)
MAX_AGENTS_MD = 20_000
MAX_STATUS_LINES = 40


def agents_md(root: str) -> Callable[[Any], Awaitable[str]]:
    """A section with the folder's AGENTS.md (empty when it has none)."""

    async def agents_md_section(ctx: Any) -> str:
        path = os.path.join(root, "AGENTS.md")
        if not os.path.isfile(path):
            return ""
        text = await anyio.to_thread.run_sync(_read, path)
        return f"The folder's AGENTS.md (the user's instructions for agents):\n\n{text[:MAX_AGENTS_MD].strip()}"

    return agents_md_section


def folder_status(root: str) -> Callable[[Any], Awaitable[str]]:
    """A section naming the working folder and summing up `git status` (when it is a repository)."""

    async def folder_section(ctx: Any) -> str:
        return f"The working folder is {root}.\n{await anyio.to_thread.run_sync(git_summary, root)}"

    return folder_section


def git_summary(root: str) -> str:
    """One line on the branch and the changed files, from `git status --porcelain --branch`."""
    try:
        done = subprocess.run(["git", "status", "--porcelain", "--branch"], cwd=root, capture_output=True,
                              text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return "It is not a git repository (or git is not installed)."
    if done.returncode != 0:
        return "It is not a git repository."
    lines = done.stdout.splitlines()
    branch = lines[0][3:] if lines and lines[0].startswith("## ") else "unknown"
    changed = [line for line in lines if not line.startswith("## ")]
    if not changed:
        return f"git: branch {branch}, no changes."
    shown = "\n".join(changed[:MAX_STATUS_LINES]) + (f"\n... {len(changed) - MAX_STATUS_LINES} more"
                                                    if len(changed) > MAX_STATUS_LINES else "")
    return f"git: branch {branch}, {len(changed)} changed file(s):\n{shown}"


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def make_instructions(root: str) -> list[Any]:
    return [agents_md(root), folder_status(root)]


__all__ = ["SYSTEM_PROMPT", "agents_md", "folder_status", "git_summary", "make_instructions"]
