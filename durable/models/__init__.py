"""Models: the protocol, the scripted faux model, `FallbackModel` (several models tried in order),
and (imported lazily, as optional extras) the OpenAI, Anthropic and Gemini adapters:
`durable.models.openai`, `durable.models.anthropic`, `durable.models.gemini`."""

from typing import TYPE_CHECKING

from .fallback import FallbackModel
from .protocol import (
    DeferredHandle,
    FinalMessage,
    Model,
    ModelError,
    ModelRequest,
    ReasoningDelta,
    StillRunning,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    UsageEvent,
)

if TYPE_CHECKING:
    from .faux import FauxModel
else:

    def __getattr__(name):  # the faux model imports anyio: loaded on first use (the protocol is plain)
        if name != "FauxModel":
            raise AttributeError(f"module 'durable.models' has no attribute {name!r}")
        from .faux import FauxModel

        globals()["FauxModel"] = FauxModel
        return FauxModel


__all__ = ["DeferredHandle", "FallbackModel", "FauxModel", "FinalMessage", "Model", "ModelError", "ModelRequest",
           "ReasoningDelta", "StillRunning", "TextDelta", "ToolCallEvent", "ToolSpec", "UsageEvent"]
