"""The tool protocol: how a host defines tools, how a call's arguments are checked, and how a
running tool talks back.

A tool has a name, a description, a JSON schema for its arguments (Draft 2020-12), a replay
policy and an `execute`. `replay="unsafe"` (the default) means a call cut off by a crash is never
run again; `"safe"` means it may run again (below the restart limit). A client tool
(`client=True`) has no `execute`: the host runs it and submits the result.

A tool is written in one of two forms; `define_tool` and `@tool` tell them apart by the signature:

- **typed**: `async def get_weather(city: str, days: Annotated[int, "1 to 14"] = 1) -> str`. The
  name, the description (the docstring) and the schema come from the function (see
  `durable.engine.tool_schema`); each argument arrives converted to its annotated type (attrs classes and
  dataclasses as instances); parameters annotated `ToolApi` / `ToolContext` are passed in by type.
- **raw**: `async def execute(args, api, ctx)` (three positional parameters, the last two
  unannotated, `Any`, `ToolApi` / `ToolContext`): `args` is the parsed JSON, the schema is the
  `parameters` given (an object that accepts anything when none is).

An explicit `parameters` schema is always possible and wins over the derived one. Every schema is
checked when the tool is defined (`ToolDefinitionError` naming the tool), and every call's
arguments are validated with `jsonschema` before the tool runs, so every keyword is enforced
(`maximum`, `pattern`, `maxLength`, `anyOf`, `$ref`, `format`...). A mismatch, invalid JSON or arguments
nested deeper than `MAX_DEPTH` raise `ToolArgumentError`: the model reads its message (the JSON
path and the failed keyword) as an error result and the run continues.

`execute` streams output with `await api.output(text)` (committed coalesced), may be cancelled
(an abort, an interrupt or a clean close), and returns a string or any JSON value (a typed tool
may also return attrs/dataclass instances). Raising an exception turns into an error result the
model can read.

This module makes and checks tools (`define_tool`, `@tool`, `ToolRegistry`) and is where the
protocol is imported from; the values are written in `durable.engine.tool_protocol`, the schema
derivation from type hints in `durable.engine.tool_schema`, and the checks of schemas and
arguments (`parse_arguments`) in `durable.engine.tool_arguments`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, overload

from ..errors import ToolArgumentError, ToolDefinitionError
from ..models.protocol import ToolSpec
from .tool_arguments import MAX_DEPTH, compile_schema, parse_arguments
from .tool_protocol import EMPTY_SCHEMA, AnyExecute, Execute, Replay, Tool, ToolApi, ToolContext
from .tool_schema import typed_call

ArgumentError = ToolArgumentError  # the name the tool task catches

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")


def define_tool(
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    *,
    replay: Replay = "unsafe",
    execute: AnyExecute | None = None,
    client: bool = False,
) -> Tool:
    """Define a tool; raises `ToolDefinitionError` (naming the tool) for a bad name, schema,
    signature or policy.

    `name` defaults to the function's name and `description` to its docstring. Without
    `parameters`, a typed `execute` gets its schema from its signature; a raw one
    (`execute(args, api, ctx)`) accepts any object. With `parameters`, that schema is used as
    given (it must be a valid Draft 2020-12 schema of type object)."""
    if name is None:
        if execute is None:
            raise ToolDefinitionError("A tool needs a name (or an execute function to take it from)")
        name = getattr(execute, "__name__", "")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ToolDefinitionError(f"Tool name {name!r} is not valid (letters, digits, _ and -, at most 64)")
    if replay not in ("safe", "unsafe"):
        raise ToolDefinitionError(f"Tool {name}: replay must be 'safe' or 'unsafe', not {replay!r}")
    if client and execute is not None:
        raise ToolDefinitionError(f"Tool {name}: a client tool is run by the host and has no execute")
    if not client and execute is None:
        raise ToolDefinitionError(f"Tool {name}: execute is required (or client=True)")
    if description is None:
        description = (inspect.getdoc(execute) or "") if execute is not None else ""
    convert: Callable[[Any], Any] | None = None
    run: Execute | None = execute
    if execute is not None:
        typed = typed_call(name, execute)
        if typed is not None:
            convert, run = typed.convert, typed.execute
            if parameters is None:
                parameters = typed.schema
    params = parameters if parameters is not None else dict(EMPTY_SCHEMA)
    validator = compile_schema(name, params)
    return Tool(name, description, params, replay, run, client, convert, validator)


@overload
def tool(name: AnyExecute, /) -> Tool: ...


@overload
def tool(name: str | None = None, description: str | None = None, parameters: dict[str, Any] | None = None,
         *, replay: Replay = "unsafe") -> Callable[[AnyExecute], Tool]: ...


def tool(name: str | AnyExecute | None = None, description: str | None = None,
         parameters: dict[str, Any] | None = None, *, replay: Replay = "unsafe") -> Tool | Callable[[AnyExecute], Tool]:
    """Decorator form of `define_tool`: `@tool` or `@tool(name, description, parameters, replay=)`.
    The function's name and docstring are the defaults; its signature gives the schema."""
    if callable(name):
        return define_tool(execute=name)

    def wrap(fn: AnyExecute) -> Tool:
        return define_tool(name, description, parameters, replay=replay, execute=fn)

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

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def replace(self, tools: Iterable[Tool]) -> None:
        """Offer `tools` instead, from the next look-up on; nothing changes if a name is twice."""
        self._tools = ToolRegistry(tools)._tools



__all__ = [
    "MAX_DEPTH",
    "AnyExecute",
    "ArgumentError",
    "Execute",
    "Replay",
    "Tool",
    "ToolApi",
    "ToolContext",
    "ToolRegistry",
    "define_tool",
    "parse_arguments",
    "tool",
]
