"""MCP servers as tool sources: their tools appear to the model with their names and schemas, and
each call is a durable tool task like any other (an optional extra: `pip install
"durable-harness[mcp]"`, the official SDK `mcp` 2.x).

    from durable import mcp

    async with mcp.connect(mcp.stdio("python", ["notes_server.py"]),
                           mcp.http("http://127.0.0.1:8000/mcp", name="search")) as servers:
        async with durable.open_harness("agent.sqlite", model=model, tools=servers.tools) as h:
            ...

The servers' lifetime wraps the harness's: they are connected (stdio servers started) before it
opens and closed after it closes. After a crash the next process connects again, so the engine's
usual rules apply to a call that was cut off: a `safe` tool runs again, an `unsafe` one gets
"Tool T was interrupted and may have partially run".

- **Replay policy** from the tool's annotations: `readOnlyHint` or `idempotentHint` true ->
  `"safe"`, otherwise `"unsafe"`. The host overrides it per tool (`replay={"search": "safe"}` on
  the server, keyed by the server's own tool name) or for all of a server's tools
  (`replay="unsafe"`).
- **Names**: a server's tool keeps its name (characters outside `[A-Za-z0-9_-]` become `_`, at
  most 64). A name offered by two servers is prefixed on every one of them: `notes__search`,
  `web__search` (the server's name, two underscores). The name the model saw is what the session
  stores; it is a function of the servers given to `connect` and their tool lists, so a reopened
  session with the same servers resolves the same server and tool. Had a collision appeared since,
  the old bare name resolves to no tool (the model reads "Unknown tool"), never to another server.
- **Errors** are raised from the tool's execute as `MCPCallError` (the model reads "Tool T failed:
  MCPCallError: ..." and the run continues), each naming the server and the tool: a result with
  `isError`, a protocol error, a server that stopped during the call (its process exited, its
  HTTP endpoint went away), a call longer than the server's `timeout`. A server that stopped is
  started (or reached) again by the next call to it.
- **Progress** notifications become the tool's streamed output (`api.output`, committed
  coalesced), one line each: `[3/10] message`.
- **Cancellation**: an abort, an interrupt or a clean close cancels the call; the SDK then sends
  the protocol's cancellation (`notifications/cancelled`; on the 2026 streamable HTTP wire, the
  request's stream is closed), so the server stops the work.
- **Tool-list changes** (`notifications/tools/list_changed`, or a `subscriptions/listen` event on
  2026-07-28 servers) refresh `servers.tools` and the routing of each name; `servers.attach(h)`
  keeps a running harness offering the current tools from its next model request on
  (`Harness.set_tools`; a removed tool's call gets the server's error); `await
  servers.tools_changed()` tells the host when a list changed.

`connect` raises `MCPServerError` (naming the server) when a server cannot be started, reached or
listed; a tool whose input schema durable cannot use is left out and named in `servers.skipped`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Literal, TextIO

from attrs import field, frozen

from ..errors import DurableError

Replay = Literal["safe", "unsafe"]

DEFAULT_TIMEOUT = 300.0
"""Seconds a tool call may take before it is cancelled and answered with an error."""

CONNECT_TIMEOUT = 30.0
"""Seconds to start or reach a server, complete the handshake and list its tools."""


class MCPServerError(DurableError):
    """A server could not be started, reached, or listed when connecting. Names the server."""


class MCPCallError(DurableError):
    """A call of an MCP tool ended in an error; the model reads the message as the tool's error
    result. Names the server and the tool."""


@frozen
class Stdio:
    """A server run as a subprocess, spoken to over its stdin/stdout (see `stdio`)."""

    command: str
    args: tuple[str, ...] = ()
    name: str = ""
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    replay: Mapping[str, Replay] | Replay | None = None
    timeout: float | None = DEFAULT_TIMEOUT
    connect_timeout: float = CONNECT_TIMEOUT
    stderr: TextIO | None = field(default=None, eq=False)

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


@frozen
class Http:
    """A server reached over streamable HTTP (see `http`)."""

    url: str
    name: str = ""
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    replay: Mapping[str, Replay] | Replay | None = None
    timeout: float | None = DEFAULT_TIMEOUT
    connect_timeout: float = CONNECT_TIMEOUT

    def describe(self) -> str:
        return self.url


Server = Stdio | Http


def stdio(command: str, args: Sequence[str] = (), *, name: str | None = None, env: Mapping[str, str] | None = None,
          cwd: str | os.PathLike[str] | None = None, replay: Mapping[str, Replay] | Replay | None = None,
          timeout: float | None = DEFAULT_TIMEOUT, connect_timeout: float = CONNECT_TIMEOUT,
          stderr: TextIO | None = None) -> Stdio:
    """A server started as `command args...` and spoken to over stdin/stdout. `name` defaults to
    the script's (or command's) file name without extension. `env` is added to the SDK's small
    default environment (PATH, HOME, USER...). `stderr` receives the server's stderr (default:
    this process's). `timeout` bounds each call (None: no bound). The process is started when
    `connect` enters, again by the next call after it exited, and stopped when `connect` exits."""
    if name is None:
        script = next((a for a in args if not a.startswith("-")), command) if args else command
        name = os.path.splitext(os.path.basename(script))[0] or "server"
    return Stdio(command, tuple(args), name, dict(env) if env is not None else None,
                 os.fspath(cwd) if cwd is not None else None, _replay(replay), timeout, connect_timeout, stderr)


def http(url: str, *, name: str | None = None, headers: Mapping[str, str] | None = None,
         replay: Mapping[str, Replay] | Replay | None = None, timeout: float | None = DEFAULT_TIMEOUT,
         connect_timeout: float = CONNECT_TIMEOUT) -> Http:
    """A server at `url` over streamable HTTP; `headers` go with every request (e.g.
    authorization). `name` defaults to the URL's host."""
    if name is None:
        from urllib.parse import urlsplit

        name = (urlsplit(url).hostname or "server").replace(".", "_")
    return Http(url, name, dict(headers) if headers is not None else None, _replay(replay), timeout, connect_timeout)


def _replay(value: Mapping[str, Replay] | Replay | None) -> Mapping[str, Replay] | Replay | None:
    policies = [value] if isinstance(value, str) else list(value.values()) if value is not None else []
    for policy in policies:
        if policy not in ("safe", "unsafe"):
            raise ValueError(f"replay must be 'safe' or 'unsafe', not {policy!r}")
    return dict(value) if isinstance(value, Mapping) else value


def connect(*servers: Server) -> AbstractAsyncContextManager[MCPServers]:
    """Connect to `servers` (in this order: it decides nothing but the order of `tools`); yields
    an `MCPServers` whose `tools` go to `open_harness`. Use as `async with`; exiting closes every
    connection (stdio servers are asked to exit, then killed). Raises `MCPServerError` when a
    server cannot be started, reached or listed, and `MissingExtra` when `mcp` is not installed."""
    import importlib

    from ..errors import MissingExtra

    try:
        importlib.import_module("mcp")
        from ._servers import MCPServers as _MCPServers
    except ImportError as exc:  # the SDK, or a package it needs, cannot be imported
        detail = None if exc.name == "mcp" else str(exc)
        raise MissingExtra("durable.mcp", "mcp", "mcp", detail) from exc
    return _MCPServers.connect(servers)


if TYPE_CHECKING:
    from ._servers import MCPServers as MCPServers
else:
    def __getattr__(name: str) -> object:
        if name == "MCPServers":
            from ._servers import MCPServers

            return MCPServers
        raise AttributeError(f"module 'durable.mcp' has no attribute {name!r}")

__all__ = ["CONNECT_TIMEOUT", "DEFAULT_TIMEOUT", "Http", "MCPCallError", "MCPServerError", "MCPServers", "Replay",
           "Server", "Stdio", "connect", "http", "stdio"]
