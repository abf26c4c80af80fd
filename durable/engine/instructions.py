"""Instructions: what a generation sends as its system prompt, as a list of sections given to
`open_harness(..., instructions=[...])` after `Settings.system_prompt` (the default first one).

A section is a string, or an async function of a `PrepareContext` returning one (a *dynamic*
section: the date, the user's profile read through `deps`...). Without a dynamic section the
text is the sections joined, rebuilt for each request at no cost. With one, a run assembles its
instructions once, in its `prepare` phase, and commits the text with the move to `request`
(`durable.tasks.generation`). Sections are joined by a blank line; an empty one is left out.
The harness holds sections and never stores them (only the assembled text is committed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Generic

from .._frozen import frozen
from ..errors import HarnessError
from ..tools import DepsT


@frozen
class PrepareContext(Generic[DepsT]):
    """Given to a dynamic instruction section: the run it prepares. `conversation_id`, `task_id`
    (the run's generation task), the run's `inputs` (their texts, in order) and `submission_ids`,
    the harness's `deps` (`open_harness(deps=...)`, never stored; annotate `PrepareContext[MyDeps]`)
    and `now`, the harness clock's time when the run's instructions are assembled."""

    conversation_id: str
    task_id: int
    inputs: tuple[str, ...]
    submission_ids: tuple[str, ...]
    deps: DepsT
    now: float


Section = Callable[[PrepareContext[Any]], Awaitable[str]]
"""A dynamic instruction section: `async def section(ctx: PrepareContext) -> str`."""
Instruction = str | Section
"""One section of the instructions: a string, or a `Section`."""


def checked_instructions(items: Iterable[Instruction]) -> tuple[Instruction, ...]:
    """The sections, checked: each a string or a callable (`HarnessError` otherwise; one that
    returns no awaitable fails its run's prepare, naming it)."""
    out = tuple(items)
    for i, item in enumerate(out):
        if isinstance(item, str):
            continue
        if not callable(item):
            raise HarnessError(f"Instruction {i} is a {type(item).__name__}: give a string or an async function "
                               f"of a durable.PrepareContext")
    return out


def dynamic(items: Sequence[Instruction]) -> bool:
    """Whether any section is code (the run then assembles its instructions in `prepare`)."""
    return any(not isinstance(item, str) for item in items)


def joined(parts: Iterable[str]) -> str:
    """Sections joined by a blank line, the empty ones left out."""
    return "\n\n".join(p for p in parts if p)


def static_text(system_prompt: str, items: Sequence[Instruction]) -> str:
    """The instructions of a harness without dynamic sections: exactly `system_prompt` when
    there are no others."""
    if not items:
        return system_prompt
    return joined([system_prompt, *(i for i in items if isinstance(i, str))])


def section_name(item: object, index: int) -> str:
    """How errors name a section: its function's qualified name, else its place in the list."""
    name = getattr(item, "__qualname__", None) or getattr(type(item), "__qualname__", None)
    return str(name) if name else f"#{index}"


__all__ = ["Instruction", "PrepareContext", "Section", "checked_instructions", "dynamic", "joined", "section_name",
           "static_text"]
