"""The values of the tool protocol: a `Tool` (what a host defines) and what its `execute` is
given while it runs (`ToolApi`, `ToolContext`). Plain values: a `Tool` is made and checked by
`define_tool` (`durable.tools.define`), never built here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic

from attrs import field
from typing_extensions import TypeVar  # a TypeVar with a default (PEP 696; typing has it from 3.13)

from .._frozen import frozen
from ..models.protocol import ToolSpec
from ..records import Replay

Execute = Callable[[Any, "ToolApi", "ToolContext"], Awaitable[Any]]
AnyExecute = Callable[..., Awaitable[Any]]

DepsT = TypeVar("DepsT", default=Any)
"""The type of a harness's dependencies (`Harness[DepsT]`, `ToolContext[DepsT]`): `Any` unless given."""

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
"""The schema of a tool that takes any object (a raw `execute` without `parameters`)."""


@frozen
class ToolContext(Generic[DepsT]):
    """Given to `execute` with the arguments: which call this is. `task_id` is the tool's task,
    `call_id` the model's call id, `conversation_id` its conversation; `attempt` is 1 on the first
    run and 2, 3... when a safe tool runs again after a crash cut it off (an unsafe tool never
    runs a second time). `deps` is the harness's dependencies (`open_harness(deps=...)`: a
    database client, the user's settings...), never stored; annotate `ToolContext[MyDeps]`."""

    task_id: int
    call_id: str
    conversation_id: str
    attempt: int  # 1 on the first run; 2.. when a safe tool runs again after a crash
    deps: DepsT


ApprovalCheck = Callable[[Any, ToolContext[Any]], bool | Awaitable[bool]]
"""`approval=check` of a tool: `check(args, ctx)` says whether this call needs a person's decision
(`args` is the call's arguments as validated JSON, a dict; it may be `async`)."""


class ToolApi:
    """Given to `execute`; `output()` appends streamed output (committed coalesced);
    `output_sync()` does the same from a plain `def` tool's worker thread."""

    def __init__(self, output: Callable[[str], Awaitable[None]]) -> None:
        self._output = output

    async def output(self, text: str) -> None:
        await self._output(text)

    def output_sync(self, text: str) -> None:
        """`output(text)` from a plain `def` tool (it runs in a worker thread): returns once the
        text is taken. Output of a call that was abandoned (cancelled) is dropped."""
        import anyio.from_thread  # here: reading a session file (`durable inspect`) imports no anyio

        anyio.from_thread.run(self.output, text)


@frozen
class Tool:
    """A tool the model may call. Make one with `define_tool` or `@tool`, which check it.

    `convert` turns validated JSON arguments into what `execute` receives (a typed tool's
    keyword arguments); None passes the parsed JSON as is. `validator` is the compiled schema
    (compiled on each call when None).

    `approval`: True, every call waits for a person's decision before it runs; a callable
    (`ApprovalCheck`), only the calls it says so of; False, none. `max_retries`: how many times
    per run the model may be asked to call it again (`durable.RetryTool`, invalid arguments).
    `timeout`: seconds a call may run, from its stored start (None: no limit). `threaded`: `execute`
    runs a plain `def` in a worker thread (`durable.tools.threads`): a call cancelled is abandoned,
    and counts as cut off mid-run whatever `replay` says. `agent`: set on a sub-agent's tool
    (`durable.subagent`): a call runs a child conversation instead of `execute`."""

    name: str
    description: str
    parameters: dict[str, Any] = field(factory=lambda: dict(EMPTY_SCHEMA))
    replay: Replay = "unsafe"
    execute: Execute | None = None
    client: bool = False
    convert: Callable[[Any], Any] | None = field(default=None, eq=False, repr=False)
    validator: Any = field(default=None, eq=False, repr=False)
    approval: bool | ApprovalCheck = False
    max_retries: int = 1
    timeout: float | None = None
    threaded: bool = False
    agent: Any = field(default=None, eq=False, repr=False)  # a `durable.tools.subagent.Subagent`

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)


__all__ = ["EMPTY_SCHEMA", "AnyExecute", "ApprovalCheck", "DepsT", "Execute", "Replay", "Tool", "ToolApi",
           "ToolContext"]
