"""`define_tool` and `@tool`: a checked `Tool` from a function (typed or raw) or an explicit
schema. Everything a tool can get wrong is refused here, when it is defined, with a
`ToolDefinitionError` naming the tool, so that a call never meets a bad schema."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, overload

from ..errors import ToolDefinitionError
from .arguments import compile_schema
from .protocol import EMPTY_SCHEMA, AnyExecute, Execute, Replay, Tool
from .schema import typed_call

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

    `name` defaults to the function's name and `description` to its docstring. `execute` is
    told apart by its signature: a typed one (`async def f(city: str, days: int = 1)`) gets its
    schema from its type hints and its arguments converted (`durable.tools.schema`); a raw one,
    `execute(args, api, ctx)` (three positional parameters, the last two unannotated, `Any`,
    `ToolApi` / `ToolContext`), gets the parsed JSON and accepts any object. With `parameters`,
    that schema is used as given and wins over the derived one (it must be a valid Draft 2020-12
    schema of type object)."""
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


__all__ = ["define_tool", "tool"]
