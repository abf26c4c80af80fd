"""Fake provider prompt caches for the local server (`conftest.FakeServer`): responders that answer
every Messages or Responses request with a short text and the usage a caching provider reports.

Anthropic (`AnthropicCache`): a request's prefix is its tools, its system blocks, then its
messages' content blocks, in that order; a block marked `cache_control` is a breakpoint. The
prefix up to the last breakpoint that a previous request wrote (and that is at least
`min_tokens` long) is read from the cache (`cache_read_input_tokens`); the prefix up to the last
breakpoint, past what was read, is written (`cache_creation_input_tokens`); the rest is
`input_tokens`. Tokens are counted as a block's canonical JSON (without its `cache_control`)
over 4 characters.

OpenAI (`OpenAICache`): requests with the same `prompt_cache_key` share a cache; the longest
prefix (of the instructions and the input items, in 128-token steps, from 1,024 tokens) that a
previous request of that key sent is read (`input_tokens_details.cached_tokens`). Without a key
a request lands on one of `machines` caches by its number, as requests spread over machines.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .conftest import Recorded, Reply, sse_reply


def tokens(value: Any) -> int:
    return max(1, -(-len(json.dumps(value, sort_keys=True)) // 4))


def _blocks(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    """The prefix of a Messages body as (block without its mark, marked) pairs, in cache order."""
    out: list[tuple[Any, bool]] = []

    def add(block: Any) -> None:
        if isinstance(block, dict) and "cache_control" in block:
            out.append(({k: v for k, v in block.items() if k != "cache_control"}, True))
        else:
            out.append((block, False))

    for tool in body.get("tools") or ():
        add(tool)
    system = body.get("system")
    for block in ([{"type": "text", "text": system}] if isinstance(system, str) else system or ()):
        add(block)
    for message in body.get("messages") or ():
        content = message["content"]
        for block in ([{"type": "text", "text": content}] if isinstance(content, str) else content):
            add({"role": message["role"], **block} if isinstance(block, dict) else block)
    return out


class AnthropicCache:
    """A responder for POST /v1/messages that models Anthropic's prompt cache (module docstring)."""

    def __init__(self, answer: str = "Noted.", min_tokens: int = 1024) -> None:
        self.answer = answer
        self.min_tokens = min_tokens
        self.cached: set[str] = set()
        self.usages: list[dict[str, int]] = []

    def __call__(self, request: Recorded) -> Reply:
        blocks = _blocks(request.body)
        digest = hashlib.sha256()
        counted = 0
        points: list[tuple[str, int]] = []  # (prefix hash, prefix tokens) at each breakpoint
        for block, marked in blocks:
            digest.update(json.dumps(block, sort_keys=True).encode())
            counted += tokens(block)
            if marked:
                points.append((digest.copy().hexdigest(), counted))
        total = counted
        read = next((n for h, n in reversed(points) if h in self.cached), 0)
        written = 0
        for h, n in points:
            if n >= self.min_tokens and h not in self.cached:
                self.cached.add(h)
        if points and points[-1][1] >= self.min_tokens and points[-1][1] > read:
            written = points[-1][1] - read
        usage = {"input_tokens": total - read - written, "cache_read_input_tokens": read,
                 "cache_creation_input_tokens": written}
        self.usages.append(usage)
        out = tokens(self.answer)
        return sse_reply([
            {"type": "message_start", "message": {
                "id": f"msg_{len(self.usages)}", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [], "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": self.answer}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": out}},
            {"type": "message_stop"},
        ])


class OpenAICache:
    """A responder for POST /v1/responses that models OpenAI's prompt cache (module docstring)."""

    def __init__(self, answer: str = "Noted.", min_tokens: int = 1024, step: int = 128, machines: int = 4) -> None:
        self.answer = answer
        self.min_tokens, self.step, self.machines = min_tokens, step, machines
        self.seen: dict[str, list[list[int]]] = {}  # cache -> the prefix token counts of each request
        self.prefixes: dict[str, set[str]] = {}
        self.usages: list[dict[str, int]] = []

    def __call__(self, request: Recorded) -> Reply:
        body = request.body
        where = body.get("prompt_cache_key") or f"machine-{len(self.usages) % self.machines}"
        items = [{"instructions": body.get("instructions")}, *body.get("input", ())]
        known = self.prefixes.setdefault(where, set())
        digest = hashlib.sha256()
        counted = 0
        read = 0
        for item in items:
            digest.update(json.dumps(item, sort_keys=True).encode())
            counted += tokens(item)
            h = digest.hexdigest()
            if h in known:
                read = counted
            known.add(h)
        read = read // self.step * self.step if read >= self.min_tokens else 0
        usage = {"input_tokens": counted, "output_tokens": tokens(self.answer)}
        self.usages.append({"input_tokens": counted, "cached_tokens": read})
        response = {"id": f"resp_{len(self.usages)}", "object": "response", "created_at": 1, "model": "gpt-test",
                    "status": "completed", "output": [
                        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                         "content": [{"type": "output_text", "text": self.answer, "annotations": []}]}],
                    "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                    "usage": {**usage, "total_tokens": counted + usage["output_tokens"],
                              "input_tokens_details": {"cached_tokens": read},
                              "output_tokens_details": {"reasoning_tokens": 0}}}
        return sse_reply([
            {"type": "response.output_text.delta", "sequence_number": 0, "item_id": "msg_1", "output_index": 0,
             "content_index": 0, "delta": self.answer, "logprobs": []},
            {"type": "response.completed", "sequence_number": 1, "response": response},
        ])
