"""One MCP server's connection: its task (connect, list, hold), its tool listing kept fresh, and
the `lost` event a call races. Imports the `mcp` SDK.

Each server's connection runs in its own task in `connect`'s task group, so that a server that
dies (an HTTP transport failing, a process exiting) ends that connection only, never the host's
tasks. No call runs inside that task (see `_calls`). A connection that was lost is started again
by the next call (`Connection.connected`); once `connect` has exited, none is.
"""

from __future__ import annotations

import math
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from types import TracebackType
from typing import Any, Protocol

import anyio
import anyio.abc
import httpx2
import mcp.types as mt
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import CONNECTION_CLOSED
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ._specs import Http, MCPCallError, MCPServerError, Server, Stdio

_MAX_PAGES = 100  # tools/list pages followed, so that a paginator that never ends cannot hang a listing


class Owner(Protocol):
    """What a connection needs of the servers it belongs to (`MCPServers`): whether `connect` has
    exited, the task group a connection task runs in, and `_rebuild` after each new listing."""

    closed: bool
    task_group: anyio.abc.TaskGroup

    def _rebuild(self) -> None: ...


class Live:
    """One connection's lifetime: `stop` asks it to end, `lost` is set once it has."""

    def __init__(self) -> None:
        self.client: Client | None = None
        self.stop = anyio.Event()
        self.lost = anyio.Event()
        self.reason = "the connection was closed"


class Connection:
    """One server: its spec, the name it is known by, its latest tool listing and, while it is
    connected, its `live` connection."""

    def __init__(self, owner: Owner, spec: Server, name: str) -> None:
        self.owner = owner
        self.spec = spec
        self.name = name
        self.listing: list[mt.Tool] = []
        self.live: Live | None = None
        self._lock = anyio.Lock()
        self._list_changed = anyio.Event()

    @property
    def label(self) -> str:
        return f"MCP server {self.name!r}"

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, list, then hold the connection until it is lost or `connect` exits. Raises
        `MCPServerError` if it cannot get as far as the first listing."""
        spec = self.spec
        live = Live()
        started = False
        scope = anyio.CancelScope(deadline=anyio.current_time() + spec.connect_timeout)
        try:
            with scope:
                async with AsyncExitStack() as stack:
                    transport = await self._transport(stack, live)
                    client = await stack.enter_async_context(
                        Client(transport, message_handler=self._on_message, cache=None))
                    live.client = client
                    await self._list(client)
                    scope.deadline = math.inf
                    self.live = live
                    self.owner._rebuild()
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(self._follow_changes, client)
                        started = True
                        task_status.started()
                        await live.stop.wait()
                        tg.cancel_scope.cancel()
        except Exception as exc:  # noqa: BLE001 - whatever ended the connection is reported, not raised into the host
            if not started:
                why = describe(exc)
                leaf = _leaf(exc)
                if isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED and isinstance(spec, Stdio):
                    why = "the process closed its output before the handshake (did it exit? see its stderr)"
                verb = "started" if isinstance(spec, Stdio) else "reached"
                raise MCPServerError(f"{self.label} ({spec.describe()}) could not be {verb}: {why}") from None
            live.reason = f"the connection failed: {describe(exc)}"
        finally:
            live.lost.set()
        if not started:
            raise MCPServerError(f"{self.label} ({spec.describe()}) did not complete the handshake and list its "
                                 f"tools within {spec.connect_timeout:g} s")

    async def _transport(self, stack: AsyncExitStack, live: Live) -> Any:
        spec = self.spec

        def closed() -> None:
            live.reason = self.closed_reason()
            live.stop.set()

        if isinstance(spec, Stdio):
            params = StdioServerParameters(command=spec.command, args=list(spec.args),
                                           env=dict(spec.env) if spec.env is not None else None, cwd=spec.cwd)
            return _watched(stdio_client(params, errlog=spec.stderr or sys.stderr), closed)
        assert isinstance(spec, Http)
        http_client = None
        if spec.headers:
            http_client = await stack.enter_async_context(
                httpx2.AsyncClient(headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0)))
        return _watched(streamable_http_client(spec.url, http_client=http_client), closed)

    async def _list(self, client: Client) -> None:
        tools: list[mt.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        self.listing = tools

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification):  # handshake-era servers
            self._list_changed.set()

    async def _follow_changes(self, client: Client) -> None:
        """Refresh the listing on each tools-list-changed notification (2025 servers) or
        `subscriptions/listen` event (2026-07-28 servers that offer it)."""
        async with anyio.create_task_group() as tg:
            caps = client.server_capabilities.tools
            if caps is not None and caps.list_changed and client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                tg.start_soon(self._listen, client)
            while True:
                await self._list_changed.wait()
                self._list_changed = anyio.Event()
                await self._refresh(client)

    async def _listen(self, client: Client) -> None:
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _ in subscription:
                    self._list_changed.set()
        except Exception:  # noqa: BLE001 - no more change events; the tools already listed stay usable
            return

    async def _refresh(self, client: Client) -> None:
        try:
            await self._list(client)
        except Exception:  # noqa: BLE001 - a failed refresh keeps the previous listing
            return
        self.owner._rebuild()

    async def connected(self, tool: str) -> Live:
        """The live connection, started again if it was lost or is ending (asked to stop); `MCPCallError`
        (naming `tool`, which is then not called) once `connect` has exited or when the server cannot
        be started."""
        live = self.live
        if live is not None and not live.stop.is_set() and not live.lost.is_set():
            return live
        async with self._lock:
            if self.owner.closed:
                raise MCPCallError(f"{self.label} is closed (durable.mcp.connect has exited); tool {tool} was not "
                                   "called")
            live = self.live
            if live is not None and live.stop.is_set():
                # A call found the server gone and asked its connection to end: wait until it
                # has (its transport closed), so that this call goes to a new one, not to it.
                await live.lost.wait()
            if live is None or live.lost.is_set():
                try:
                    await self.owner.task_group.start(self.run)
                except MCPServerError as exc:
                    raise MCPCallError(f"{exc}; tool {tool} was not called") from None
                live = self.live
            assert live is not None
            return live

    def closed_reason(self) -> str:
        if isinstance(self.spec, Stdio):
            return "the server closed the connection; its process may have exited"
        return "the server closed the connection"


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    """The first leaf of an exception (group), as `Type: message`."""
    exc = _leaf(exc)
    if isinstance(exc, MCPError):
        return f"{exc.message} (JSON-RPC error {exc.code})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _WatchedRead:
    """A transport's read stream that calls `on_end` when the server's side ends (EOF), so that
    a server that exits while idle is noticed before the next call."""

    def __init__(self, inner: Any, on_end: Any) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except anyio.EndOfStream:
            self._on_end()
            raise
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise
        return item

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                        exc_tb: TracebackType | None) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def _watched(transport: Any, on_end: Any) -> AsyncIterator[Any]:
    async with transport as (read, write):
        yield _WatchedRead(read, on_end), write


__all__ = ["Connection", "Live", "Owner", "describe"]
