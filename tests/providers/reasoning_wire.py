"""Streams of a reasoning model in each wire format, for the local fake server: Anthropic
extended thinking (thinking blocks with signature deltas, redacted_thinking blocks), OpenAI
Responses reasoning items (summary deltas, encrypted content) and Chat Completions
`reasoning_content` / `reasoning` deltas. A thought is `("think", [deltas], signature)` or
`("redacted", data)` (Anthropic), `(item_id, [[summary part deltas], ...], encrypted)` (Responses)
or a list of `(field, delta)` (Chat)."""

from __future__ import annotations

from typing import Any

from durable import records as r

from .conftest import Reply, sse_reply
from .test_openai import chat_chunk, chat_stream, response_object


def anthropic_thinking(thoughts: list[tuple], deltas: list[str], calls: tuple[r.ToolCall, ...] = (), *,
                       stop: str | None = "end_turn", usage: tuple[int, int] = (40, 30), end: str = "clean") -> Reply:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": usage[0], "output_tokens": 1}}},
    ]
    index = 0
    for thought in thoughts:
        if thought[0] == "redacted":
            events += [{"type": "content_block_start", "index": index,
                        "content_block": {"type": "redacted_thinking", "data": thought[1]}},
                       {"type": "content_block_stop", "index": index}]
        else:
            _, pieces, signature = thought
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            events += [{"type": "content_block_delta", "index": index,
                        "delta": {"type": "thinking_delta", "thinking": p}} for p in pieces]
            if signature is not None:
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": "signature_delta", "signature": signature}})
                events.append({"type": "content_block_stop", "index": index})
        index += 1
    if deltas:
        events.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
        events += [{"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": d}}
                   for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    for i, call in enumerate(calls, start=index):
        events += [{"type": "content_block_start", "index": i,
                    "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}},
                   {"type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": call.arguments}},
                   {"type": "content_block_stop", "index": i}]
    if stop is not None:
        events += [{"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": usage[1]}},
                   {"type": "message_stop"}]
    return sse_reply(events, end=end)


def responses_reasoning(thoughts: list[tuple], deltas: list[str], calls: tuple[r.ToolCall, ...] = (), *,
                        complete: bool = True, usage: tuple[int, int, int] = (12, 30, 20), end: str = "clean") -> Reply:
    """A Responses stream whose reasoning items come first; `usage` is (input, output, reasoning)."""
    n = iter(range(1000))
    events: list[dict[str, Any]] = [{"type": "response.created", "sequence_number": next(n),
                                     "response": response_object("in_progress", usage=None)}]
    items: list[dict[str, Any]] = []
    for index, (rid, parts, encrypted) in enumerate(thoughts):
        events.append({"type": "response.output_item.added", "sequence_number": next(n), "output_index": index,
                       "item": {"type": "reasoning", "id": rid, "summary": []}})
        for s, pieces in enumerate(parts):
            events.append({"type": "response.reasoning_summary_part.added", "sequence_number": next(n),
                           "item_id": rid, "output_index": index, "summary_index": s,
                           "part": {"type": "summary_text", "text": ""}})
            events += [{"type": "response.reasoning_summary_text.delta", "sequence_number": next(n),
                        "item_id": rid, "output_index": index, "summary_index": s, "delta": p} for p in pieces]
            events.append({"type": "response.reasoning_summary_text.done", "sequence_number": next(n),
                           "item_id": rid, "output_index": index, "summary_index": s, "text": "".join(pieces)})
        item = {"type": "reasoning", "id": rid,
                "summary": [{"type": "summary_text", "text": "".join(p)} for p in parts]}
        if encrypted is not None:
            item["encrypted_content"] = encrypted
        items.append(item)
        if complete:
            events.append({"type": "response.output_item.done", "sequence_number": next(n), "output_index": index,
                           "item": item})
    if not complete:
        return sse_reply(events, end=end)
    first = len(thoughts)
    if deltas:
        events.append({"type": "response.output_item.added", "sequence_number": next(n), "output_index": first,
                       "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress",
                                "content": []}})
        events += [{"type": "response.output_text.delta", "sequence_number": next(n), "item_id": "msg_1",
                    "output_index": first, "content_index": 0, "delta": d, "logprobs": []} for d in deltas]
    for i, call in enumerate(calls, start=first + 1):
        item = {"type": "function_call", "id": f"fc_{call.id}", "call_id": call.id, "name": call.name,
                "arguments": call.arguments, "status": "completed"}
        events.append({"type": "response.output_item.done", "sequence_number": next(n), "output_index": i,
                       "item": item})
    final = response_object(text="".join(deltas), calls=calls, usage=usage[:2])
    final["output"] = items + final["output"]
    final["usage"]["output_tokens_details"]["reasoning_tokens"] = usage[2]
    events.append({"type": "response.completed", "sequence_number": next(n), "response": final})
    return sse_reply(events, end=end)


def chat_reasoning(thought: list[tuple[str, str]], deltas: list[str], calls: tuple[r.ToolCall, ...] = (), *,
                   usage: tuple[int, int, int] = (20, 30, 18), end: str = "clean", done: bool = True) -> Reply:
    """A Chat Completions stream whose reasoning deltas come first; `usage` is (prompt,
    completion, reasoning); ending otherwise than "clean", it stops after the reasoning."""
    chunks = [chat_chunk({"role": "assistant", "content": ""})]
    chunks += [chat_chunk({field: piece}) for field, piece in thought]
    if end != "clean":
        return chat_stream(*chunks, end=end, done=False)
    chunks += [chat_chunk({"content": d}) for d in deltas]
    chunks += [chat_chunk({"tool_calls": [{"index": i, "id": c.id, "type": "function",
                                           "function": {"name": c.name, "arguments": c.arguments}}]})
               for i, c in enumerate(calls)]
    chunks.append(chat_chunk({}, finish="tool_calls" if calls else "stop"))
    chunks.append(chat_chunk(usage={"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                    "total_tokens": usage[0] + usage[1],
                                    "completion_tokens_details": {"reasoning_tokens": usage[2]}}))
    return chat_stream(*chunks, end=end, done=done)
