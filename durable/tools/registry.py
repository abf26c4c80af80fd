"""`ToolRegistry`: the tools a harness offers, by name. A name is offered once: a registry with
a name twice is refused (`ToolDefinitionError`), and `replace` leaves the registry as it was."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..errors import ToolDefinitionError
from ..models.protocol import ToolSpec
from .protocol import Tool


class ToolRegistry:
    """The tools a harness offers, by name, in the order given (the order the model sees)."""

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


__all__ = ["ToolRegistry"]
