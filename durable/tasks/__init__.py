"""The task kinds (generation, tool, compaction, cancel) and the run service the host API uses."""

from __future__ import annotations

from ..engine.kinds import TaskKind
from .cancel import CancelKind
from .compaction import CompactionKind
from .generation import GenerationKind
from .service import Runs
from .tool import ToolKind


def default_kinds() -> tuple[list[TaskKind], Runs]:
    """The standard kinds, wired to cooperate, and the run service over them."""
    compaction = CompactionKind()
    generation = GenerationKind(compaction)
    tool = ToolKind(generation.close_round)
    kinds: list[TaskKind] = [generation, tool, compaction, CancelKind()]
    return kinds, Runs(tool, compaction)


__all__ = ["CancelKind", "CompactionKind", "GenerationKind", "Runs", "ToolKind", "default_kinds"]
