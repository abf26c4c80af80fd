"""The live side of `durable.mcp` (imports the `mcp` SDK): one connection task per server, the
tools built from the servers' listings, and what a call does on each way it can end.

Each server's connection runs in its own task in `connect`'s task group, so that a server that
dies (an HTTP transport failing, a process exiting) ends that connection only, never the host's
tasks. A call never runs inside that task: it is made from the tool task, and races the
connection's `lost` event, so a call in flight when the connection goes gets an error instead of
waiting forever. The next call to a server whose connection was lost starts it again.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import AsyncIterator, Iterable, Sequence
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

from ..errors import ToolDefinitionError
from ..tools import Tool, ToolApi, ToolContext, define_tool
from . import Http, MCPCallError, MCPServerError, Replay, Server, Stdio

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_\-]")
_MAX_PAGES = 100  # tools/list pages followed, so that a paginator that never ends cannot hang a listing


class _TakesTools(Protocol):
    """A harness, as `MCPServers.attach` uses it."""

    def set_tools(self, tools: Iterable[Tool]) -> None: ...


class MCPServers:
    """The connected servers (from `durable.mcp.connect`). `tools` is what to give the harness;
    `skipped` names the tools left out (a schema durable cannot use), with the reason."""

    def __init__(self, specs: Sequence[Server], task_group: anyio.abc.TaskGroup) -> None:
        names = [_clean(spec.name or "server") for spec in specs]
        self._connections = [_Connection(self, spec, name) for spec, name in zip(specs, names, strict=True)]
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
        """Names, policies and routes from every connection's latest listing (see the package
        docstring for the naming rule)."""
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
                    tools.append(connection.tool(unique, tool))
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


class _Live:
    """One connection's lifetime: `stop` asks it to end, `lost` is set once it has."""

    def __init__(self) -> None:
        self.client: Client | None = None
        self.stop = anyio.Event()
        self.lost = anyio.Event()
        self.reason = "the connection was closed"


class _Connection:
    def __init__(self, owner: MCPServers, spec: Server, name: str) -> None:
        self.owner = owner
        self.spec = spec
        self.name = name
        self.listing: list[mt.Tool] = []
        self.live: _Live | None = None
        self._lock = anyio.Lock()
        self._list_changed = anyio.Event()

    @property
    def label(self) -> str:
        return f"MCP server {self.name!r}"

    # ------------------------------------------------------------------ the connection task

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, list, then hold the connection until it is lost or `connect` exits. Raises
        `MCPServerError` if it cannot get as far as the first listing."""
        spec = self.spec
        live = _Live()
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
                why = _describe(exc)
                leaf = _leaf(exc)
                if isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED and isinstance(spec, Stdio):
                    why = "the process closed its output before the handshake (did it exit? see its stderr)"
                verb = "started" if isinstance(spec, Stdio) else "reached"
                raise MCPServerError(f"{self.label} ({spec.describe()}) could not be {verb}: {why}") from None
            live.reason = f"the connection failed: {_describe(exc)}"
        finally:
            live.lost.set()
        if not started:
            raise MCPServerError(f"{self.label} ({spec.describe()}) did not complete the handshake and list its "
                                 f"tools within {spec.connect_timeout:g} s")

    async def _transport(self, stack: AsyncExitStack, live: _Live) -> Any:
        spec = self.spec

        def closed() -> None:
            live.reason = self._closed_reason()
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

    # ------------------------------------------------------------------ tools and calls

    def tool(self, exposed: str, tool: mt.Tool) -> Tool:
        """A durable tool for the server's `tool`, offered to the model as `exposed`."""
        server_name = tool.name
        connection = self

        async def execute(args: Any, api: ToolApi, ctx: ToolContext) -> Any:
            return await connection.call(server_name, exposed, args, api)

        description = tool.description or tool.title or ""
        return define_tool(exposed, description, dict(tool.input_schema), replay=self._replay(tool), execute=execute)

    def _replay(self, tool: mt.Tool) -> Replay:
        override = self.spec.replay
        if isinstance(override, str):
            return override
        if override is not None and tool.name in override:
            return override[tool.name]
        hints = tool.annotations
        if hints is not None and (hints.read_only_hint is True or hints.idempotent_hint is True):
            return "safe"
        return "unsafe"

    async def _connected(self, tool: str) -> _Live:
        live = self.live
        if live is not None and not live.lost.is_set():
            return live
        async with self._lock:
            if self.owner.closed:
                raise MCPCallError(f"{self.label} is closed (durable.mcp.connect has exited); tool {tool} was not "
                                   "called")
            live = self.live
            if live is None or live.lost.is_set():
                try:
                    await self.owner.task_group.start(self.run)
                except MCPServerError as exc:
                    raise MCPCallError(f"{exc}; tool {tool} was not called") from None
                live = self.live
            assert live is not None
            return live

    def _closed_reason(self) -> str:
        if isinstance(self.spec, Stdio):
            return "the server closed the connection; its process may have exited"
        return "the server closed the connection"

    def _stopped(self, what: str, reason: str) -> str:
        again = "started" if isinstance(self.spec, Stdio) else "reached"
        return (f"{self.label} stopped during the call of {what} ({reason}); the call may have partially run. "
                f"The next call to this server gets it {again} again")

    async def call(self, name: str, exposed: str, args: Any, api: ToolApi) -> str:
        """Call the server's tool `name`; its text, or `MCPCallError`. A cancellation of the
        caller cancels the call (the SDK sends the protocol's cancellation)."""
        what = f"tool {name}" + (f" (offered as {exposed})" if exposed != name else "")
        live = await self._connected(name)
        client = live.client
        assert client is not None
        send, receive = anyio.create_memory_object_stream[str](math.inf)

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            count = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
            try:
                send.send_nowait(f"[{count}] {message}\n" if message else f"[{count}]\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass  # a notification that arrived after the result

        async def pump() -> None:
            async with receive:
                async for text in receive:
                    await api.output(text)

        timeout = self.spec.timeout
        call_scope = anyio.CancelScope(deadline=anyio.current_time() + timeout if timeout is not None else math.inf)
        watch_scope = anyio.CancelScope()
        lost_during = False

        async def watch() -> None:
            nonlocal lost_during
            with watch_scope:
                await live.lost.wait()
                lost_during = True
                call_scope.cancel()

        result: mt.CallToolResult | None = None
        error: Exception | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            tg.start_soon(watch)
            with send:
                with call_scope:
                    try:
                        result = await client.call_tool(name, args if isinstance(args, dict) else {},
                                                        progress_callback=on_progress)
                    except Exception as exc:  # noqa: BLE001 - each kind is described below
                        error = exc
                watch_scope.cancel()
        if lost_during:
            raise MCPCallError(self._stopped(what, live.reason))
        if call_scope.cancelled_caught:
            raise MCPCallError(f"{self.label}: {what} did not answer within {timeout:g} s; the call was cancelled")
        if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
            live.reason = self._closed_reason()
            live.stop.set()
            raise MCPCallError(self._stopped(what, live.reason))
        if isinstance(error, MCPError):
            raise MCPCallError(f"{self.label} refused the call of {what}: {error.message} (JSON-RPC error "
                               f"{error.code})")
        if error is not None:
            raise MCPCallError(f"{self.label}: the call of {what} failed: {_describe(error)}")
        assert result is not None
        text = _text(result)
        if result.is_error:
            raise MCPCallError(f"{self.label}: {what} returned an error: {text or '(no message)'}")
        return text


# ---------------------------------------------------------------------- helpers


def _clean(name: str) -> str:
    """A name durable accepts: [A-Za-z_][A-Za-z0-9_-]*, at most 64 characters."""
    cleaned = _NAME_CHARS.sub("_", name) or "_"
    if not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "_" + cleaned
    return cleaned[:64]


def _text(result: mt.CallToolResult) -> str:
    """A tool result as text: text blocks as they are, other blocks named in brackets; the
    structured content as JSON when there is nothing else."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mt.TextContent):
            parts.append(block.text)
        elif isinstance(block, (mt.ImageContent, mt.AudioContent)):
            parts.append(f"[{block.type} {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]")
        elif isinstance(block, mt.ResourceLink):
            parts.append(f"[resource {block.uri}]")
        elif isinstance(block, mt.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mt.TextResourceContents):
                parts.append(resource.text)
            else:
                parts.append(f"[resource {resource.uri} ({resource.mime_type or 'binary'}), not shown]")
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(parts)


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
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
