"""One MCP tool as a durable tool: the `Tool` made from a server's listing (its replay policy),
and what a call does on each way it can end. Imports the `mcp` SDK.

A call is made from the tool task, never inside the connection's task, and races the
connection's `lost` event, so that a call in flight when the connection goes gets an error
instead of waiting forever. Every ending but a result raises `MCPCallError` naming the server
and the tool; the caller's cancellation cancels the call (the SDK sends the protocol's
cancellation). Progress notifications become the tool's streamed output, a line each. Image
blocks of a result reach the model as images (`durable.Image`).
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import anyio
import mcp.types as mt
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from ..content import Image
from ..errors import AttachmentError
from ..tools import Tool, ToolApi, ToolContext, define_tool
from ._connection import Connection, describe
from ._specs import MCPCallError, Replay, Stdio


def server_tool(connection: Connection, exposed: str, tool: mt.Tool) -> Tool:
    """A durable tool for the server's `tool`, offered to the model as `exposed`. Raises
    `ToolDefinitionError` for an input schema durable cannot use."""
    server_name = tool.name

    async def execute(args: Any, api: ToolApi, ctx: ToolContext) -> Any:
        return await call(connection, server_name, exposed, args, api)

    description = tool.description or tool.title or ""
    return define_tool(exposed, description, dict(tool.input_schema), replay=_replay(connection, tool),
                       execute=execute)


def _replay(connection: Connection, tool: mt.Tool) -> Replay:
    override = connection.spec.replay
    if isinstance(override, str):
        return override
    if override is not None and tool.name in override:
        return override[tool.name]
    hints = tool.annotations
    if hints is not None and (hints.read_only_hint is True or hints.idempotent_hint is True):
        return "safe"
    return "unsafe"


async def call(connection: Connection, name: str, exposed: str, args: Any,
               api: ToolApi) -> str | list[str | Image]:
    """Call the server's tool `name` (offered as `exposed`); its text (its parts when it holds
    images: `_content`), or `MCPCallError`. A
    cancellation of the caller cancels the call (the SDK sends the protocol's cancellation)."""
    what = f"tool {name}" + (f" (offered as {exposed})" if exposed != name else "")
    live = await connection.connected(name)
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

    timeout = connection.spec.timeout
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
        raise MCPCallError(_stopped(connection, what, live.reason))
    if call_scope.cancelled_caught:
        raise MCPCallError(f"{connection.label}: {what} did not answer within {timeout:g} s; the call was cancelled")
    if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
        live.reason = connection.closed_reason()
        live.stop.set()
        raise MCPCallError(_stopped(connection, what, live.reason))
    if isinstance(error, MCPError):
        raise MCPCallError(f"{connection.label} refused the call of {what}: {error.message} (JSON-RPC error "
                           f"{error.code})")
    if error is not None:
        raise MCPCallError(f"{connection.label}: the call of {what} failed: {describe(error)}")
    assert result is not None
    if result.is_error:
        raise MCPCallError(f"{connection.label}: {what} returned an error: {_text(result) or '(no message)'}")
    return _content(result)


def _stopped(connection: Connection, what: str, reason: str) -> str:
    again = "started" if isinstance(connection.spec, Stdio) else "reached"
    return (f"{connection.label} stopped during the call of {what} ({reason}); the call may have partially run. "
            f"The next call to this server gets it {again} again")


def _content(result: mt.CallToolResult) -> str | list[str | Image]:
    """A tool result for the model: its text (`_text`), or, when it holds images, its parts with
    each image a `durable.Image` (sent to the model as an image, stored once per session)."""
    parts = _parts(result, images=True)
    return parts if any(isinstance(p, Image) for p in parts) else _text(result)


def _text(result: mt.CallToolResult) -> str:
    """A tool result as text: text blocks as they are, other blocks named in brackets; the
    structured content as JSON when there is nothing else."""
    parts = [p for p in _parts(result, images=False) if isinstance(p, str)]
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(parts)


def _parts(result: mt.CallToolResult, *, images: bool) -> list[str | Image]:
    """The blocks of a result: text as it is, others named in brackets; with `images`, an image
    block that decodes as a `durable.Image`."""
    parts: list[str | Image] = []
    for block in result.content:
        if isinstance(block, mt.TextContent):
            parts.append(block.text)
        elif images and isinstance(block, mt.ImageContent) and (image := _image(block)) is not None:
            parts.append(image)
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
    return parts


def _image(block: mt.ImageContent) -> Image | None:
    try:
        return Image(base64.b64decode(block.data, validate=True), media_type=block.mime_type)
    except (ValueError, AttachmentError):
        return None


__all__ = ["call", "server_tool"]
