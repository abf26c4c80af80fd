"""The demo's two tools: `weather` (safe: run again after a crash) and `save_note` (unsafe: it
writes a file into a scratch folder next to the session file, and is never run twice)."""

from __future__ import annotations

import os
from typing import Any

import anyio

from ..tools import Tool, ToolApi, ToolContext, define_tool
from .demo_model import scratch_dir


def make_tools(db: str, speed: float) -> list[Tool]:
    scratch = scratch_dir(db)
    step = 0.5 / speed

    async def weather(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> str:
        city = args["city"]
        run = f" (run {ctx.attempt})" if ctx.attempt > 1 else ""
        for line in (f"looking up {city}{run}", "station LPPT: 21 °C", "forecast: clear, wind 12 km/h NW"):
            await api.output(line + "\n")
            await anyio.sleep(step)
        return "21 °C and clear, with a 12 km/h north-westerly wind"

    async def save_note(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> str:
        os.makedirs(scratch, exist_ok=True)
        path = os.path.join(scratch, os.path.basename(args["name"]))
        # Not safe to repeat: it overwrites. Written line by line between awaits on purpose (a kill
        # in the middle leaves a partial note), so the plain blocking `open` is what it needs.
        with open(path, "w", encoding="utf-8") as f:
            for line in args["lines"]:
                f.write(line + "\n")
                f.flush()
                await api.output(f"wrote: {line}\n")
                await anyio.sleep(step)
        return f"saved {len(args['lines'])} lines to {path}"

    return [
        define_tool(
            "weather", "Current weather for a city.",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            replay="safe", execute=weather,
        ),
        define_tool(
            "save_note", "Write a note (lines of text) into the demo's scratch folder.",
            {"type": "object", "properties": {"name": {"type": "string"},
                                              "lines": {"type": "array", "items": {"type": "string"}}},
             "required": ["name", "lines"]},
            replay="unsafe", execute=save_note,
        ),
    ]
