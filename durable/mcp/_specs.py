"""What a host declares and catches about MCP servers: how to reach each one (`Stdio`, `Http`,
made by `stdio()` and `http()`, with its replay overrides and timeouts) and the two errors.
Plain values: nothing here imports the `mcp` SDK, so `durable.mcp` can be imported without it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Literal, TextIO

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
    this process's). `timeout` bounds each call (None: no bound). `replay` overrides the policy
    the tools' annotations give (`readOnlyHint` or `idempotentHint` true: `"safe"`, otherwise
    `"unsafe"`): per tool (`{"search": "safe"}`, by the server's own tool name) or for all of the
    server's tools (`"unsafe"`). The process is started when `connect` enters, again by the next
    call after it exited, and stopped when `connect` exits."""
    if name is None:
        script = next((a for a in args if not a.startswith("-")), command) if args else command
        name = os.path.splitext(os.path.basename(script))[0] or "server"
    return Stdio(command, tuple(args), name, dict(env) if env is not None else None,
                 os.fspath(cwd) if cwd is not None else None, _replay(replay), timeout, connect_timeout, stderr)


def http(url: str, *, name: str | None = None, headers: Mapping[str, str] | None = None,
         replay: Mapping[str, Replay] | Replay | None = None, timeout: float | None = DEFAULT_TIMEOUT,
         connect_timeout: float = CONNECT_TIMEOUT) -> Http:
    """A server at `url` over streamable HTTP; `headers` go with every request (e.g.
    authorization). `name` defaults to the URL's host; `replay` and `timeout` as for `stdio`. It
    is reached when `connect` enters, and again by the next call after its endpoint went away."""
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


__all__ = ["CONNECT_TIMEOUT", "DEFAULT_TIMEOUT", "Http", "MCPCallError", "MCPServerError", "Replay", "Server",
           "Stdio", "http", "stdio"]
