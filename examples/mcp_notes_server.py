"""A small MCP server (official SDK, `MCPServer`) the MCP example talks to over stdio:

    python examples/mcp_notes_server.py NOTES_FILE

- `add_note(text)` appends a line to NOTES_FILE: a side effect, and no annotation says it is safe
  to repeat, so durable treats it as `unsafe` (never run twice after a crash);
- `list_notes()` is annotated `read_only_hint=True`: `safe`, it just runs again after a crash;
- `summarize_notes()` is read-only too, and slow: it reports progress (durable shows it as the
  tool's output) for about three seconds, long enough to `kill -9` the agent in the middle.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

NOTES = sys.argv[1] if len(sys.argv) > 1 else "notes.txt"
server = MCPServer("notes")


def read_notes() -> list[str]:
    if not os.path.exists(NOTES):
        return []
    with open(NOTES, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


@server.tool()
def add_note(text: str) -> str:
    """Add a note (one line) to the notes file."""
    with open(NOTES, "a", encoding="utf-8") as f:
        f.write(text.replace("\n", " ") + "\n")
    return f"added note {len(read_notes())}: {text}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_notes() -> str:
    """List the notes, one per line."""
    return "\n".join(read_notes()) or "(no notes)"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def summarize_notes(ctx: Context) -> str:
    """Summarize the notes (slowly, reporting progress)."""
    notes = read_notes()
    for step, what in enumerate(["reading the notes", "thinking", "writing the summary"], start=1):
        await ctx.report_progress(step, 3, what)
        await anyio.sleep(1)
    return f"{len(notes)} note(s); the latest: {notes[-1] if notes else '(none)'}"


if __name__ == "__main__":
    server.run()
