"""MCP servers as tool sources (an optional extra: `pip install "durable-harness[mcp]"`, the SDK
`mcp` 2.x): their tools appear to the model with their names and schemas, and each call is a
durable tool task like any other.

    from durable import mcp

    async with mcp.connect(mcp.stdio("python", ["notes_server.py"]),
                           mcp.http("http://127.0.0.1:8000/mcp", name="search")) as servers:
        async with durable.open_harness("agent.sqlite", model=model, tools=servers.tools) as h:
            ...

The servers' lifetime wraps the harness's. After a crash the next process connects again, and
the engine's rules apply to a call that was cut off: a `safe` tool runs again, an `unsafe` one
gets "Tool T was interrupted and may have partially run". `connect` states the contract (names,
replay policy, errors, progress, cancellation, tool-list changes). Importing this package does
not import the SDK: `connect` does, through `_servers` (the servers as one tool source),
`_connection` (one server's connection) and `_calls` (one call of a tool).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

from ._specs import (
    CONNECT_TIMEOUT as CONNECT_TIMEOUT,
    DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
    Http as Http,
    MCPCallError as MCPCallError,
    MCPServerError as MCPServerError,
    Replay as Replay,
    Server as Server,
    Stdio as Stdio,
    http as http,
    stdio as stdio,
)


def connect(*servers: Server) -> AbstractAsyncContextManager[MCPServers]:
    """Connect to `servers` (in this order: it decides nothing but the order of `tools`); yields
    an `MCPServers` whose `tools` go to `open_harness`. Use as `async with`; exiting closes every
    connection (stdio servers are asked to exit, then killed). Raises `MCPServerError` (naming the
    server) when a server cannot be started, reached or listed within its `connect_timeout`, and
    `MissingExtra` when `mcp` is not installed. A tool whose input schema durable cannot use is
    left out and named in `servers.skipped`.

    - **Replay policy** from the tool's annotations: `readOnlyHint` or `idempotentHint` true ->
      `"safe"`, otherwise `"unsafe"`; the host overrides it with `replay=` on the server.
    - **Names**: a server's tool keeps its name (characters outside `[A-Za-z0-9_-]` become `_`,
      at most 64). A name offered by two servers is prefixed on every one of them:
      `notes__search`, `web__search` (the server's name, two underscores). The name the model saw
      is what the session stores; it is a function of the servers given here and their tool
      lists, so a reopened session with the same servers resolves the same server and tool. Had
      a collision appeared since, the old bare name resolves to no tool (the model reads "Unknown
      tool"), never to another server.
    - **Errors** are raised from the tool's execute as `MCPCallError` (the model reads "Tool T
      failed: MCPCallError: ..." and the run continues), each naming the server and the tool: a
      result with `isError`, a protocol error, a server that stopped during the call (its process
      exited, its HTTP endpoint went away), a call longer than the server's `timeout`. A server
      that stopped is started (or reached) again by the next call to it.
    - **Progress** notifications become the tool's streamed output (`api.output`, committed
      coalesced), one line each: `[3/10] message`.
    - **Cancellation**: an abort, an interrupt or a clean close cancels the call; the SDK then
      sends the protocol's cancellation (`notifications/cancelled`; on the 2026 streamable HTTP
      wire, the request's stream is closed), so the server stops the work.
    - **Tool-list changes** (`notifications/tools/list_changed`, or a `subscriptions/listen`
      event on 2026-07-28 servers) refresh `servers.tools` and the routing of each name;
      `servers.attach(h)` keeps a running harness offering the current tools from its next model
      request on (`Harness.set_tools`; a removed tool's call gets the server's error); `await
      servers.tools_changed()` tells the host when a list changed."""
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
