"""Tools: how a host defines a tool the model may call, how a call's arguments are checked, and
what a running tool is given. The engine runs tools (`durable.tasks.tool`); nothing here does, and
nothing here imports the engine, the task kinds or the stores.

A `Tool` has a name, a description, a JSON schema of its arguments (Draft 2020-12), a replay
policy and an `execute`. `replay="unsafe"` (the default): a call cut off by a crash is never run
again; `"safe"`: it may run again, below the restart limit. A client tool (`client=True`) has no
`execute`: the host runs it and submits the result.

`define_tool` and `@tool` (`define`) take a typed `execute`, whose signature gives the schema and
whose arguments arrive converted to their types (`schema`), or a raw `execute(args, api, ctx)`
given the parsed JSON; an explicit `parameters` schema wins. A schema is checked when the tool is
defined (`ToolDefinitionError` naming the tool); each call's arguments are validated before the
tool runs (`arguments`): a mismatch, invalid JSON or too deep a nesting raises `ToolArgumentError`,
which the model reads as an error result.

`execute` (async, or a plain `def` run in a worker thread: `threads`) streams with `await
api.output(text)` (committed coalesced), may be cancelled (an abort, an interrupt, a clean close,
its `timeout`) and returns a string or any JSON value; what it raises is an error result the model
reads (`durable.RetryTool`: it may call again, `max_retries` times a run). `approval` asks a person.
"""

from .arguments import MAX_DEPTH as MAX_DEPTH, ArgumentError as ArgumentError, parse_arguments as parse_arguments
from .define import define_tool as define_tool, tool as tool
from .protocol import (
    EMPTY_SCHEMA as EMPTY_SCHEMA,
    AnyExecute as AnyExecute,
    ApprovalCheck as ApprovalCheck,
    DepsT as DepsT,
    Execute as Execute,
    Replay as Replay,
    Tool as Tool,
    ToolApi as ToolApi,
    ToolContext as ToolContext,
)
from .registry import ToolRegistry as ToolRegistry

__all__ = [
    "EMPTY_SCHEMA",
    "MAX_DEPTH",
    "AnyExecute",
    "ApprovalCheck",
    "ArgumentError",
    "DepsT",
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
