"""Prompt caching: where Anthropic cache breakpoints go, and a conversation's cache key.

Anthropic caches a request's prefix (tools, then system, then messages) up to a block marked
`cache_control`, at most 4 marks a request. `mark_anthropic` places them on a Messages body: the
last tool, the system prompt, the newest message (the request's last user-side message: it stays
in every later request of the conversation) and the user-side message that ended the request
before it (the last one before the newest assistant message), so the next request reads from the
cache everything up to the newest mark the previous one wrote. Only user-side blocks (text, tool
results) are marked: a conversation's entries never change once committed, so these prefixes
are stable until a compaction starts the context anew.
"""

from __future__ import annotations

import hashlib
from typing import Any

__all__ = ["BREAKPOINTS", "EPHEMERAL", "cache_key", "mark_anthropic"]

BREAKPOINTS = 4
"""Anthropic's limit of `cache_control` marks in one request."""

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}


def cache_key(location: str, conversation_id: str) -> str:
    """A conversation's prompt cache key: its id hashed with the session's location (no path or
    id is sent to the provider), the same in every process that opens the session there."""
    digest = hashlib.sha256(f"{location}\0{conversation_id}".encode()).hexdigest()
    return f"durable-{digest[:32]}"


def _mark_last_block(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]
        return True
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        content[-1] = {**content[-1], "cache_control": dict(EPHEMERAL)}
        return True
    return False


def mark_anthropic(params: dict[str, Any]) -> None:
    """Place cache breakpoints on a Messages body `params`, in place (see the module docstring)."""
    used = 0
    if params.get("tools"):
        params["tools"] = [*params["tools"][:-1], {**params["tools"][-1], "cache_control": dict(EPHEMERAL)}]
        used += 1
    system = params.get("system")
    if isinstance(system, str) and system:
        params["system"] = [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]
        used += 1
    messages: list[dict[str, Any]] = params.get("messages") or []
    targets: list[int] = []
    if messages and messages[-1].get("role") == "user":
        targets.append(len(messages) - 1)
        assistants = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
        if assistants:
            before = [i for i in range(assistants[-1]) if messages[i].get("role") == "user"]
            if before:
                targets.append(before[-1])
    for index in targets:
        if used >= BREAKPOINTS:
            break
        message = dict(messages[index])
        if isinstance(message.get("content"), list):
            message["content"] = list(message["content"])
        if _mark_last_block(message):
            messages[index] = message
            used += 1
