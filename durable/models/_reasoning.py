"""Reasoning in each wire format: read from the provider's stream into `Reasoning` blocks, and
written back exactly as the provider takes it.

- Anthropic (format "anthropic"): `thinking` blocks (text and `signature`) and
  `redacted_thinking` blocks (`data`), sent back unchanged, in order, before the text and
  `tool_use` blocks of their assistant turn. A block that ended without a signature is `partial`.
- OpenAI Responses (format "openai"): `reasoning` output items (`id`, `summary` parts and, asked
  for with `include=["reasoning.encrypted_content"]` when `store=False`, `encrypted_content`),
  sent back as input items before the message and calls they preceded. Their raw reasoning text
  (open models' `reasoning_text`) is kept for people and not sent back: OpenAI refuses it.
- Chat Completions servers (`reasoning_content` or `reasoning` deltas: DeepSeek, vLLM, Ollama,
  LM Studio, llama.cpp): text only (format ""), never sent back.

Only a block of the model's own format that is not `partial` is sent (`sendable_reasoning`).
"""

from __future__ import annotations

from typing import Any

from ..records import Reasoning
from ._sdk import get_field

__all__ = ["ANTHROPIC", "OPENAI", "ResponsesReasoning", "ThinkingBlocks", "anthropic_block", "anthropic_reasoning",
           "chat_reasoning", "output_reasoning", "responses_item", "responses_reasoning"]

ANTHROPIC = "anthropic"
OPENAI = "openai"


# --------------------------------------------------------------------------- Anthropic


def anthropic_reasoning(block: Any) -> Reasoning | None:
    """A whole content block (of a batch result) as reasoning; None for other blocks."""
    kind = get_field(block, "type")
    if kind == "thinking":
        signature = get_field(block, "signature") or None
        return Reasoning(get_field(block, "thinking") or "", ANTHROPIC, signature=signature, partial=signature is None)
    if kind == "redacted_thinking":
        return Reasoning("", ANTHROPIC, redacted=get_field(block, "data") or "")
    return None


def anthropic_block(block: Reasoning) -> dict[str, Any]:
    """A stored block as the Messages API takes it back: unchanged."""
    if block.redacted is not None:
        return {"type": "redacted_thinking", "data": block.redacted}
    return {"type": "thinking", "thinking": block.text, "signature": block.signature}


class ThinkingBlocks:
    """The thinking blocks of one Messages stream, by content block index, in order."""

    def __init__(self) -> None:
        self._open: dict[int, dict[str, Any]] = {}
        self.blocks: list[Reasoning] = []

    def start(self, index: Any, block: Any) -> bool:
        """A `content_block_start`: whether it opened a thinking block."""
        kind = get_field(block, "type")
        if kind not in ("thinking", "redacted_thinking"):
            return False
        self._open[index] = {"type": kind, "text": [get_field(block, "thinking") or ""],
                             "signature": get_field(block, "signature") or "", "data": get_field(block, "data")}
        return True

    def delta(self, index: Any, delta: Any) -> str | None:
        """A `content_block_delta` of an open block: the thinking text it adds (None: none)."""
        block = self._open.get(index)
        if block is None:
            return None
        kind = get_field(delta, "type")
        if kind == "thinking_delta":
            text = get_field(delta, "thinking") or ""
            block["text"].append(text)
            return text or None
        if kind == "signature_delta":
            block["signature"] += get_field(delta, "signature") or ""
        return None

    def stop(self, index: Any) -> bool:
        """A `content_block_stop`: whether it closed a thinking block (now in `blocks`)."""
        block = self._open.pop(index, None)
        if block is None:
            return False
        self.blocks.append(anthropic_reasoning(
            {"type": block["type"], "thinking": "".join(block["text"]), "signature": block["signature"],
             "data": block["data"]}) or Reasoning())
        return True


# --------------------------------------------------------------------------- OpenAI


def responses_reasoning(item: Any) -> Reasoning:
    """A Responses API `reasoning` output item as a block."""
    summary = tuple(get_field(part, "text") or "" for part in get_field(item, "summary") or ())
    text = "".join(get_field(part, "text") or "" for part in get_field(item, "content") or ())
    return Reasoning(text, OPENAI, id=get_field(item, "id") or None,
                     encrypted=get_field(item, "encrypted_content") or None, summary=summary)


def responses_item(block: Reasoning) -> dict[str, Any]:
    """A stored block as a Responses API input item: its id, its summary (required, possibly
    empty) and its encrypted content when it has one."""
    item: dict[str, Any] = {"type": "reasoning", "id": block.id,
                            "summary": [{"type": "summary_text", "text": s} for s in block.summary]}
    if block.encrypted is not None:
        item["encrypted_content"] = block.encrypted
    return item


def chat_reasoning(delta: Any) -> str:
    """The reasoning text of a Chat Completions delta: `reasoning_content` (DeepSeek, vLLM, LM
    Studio, llama.cpp) or `reasoning` (Ollama, OpenRouter, newer vLLM); "" without either."""
    for name in ("reasoning_content", "reasoning"):
        value = get_field(delta, name)
        if isinstance(value, str) and value:
            return value
    return ""


class ResponsesReasoning:
    """The reasoning of one Responses stream: summary and reasoning-text deltas as they come
    (a new part after a blank line, as `reasoning_text` joins them), and the finished
    `reasoning` items in order."""

    DELTAS = frozenset({"response.reasoning_summary_text.delta", "response.reasoning_text.delta"})

    def __init__(self) -> None:
        self.blocks: list[Reasoning] = []
        self._part: tuple[Any, ...] | None = None  # the part the last delta belonged to

    def event(self, kind: Any, event: Any) -> str | None:
        """A stream event: the reasoning text it adds, for the live view (None: none)."""
        if kind in self.DELTAS:
            delta = get_field(event, "delta") or ""
            if not delta:
                return None
            part = (kind, get_field(event, "item_id"), get_field(event, "summary_index"))
            if part != self._part:
                delta, self._part = (delta if self._part is None else f"\n\n{delta}"), part
            return delta
        item = get_field(event, "item")
        if kind == "response.output_item.done" and get_field(item, "type") == "reasoning":
            self.blocks.append(responses_reasoning(item))
        return None


def output_reasoning(output: Any) -> tuple[Reasoning, ...]:
    """The reasoning items of a response's `output`, in order."""
    return tuple(responses_reasoning(item) for item in output or () if get_field(item, "type") == "reasoning")
