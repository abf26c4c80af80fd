"""The connected MCP servers as one tool source (`MCPServers`, from `durable.mcp.connect`): the
names the model sees, the route from each name to a server and its tool, and the harnesses kept
offering the current tools. Imports the `mcp` SDK.

The naming rule (see `connect`) is a function of the servers given and their latest listings
only, so that a reopened session with the same servers resolves each stored name to the same
server and tool; a name that became ambiguous resolves to no tool, never to another server.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Protocol

import anyio
import anyio.abc

from ..errors import ToolDefinitionError
from ..tools import Tool
from ._calls import server_tool
from ._connection import Connection
from ._specs import MCPServerError, Server

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_\-]")


class _TakesTools(Protocol):
    """A harness, as `MCPServers.attach` uses it."""

    def set_tools(self, tools: Iterable[Tool]) -> None: ...


class MCPServers:
    """The connected servers (from `durable.mcp.connect`). `tools` is what to give the harness;
    `skipped` names the tools left out (a schema durable cannot use), with the reason."""

    def __init__(self, specs: Sequence[Server], task_group: anyio.abc.TaskGroup) -> None:
        names = [_clean(spec.name or "server") for spec in specs]
        self._connections = [Connection(self, spec, name) for spec, name in zip(specs, names, strict=True)]
        self.task_group = task_group
        self.closed = False
        self.tools: tuple[Tool, ...] = ()
        self.skipped: tuple[str, ...] = ()
        self.routes: dict[str, tuple[str, str]] = {}  # exposed name -> (server name, the server's tool name)
        self._changed = anyio.Event()
        self._attached: list[_TakesTools] = []

    def attach(self, harness: _TakesTools) -> None:
        """Keep `harness` offering the servers' current tools: each change of a server's tool
        list reaches its next model request (`Harness.set_tools`)."""
        self._attached.append(harness)
        harness.set_tools(self.tools)

    @classmethod
    @asynccontextmanager
    async def connect(cls, specs: Sequence[Server]) -> AsyncIterator[MCPServers]:
        names = [_clean(spec.name or "server") for spec in specs]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise MCPServerError(f"Two MCP servers are named {name!r} ({specs[names.index(name)].describe()} and "
                                     f"{specs[i].describe()}); give one of them another name=")
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:
            servers = cls(specs, tg)
            try:
                try:
                    for connection in servers._connections:  # one at a time: the first failure is the one raised
                        await tg.start(connection.run)
                    servers._rebuild()
                except MCPServerError as exc:
                    failure = exc
                else:
                    try:
                        yield servers
                    except Exception as exc:  # noqa: BLE001 - the host's own error: raised below, as it is
                        failure = exc
            finally:
                servers.closed = True
                tg.cancel_scope.cancel()
        if failure is not None:  # raised outside the task group, so that it is not wrapped in an ExceptionGroup
            raise failure

    async def tools_changed(self) -> tuple[Tool, ...]:
        """Wait until a server's tool list changes (what `tools` offers, or how a name is
        routed); returns the new `tools`."""
        await self._changed.wait()
        return self.tools

    def _rebuild(self) -> None:
        """Names, policies and routes from every connection's latest listing (the naming rule is
        in `connect`'s docstring)."""
        listings = [(c, list(c.listing)) for c in self._connections]
        bases = [[_clean(t.name) for t in tools] for _, tools in listings]
        owners: dict[str, set[int]] = {}
        for i, names in enumerate(bases):
            for base in names:
                owners.setdefault(base, set()).add(i)
        taken: set[str] = set()
        tools: list[Tool] = []
        skipped: list[str] = []
        routes: dict[str, tuple[str, str]] = {}
        for i, (connection, listing) in enumerate(listings):
            for base, tool in zip(bases[i], listing, strict=True):
                name = base if len(owners[base]) == 1 else _clean(f"{connection.name}__{base}")
                unique, n = name, 2
                while unique in taken:
                    unique, n = f"{name[:60]}_{n}", n + 1
                taken.add(unique)
                try:
                    tools.append(server_tool(connection, unique, tool))
                except ToolDefinitionError as exc:
                    skipped.append(f"MCP server {connection.name!r}, tool {tool.name}: {exc}")
                    continue
                routes[unique] = (connection.name, tool.name)
        new = tuple(tools)
        if [(t.spec, t.replay) for t in new] != [(t.spec, t.replay) for t in self.tools] or routes != self.routes:
            self.tools, self.skipped, self.routes = new, tuple(skipped), routes
            for harness in self._attached:
                harness.set_tools(self.tools)
            self._changed.set()
            self._changed = anyio.Event()


def _clean(name: str) -> str:
    """A name durable accepts: [A-Za-z_][A-Za-z0-9_-]*, at most 64 characters."""
    cleaned = _NAME_CHARS.sub("_", name) or "_"
    if not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "_" + cleaned
    return cleaned[:64]


__all__ = ["MCPServers"]
