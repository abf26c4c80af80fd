"""The task kinds: generation, tool and compaction."""

from .compaction import CompactionKind
from .generation import GenerationKind
from .tool import ToolKind


def default_kinds() -> dict:
    return {"generation": GenerationKind(), "tool": ToolKind(), "compaction": CompactionKind()}


__all__ = ["CompactionKind", "GenerationKind", "ToolKind", "default_kinds"]
