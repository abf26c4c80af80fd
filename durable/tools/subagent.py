"""Sub-agents: a tool whose call runs a child conversation in the same harness (docs/spec.md §8).

`subagent(name, description, instructions=..., tools=..., model=..., output=...)` makes a `Tool`
whose `agent` is a `Subagent`: the profile its child conversations run with (their system prompt
sections, their own tools, their model, the type of their answer). The call's arguments are one
`task` string, the child's input. Nothing here runs anything: the tool kind starts the child's
run and waits for its answer (`durable.tasks.tool.subagent`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from attrs import field

from .._frozen import frozen
from ..errors import ToolDefinitionError
from ..models.protocol import Model
from .protocol import Tool
from .registry import ToolRegistry
from .schema import output_schema

TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"task": {"type": "string", "description": "What the sub-agent is asked to do: its whole input"}},
    "required": ["task"],
    "additionalProperties": False,
}
"""The arguments of every sub-agent's tool: the child conversation's input."""


@frozen
class Subagent:
    """What a sub-agent's child conversations run with: `instructions` (system prompt sections,
    each a string or an async section of a `PrepareContext`), `tools` (its own: none of the
    parent's unless given), `model` (None: the harness's model) and `output` (the JSON schema
    its answer must match; None: text)."""

    name: str
    instructions: tuple[Any, ...] = ()
    tools: ToolRegistry = field(factory=ToolRegistry, eq=False)
    model: Model | None = field(default=None, eq=False)
    output: dict[str, Any] | None = None


def subagent(name: str, description: str, *, instructions: str | Iterable[Any] = (), tools: Iterable[Tool] = (),
             model: Model | None = None, output: Any = None) -> Tool:
    """A tool that hands its call to a sub-agent: the call starts a child conversation (id
    `"<parent>/<name>-<task id>"`), answers it with the sub-agent's `instructions`, `tools` and
    `model`, and the child's final answer (JSON text for an `output` type) is the tool's result.
    Raises `ToolDefinitionError` naming the sub-agent for a bad name, tools with a name twice or
    an `output` that cannot be a JSON schema."""
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ToolDefinitionError(f"Sub-agent name {name!r} must be letters, digits, '_' or '-'")
    sections = (instructions,) if isinstance(instructions, str) else tuple(instructions)
    try:
        registry = ToolRegistry(tools)
        schema = None if output is None else output_schema(output)
    except ToolDefinitionError as exc:
        raise ToolDefinitionError(f"Sub-agent {name}: {exc}") from None
    agent = Subagent(name, sections, registry, model, schema)
    return Tool(name, description, dict(TASK_SCHEMA), replay="safe", agent=agent)


def agents(tools: Iterable[Tool]) -> Iterator[Subagent]:
    """Every sub-agent reachable from `tools` (theirs, and their tools' own, depth first)."""
    seen: set[int] = set()
    stack = [t for t in tools if t.agent is not None]
    while stack:
        agent = stack.pop(0).agent
        if agent is None or id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        stack.extend(t for t in agent.tools if t.agent is not None)


__all__ = ["TASK_SCHEMA", "Subagent", "agents", "subagent"]
