"""The generation kind: a run answering a conversation's inputs (`kind`), with its records
(`records`), its failed attempts (`attempts`), deferred answers (`deferred`) and the commits that
start and settle a run (`runs`)."""

from __future__ import annotations

from .kind import GenerationKind
from .records import AttemptFailure, GenerationInput, Phase, Poll, Prepare, Request, Retry, ToolRound

__all__ = ["AttemptFailure", "GenerationInput", "GenerationKind", "Phase", "Poll", "Prepare", "Request", "Retry",
           "ToolRound"]
