"""The `bash` tool of `durable chat`: runs a command in the working folder, in a process group
of its own, its output (stdout and stderr together) streamed as the call's output.

It is unsafe (a command cut off by a crash is never run again: the model reads "Tool bash was
interrupted and may have partially run") and asks for approval unless `--yes`. Its timeout is
durable (measured from the call's stored start, across restarts). When the call is cancelled
(an abort, the timeout, a clean close) the whole process group is killed, the command's
children with it. The result is the output (its last `MAX_OUTPUT` characters) and the exit status.
"""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any

import anyio

from ..tools import Tool, ToolApi, ToolContext, define_tool

MAX_OUTPUT = 30_000
DEFAULT_TIMEOUT = 300.0


def kill_group(pid: int) -> None:
    """SIGKILL process group `pid` (the command and every child it started); gone already is fine."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run_command(command: str, cwd: str, api: ToolApi) -> str:
    """Run `command` with bash in `cwd`, streaming its output through `api`; its process group is
    killed when this is cancelled."""
    process = await anyio.open_process(["bash", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    output: list[str] = []
    decoder = _Decoder()
    try:
        assert process.stdout is not None
        async for chunk in process.stdout:
            text = decoder.feed(chunk)
            if text:
                output.append(text)
                await api.output(text)
        status = await process.wait()
    finally:
        kill_group(process.pid)  # what it left running in the background goes too
        with anyio.CancelScope(shield=True):
            await process.aclose()
    text = "".join(output) + decoder.feed(b"", final=True)
    if len(text) > MAX_OUTPUT:
        text = f"[... {len(text) - MAX_OUTPUT} characters cut]\n" + text[-MAX_OUTPUT:]
    return f"{text}{'' if not text or text.endswith(chr(10)) else chr(10)}[exit status {status}]"


class _Decoder:
    """UTF-8 across chunk boundaries (a character split between two reads is kept for the next)."""

    def __init__(self) -> None:
        import codecs

        self._d = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes, *, final: bool = False) -> str:
        return self._d.decode(data, final)


def make_bash(root: str, *, approve: bool, timeout: float = DEFAULT_TIMEOUT) -> Tool:
    async def bash(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> str:
        return await run_command(args["command"], root, api)

    return define_tool(
        "bash", f"Run a bash command in the working folder (killed after {timeout:g} s); returns its output and "
        "exit status.",
        {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"],
         "additionalProperties": False},
        replay="unsafe", execute=bash, approval=approve, timeout=timeout)


__all__ = ["DEFAULT_TIMEOUT", "MAX_OUTPUT", "kill_group", "make_bash", "run_command"]
