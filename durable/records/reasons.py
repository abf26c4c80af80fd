"""Why things ended: the closed vocabularies of the records' reason fields.

Each is a `Literal` of the values a stored reason may hold; the codec refuses any other.
"""

from __future__ import annotations

from typing import Literal

ModelStopReason = Literal["stop", "tool_use", "length", "error"]
"""How a model's response ended (`durable.models.FinalMessage.stop_reason`)."""
StopReason = Literal[ModelStopReason, "aborted"]
"""How a stored assistant entry ended: what a model may return, or "aborted" for a partial kept
after an interruption."""
UnansweredReason = Literal["model_error", "interrupted", "restart_limit", "aborted", "faulted", "tool_round_limit",
                           "storage_error",
                           "prepare_failed", "output_invalid", "usage_limit", "archived"]
"""Why a run ended without an answer (`Unanswered.reason`, `RunFailure.reason`). The last four:
an instruction section raised or timed out (`prepare_failed`), the answer never matched the
requested output schema (`output_invalid`), a usage limit would be passed (`usage_limit`), the
host archived the conversation (`archived`: an expected exit, like `aborted`, never charged)."""
FailureReason = Literal["exception", "model_error", "interrupted", "restart_limit", "timeout", "tool_round_limit",
                        "storage_error",
                        "prepare_failed", "output_invalid", "usage_limit",
                        # tool approval: a person denied the call, or no decision came in time
                        "denied"]
"""Why a task failed or faulted (`ErrorDetail.reason`)."""

__all__ = ["FailureReason", "ModelStopReason", "StopReason", "UnansweredReason"]
