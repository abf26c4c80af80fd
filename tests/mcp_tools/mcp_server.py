"""An MCP server for the tests, built with the official SDK (`MCPServer`):

    python mcp_server.py SIDE_FILE [--http PORT] [--name NAME]

Every tool appends what it does to SIDE_FILE (one line each, flushed), which outlives the
processes of a test: `lookup`/`append`/... `start`, `done`, `cancelled`. The server talks over
stdio, or streamable HTTP on 127.0.0.1:PORT.
"""

from __future__ import annotations

import argparse
import os

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import ToolAnnotations

parser = argparse.ArgumentParser()
parser.add_argument("side")
parser.add_argument("--http", type=int, default=None)
parser.add_argument("--name", default="tests")
options = parser.parse_args()

server = MCPServer(options.name)
READ_ONLY = ToolAnnotations(read_only_hint=True)


def note(line: str) -> int:
    """Append `line` to the side file; return how many times it is there now."""
    with open(options.side, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
    with open(options.side, encoding="utf-8") as f:
        return sum(1 for existing in f if existing.rstrip("\n") == line)


@server.tool(annotations=READ_ONLY)
def lookup(word: str) -> str:
    """Look a word up."""
    note(f"lookup {word}")
    return f"{word}: able to withstand wear"


@server.tool()
def append(line: str) -> str:
    """Append a line to the notes (not safe to repeat)."""
    note(f"append {line}")
    return f"appended {line!r}"


@server.tool(annotations=ToolAnnotations(idempotent_hint=True))
async def slow_safe(key: str) -> str:
    """Idempotent: the first run hangs (the test kills someone), a later one answers."""
    if note(f"slow_safe {key} start") == 1:
        await anyio.sleep_forever()
    note(f"slow_safe {key} done")
    return f"{key} is done"


@server.tool()
async def slow_unsafe(key: str) -> str:
    """Not safe to repeat: runs until cancelled."""
    note(f"slow_unsafe {key} start")
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):
            note(f"slow_unsafe {key} cancelled")
    return "unreachable"


@server.tool(annotations=READ_ONLY)
async def steps(n: int, ctx: Context) -> str:
    """Reports progress n times, then runs until cancelled."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    note("steps reported")
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):
            note("steps cancelled")
    return "unreachable"


@server.tool(annotations=READ_ONLY)
async def nap(seconds: float) -> str:
    """Sleeps, then answers."""
    note("nap start")
    try:
        await anyio.sleep(seconds)
    finally:
        with anyio.CancelScope(shield=True):
            note("nap ended")
    return "rested"


@server.tool()
def die() -> str:
    """The server process exits in the middle of the call."""
    note("die start")
    os._exit(3)


@server.tool()
def fail() -> str:
    """A tool error (isError)."""
    raise ToolError("the disk is full")


@server.tool()
def refuse() -> str:
    """A protocol error (a JSON-RPC error response)."""
    raise MCPError(-32602, "the notes are locked")


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and says the tool list changed."""

    def extra() -> str:
        """A tool added at run time."""
        return "extra!"

    server.add_tool(extra, annotations=READ_ONLY)
    note("grow")
    await ctx.notify_tools_changed()  # 2026-07-28 clients: a subscriptions/listen event
    try:
        await ctx.session.send_tool_list_changed()  # 2025 clients: the notification
    except Exception:  # noqa: BLE001 - not on this protocol version
        pass
    return "grown"


if options.http is not None:
    server.run("streamable-http", host="127.0.0.1", port=options.http)
else:
    server.run()
