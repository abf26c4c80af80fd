"""The task kinds, listed once (`default_kinds`), and the run service the host API uses.

A kind is one module (or package) defining a `durable.engine.kinds.TaskKind` subclass; defining
the class registers its records with the codec. Adding a kind to every harness is one line
below; a host adds its own with `open_harness(..., kinds=[...])`.
"""

from __future__ import annotations

from ..engine.kinds import TaskKind
from .cancel import CancelInput, CancelKind
from .compaction import CompactionInput, CompactionKind
from .generation import GenerationInput, GenerationKind
from .host import StandardRunService
from .tool import ToolInput, ToolKind, ToolProgress


def default_kinds() -> tuple[list[TaskKind], StandardRunService]:
    """The standard kinds, wired to cooperate, and the run service over them."""
    compaction = CompactionKind()
    generation = GenerationKind(compaction)
    tool = ToolKind(generation)
    kinds: list[TaskKind] = [generation, tool, compaction, CancelKind()]
    return kinds, StandardRunService(tool, compaction)


__all__ = ["CancelInput", "CancelKind", "CompactionInput", "CompactionKind", "GenerationInput", "GenerationKind",
           "StandardRunService", "ToolInput", "ToolKind", "ToolProgress", "default_kinds"]
