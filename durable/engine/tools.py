"""The tool protocol: how a host defines tools, and how a running tool talks back.

A tool has a name, a description, a JSON schema for its arguments, a replay policy and an
`execute(args, api, ctx)` coroutine. `replay="unsafe"` (the default) means a call cut off by a
crash is never run again; `"safe"` means it may run again (below the restart limit). A client
tool (`client=True`) has no `execute`: the host runs it and submits the result.

`execute` streams output with `await api.output(text)` (committed coalesced), may be cancelled
(an abort, an interrupt or a clean close), and returns a string or any JSON value. Raising an
exception turns into an error result the model can read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Literal

from attrs import field, frozen

from ..errors import ToolDefinitionError
from ..models.protocol import ToolSpec

Execute = Callable[[Any, "ToolApi", "ToolContext"], Awaitable[Any]]
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")


@frozen
class ToolContext:
    task_id: int
    call_id: str
    conversation_id: str
    attempt: int  # 1 on the first run; 2.. when a safe tool runs again after a crash


class ToolApi:
    """Given to `execute`; `output()` appends streamed output (committed coalesced)."""

    def __init__(self, output: Callable[[str], Awaitable[None]]) -> None:
        self._output = output

    async def output(self, text: str) -> None:
        await self._output(text)


@frozen
class Tool:
    name: str
    description: str
    parameters: dict[str, Any] = field(factory=lambda: {"type": "object", "properties": {}})
    replay: Literal["safe", "unsafe"] = "unsafe"
    execute: Execute | None = None
    client: bool = False

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)


def define_tool(
    name: str,
    description: str,
    parameters: dict[str, Any] | None = None,
    *,
    replay: Literal["safe", "unsafe"] = "unsafe",
    execute: Execute | None = None,
    client: bool = False,
) -> Tool:
    """Define a tool. Raises `ToolDefinitionError` for a bad name, schema or policy."""
    if not _NAME.match(name):
        raise ToolDefinitionError(f"Tool name {name!r} is not valid (letters, digits, _ and -, at most 64)")
    if replay not in ("safe", "unsafe"):
        raise ToolDefinitionError(f"Tool {name}: replay must be 'safe' or 'unsafe', not {replay!r}")
    params = parameters if parameters is not None else {"type": "object", "properties": {}}
    if not isinstance(params, dict) or params.get("type", "object") != "object":
        raise ToolDefinitionError(f"Tool {name}: parameters must be a JSON schema of type 'object'")
    if client and execute is not None:
        raise ToolDefinitionError(f"Tool {name}: a client tool is run by the host and has no execute")
    if not client and execute is None:
        raise ToolDefinitionError(f"Tool {name}: execute is required (or client=True)")
    return Tool(name, description, params, replay, execute, client)


def tool(name: str | None = None, description: str | None = None, parameters: dict[str, Any] | None = None,
         *, replay: Literal["safe", "unsafe"] = "unsafe") -> Callable[[Execute], Tool]:
    """Decorator form of `define_tool`: the function's name and docstring are the defaults."""

    def wrap(fn: Execute) -> Tool:
        return define_tool(name or fn.__name__, description or (fn.__doc__ or "").strip(), parameters,
                           replay=replay, execute=fn)

    return wrap


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self._tools:
                raise ToolDefinitionError(f"Tool {t.name} is defined twice")
            self._tools[t.name] = t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    def __iter__(self):
        return iter(self._tools.values())


# --------------------------------------------------------------------------- argument checking


class ArgumentError(ValueError):
    pass


def parse_arguments(tool: Tool, raw: str) -> Any:
    """Parse and check a call's arguments; raises `ArgumentError` with a sentence the model can
    act on. Checks the common JSON-schema keywords: type, properties, required, enum, items,
    additionalProperties (false)."""
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise ArgumentError(f"Tool {tool.name}: the arguments are not valid JSON ({exc})") from None
    problems: list[str] = []
    _check(args, tool.parameters, "arguments", problems)
    if problems:
        raise ArgumentError(f"Tool {tool.name}: " + "; ".join(problems))
    return args


_TYPES: dict[str, Any] = {
    "object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
    "integer": int, "number": (int, float),
}


def _check(value: Any, schema: dict[str, Any], where: str, problems: list[str]) -> None:
    expected = schema.get("type")
    if expected is not None:
        kinds = expected if isinstance(expected, list) else [expected]
        ok = any(
            isinstance(value, _TYPES.get(k, object)) and not (k in ("integer", "number") and isinstance(value, bool))
            for k in kinds
        )
        if not ok:
            problems.append(f"{where} must be of type {' or '.join(kinds)}, got {type(value).__name__}")
            return
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where} must be one of {schema['enum']!r}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{where}.{key} is required")
        for key, sub in value.items():
            if key in props:
                _check(sub, props[key], f"{where}.{key}", problems)
            elif schema.get("additionalProperties") is False:
                problems.append(f"{where}.{key} is not an accepted argument")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _check(item, schema["items"], f"{where}[{i}]", problems)
