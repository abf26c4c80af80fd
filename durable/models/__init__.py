"""Models: the protocol, the scripted faux model, and (imported lazily, as optional extras) the
OpenAI and Anthropic adapters: `durable.models.openai`, `durable.models.anthropic`."""

from .faux import FauxModel
from .protocol import (
    DeferredHandle,
    FinalMessage,
    Model,
    ModelError,
    ModelRequest,
    StillRunning,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    UsageEvent,
)

__all__ = ["DeferredHandle", "FauxModel", "FinalMessage", "Model", "ModelError", "ModelRequest",
           "StillRunning", "TextDelta", "ToolCallEvent", "ToolSpec", "UsageEvent"]
