"""Gemini's wire format, for `durable.models.gemini`: conversation records to `contents`, streamed
`GenerateContentResponse` chunks back to text, calls, thoughts and usage, and Gemini's error
details (`google.rpc` status names, `RetryInfo`, `ErrorInfo` reasons) to a classified `ModelError`.

Plain data in and out (dicts as the REST API spells them, in the SDK's snake_case field names; SDK
objects are read with `get_field`), so this module imports no SDK. Thought signatures are opaque
bytes on the wire and base64 text here: `part_signature` and `signature_bytes` convert, and a
signature goes back on the part it came with (a call's by its id, the text's as the text part's).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ..errors import UnsupportedModelSetting
from ..records import (
    AssistantEntry,
    CompactionEntry,
    Entry,
    ModelStopReason,
    Reasoning,
    TextPart,
    ToolCall,
    ToolResultEntry,
    Usage,
    UserEntry,
)
from ..records.model_settings import ModelSettings
from ._sdk import SUMMARY_PREFIX, get_field
from .content import gemini_parts, tool_text
from .errors import classify_status
from .protocol import ErrorKind, FinalMessage, ModelError, ToolSpec
from .scrub import Secrets

__all__ = ["Reply", "gemini_contents", "gemini_error", "gemini_settings", "gemini_usage", "thought_signatures"]

PROVIDER = "google"
FORMAT = "google"
"""The reasoning format whose signatures Gemini takes back."""

_STOP: dict[str, ModelStopReason] = {"STOP": "stop", "MAX_TOKENS": "length"}


def _object(arguments: str) -> dict[str, Any]:
    """A tool call's JSON arguments as the object Gemini wants (`{}` unless they are one)."""
    try:
        value = json.loads(arguments)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def signature_bytes(signature: str) -> bytes | None:
    """A stored (base64) thought signature as the bytes the SDK sends; None if it is not base64."""
    try:
        return base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return None


def part_signature(part: Any) -> str | None:
    """A part's thought signature as base64 text (the SDK gives bytes), or None."""
    value = get_field(part, "thought_signature")
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii") if value else None
    return value if isinstance(value, str) and value else None


# --------------------------------------------------------------------------- records -> wire


def thought_signatures(entry: AssistantEntry) -> dict[str, str]:
    """The thought signatures to send back with `entry`'s parts: a call's id (or "" for the
    text) to its signature. They are read from the entry's reasoning blocks of format "google"
    that are complete (`id` naming the call, `signature`), when the entry has any: entries
    without reasoning records send no signature (Gemini 2.x accepts that; Gemini 3 wants the
    signatures of the current tool loop)."""
    found: dict[str, str] = {}
    for block in getattr(entry, "reasoning", ()):
        signature = get_field(block, "signature")
        if get_field(block, "format") == FORMAT and signature and not get_field(block, "partial"):
            found[get_field(block, "id") or ""] = signature
    return found


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    value = signature_bytes(signature) if signature else None
    return {**part, "thought_signature": value} if value else part


UNSIGNED = base64.b64encode(b"skip_thought_signature_validator").decode("ascii")
"""What Gemini 3 takes on a function call that has no signature of its own (a call another
model made, or one stored without its signature): the documented value that skips validation."""
_SIGNS_CALLS = re.compile(r"^(?:models/)?gemini-(?:[3-9]|[1-9][0-9])")


def signs_calls(model: str) -> bool:
    """Whether `model` is Gemini 3 or later, which refuses a tool loop whose calls lack signatures."""
    return bool(_SIGNS_CALLS.match(model))


def _model_content(entry: AssistantEntry, unsigned: str | None) -> dict[str, Any] | None:
    signatures = thought_signatures(entry)
    if unsigned and entry.tool_calls and not any(c.id in signatures for c in entry.tool_calls):
        signatures[entry.tool_calls[0].id] = unsigned  # Gemini signs the first call of a turn only
    parts: list[dict[str, Any]] = []
    if entry.text or "" in signatures:
        parts.append(_signed({"text": entry.text}, signatures.get("")))
    for call in entry.tool_calls:
        parts.append(_signed({"function_call": {"id": call.id, "name": call.name, "args": _object(call.arguments)}},
                             signatures.get(call.id)))
    return {"role": "model", "parts": parts} if parts else None  # Gemini refuses a content without parts


def gemini_contents(messages: Sequence[Entry], unsigned: str | None = None,
                    attachments: Mapping[str, bytes] | None = None) -> list[dict[str, Any]]:
    """The `contents` of a `generateContent` request for a conversation. Consecutive user-side
    entries are one user content, function responses first (they answer the model's calls), then
    the images and files of tool results and inputs (`attachments`: their bytes by sha256).
    `unsigned`: the signature put on the first call of a model turn none of whose calls has one
    (`UNSIGNED` for Gemini 3 and later, see `signs_calls`)."""
    blobs = attachments or {}
    out: list[dict[str, Any]] = []
    responses: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []

    def flush_user() -> None:
        if responses or texts:
            out.append({"role": "user", "parts": responses + texts})
            responses.clear()
            texts.clear()

    for entry in messages:
        if isinstance(entry, UserEntry):
            texts.extend(gemini_parts(entry.parts, blobs) if entry.parts else [{"text": entry.text}])
        elif isinstance(entry, CompactionEntry):
            texts.append({"text": SUMMARY_PREFIX + entry.summary})
        elif isinstance(entry, ToolResultEntry):
            result = tool_text(entry)
            answer = {"error": result} if entry.is_error else {"output": result}
            responses.append({"function_response": {"id": entry.call_id, "name": entry.tool_name,
                                                    "response": answer}})
            texts.extend(gemini_parts([p for p in entry.parts if not isinstance(p, TextPart)], blobs))
        elif isinstance(entry, AssistantEntry) and (turn := _model_content(entry, unsigned)) is not None:
            flush_user()
            out.append(turn)
    flush_user()
    return out


# --------------------------------------------------------------------------- wire -> records


def gemini_usage(usage: Any) -> Usage:
    """A `usageMetadata`: the prompt (with the tool-use prompt; its cached part as cache reads)
    and the answer (candidates and thoughts; the thoughts as reasoning). Gemini's counts are
    running totals, so the last one read is the response's."""
    thoughts = get_field(usage, "thoughts_token_count") or 0
    prompt = (get_field(usage, "prompt_token_count") or 0) + (get_field(usage, "tool_use_prompt_token_count") or 0)
    return Usage(prompt, (get_field(usage, "candidates_token_count") or 0) + thoughts, reasoning_tokens=thoughts,
                 cache_read_tokens=get_field(usage, "cached_content_token_count") or 0)


@attrs.define
class Reply:
    """A response read chunk by chunk: `read` takes one chunk and returns the text and calls it
    added. `thoughts`: (text, signature, call id) per thought or signed part, in order: a
    thought summary's text, or the signature of the call (or of the text, with call id None)."""

    call_prefix: str = "call"
    text: list[str] = attrs.field(factory=list)
    calls: list[ToolCall] = attrs.field(factory=list)
    thoughts: list[tuple[str, str | None, str | None]] = attrs.field(factory=list)
    usage: Usage | None = None
    finish: str | None = None
    blocked: str | None = None
    new_thoughts: list[str] = attrs.field(factory=list)  # thought text the last chunk added

    def read(self, chunk: Any) -> tuple[list[str], list[ToolCall]]:
        """The text and calls `chunk` added (its thoughts: `thoughts`, `new_thoughts`)."""
        self.new_thoughts = []
        texts: list[str] = []
        calls: list[ToolCall] = []
        if get_field(chunk, "usage_metadata") is not None:
            self.usage = gemini_usage(get_field(chunk, "usage_metadata"))
        self.blocked = _name(get_field(get_field(chunk, "prompt_feedback"), "block_reason")) or self.blocked
        for candidate in (get_field(chunk, "candidates") or [])[:1]:
            for part in get_field(get_field(candidate, "content"), "parts") or []:
                signature = part_signature(part)
                call = get_field(part, "function_call")
                if call is not None:
                    calls.append(self._call(call))
                    if signature:
                        self.thoughts.append(("", signature, calls[-1].id))
                elif get_field(part, "thought"):
                    self.thoughts.append((get_field(part, "text") or "", signature, None))
                    if get_field(part, "text"):
                        self.new_thoughts.append(get_field(part, "text"))
                else:
                    if get_field(part, "text"):
                        texts.append(get_field(part, "text"))
                    if signature:
                        self.thoughts.append(("", signature, None))
            self.finish = _name(get_field(candidate, "finish_reason")) or self.finish
        self.text += texts
        return texts, calls

    def _call(self, call: Any) -> ToolCall:
        """A function call; one without an id (Gemini 2.x sends none) gets `<prefix>-<n>`,
        unique in the conversation as the attempt's key is."""
        arguments = get_field(call, "args")
        made = ToolCall(get_field(call, "id") or f"{self.call_prefix}-{len(self.calls) + 1}",
                        get_field(call, "name") or "", json.dumps(arguments if arguments is not None else {}))
        self.calls.append(made)
        return made

    def final(self) -> FinalMessage | None:
        """The final message, or None when the stream ended before a finish reason (cut off)."""
        usage = self.usage or Usage()
        text = "".join(self.text)
        if self.blocked:
            return FinalMessage(text, "error", (), usage, error=f"Gemini blocked the prompt: {self.blocked}")
        if self.finish is None:
            return None
        stop = _STOP.get(self.finish)
        if stop is None:
            return FinalMessage(text, "error", (), usage, error=f"Gemini stopped the response: {self.finish}")
        reasoning = tuple(Reasoning(thought, FORMAT, signature=signature, id=call_id)
                          for thought, signature, call_id in self.thoughts)
        if self.calls and stop == "stop":
            return FinalMessage(text, "tool_use", tuple(self.calls), usage, reasoning=reasoning)
        return FinalMessage(text, stop, (), usage, reasoning=reasoning)


def _name(value: Any) -> str | None:
    """An enum field (`FinishReason.STOP`) or a plain string as its name."""
    if value is None:
        return None
    name = getattr(value, "value", value)
    return str(name) if name and name != "FINISH_REASON_UNSPECIFIED" and name != "BLOCKED_REASON_UNSPECIFIED" else None


# --------------------------------------------------------------------------- errors

_STATUS_KIND: dict[str, ErrorKind] = {
    "UNAUTHENTICATED": "auth",
    "PERMISSION_DENIED": "auth",
    "RESOURCE_EXHAUSTED": "rate_limit",  # per-minute limits say "exceeded your current quota" too
    "DEADLINE_EXCEEDED": "timeout",
}
_CONTEXT = re.compile(r"input token count .* exceeds|exceeds the maximum number of tokens", re.IGNORECASE)


def _details(body: Any) -> list[Any]:
    error = body.get("error") if isinstance(body, Mapping) else None
    details = (error if isinstance(error, Mapping) else body if isinstance(body, Mapping) else {}).get("details")
    return list(details) if isinstance(details, list) else []


def _retry_delay(details: list[Any]) -> str | None:
    """`RetryInfo.retryDelay` ("13s", "0.5s") in seconds, as a retry-after header would say it."""
    for detail in details:
        delay = detail.get("retryDelay") if isinstance(detail, Mapping) else None
        if isinstance(delay, str) and (match := re.fullmatch(r"\s*([0-9.]+)s\s*", delay)):
            return match.group(1)
    return None


def gemini_error(status: int | None, body: Any, headers: Any, secrets: Secrets) -> ModelError:
    """The classified `ModelError` for a Gemini error: its HTTP status (or the code in the body),
    its JSON body (`{"error": {"code", "message", "status", "details"}}`) and headers. Gemini
    says what the status alone does not: a bad key is a 400 whose `ErrorInfo.reason` is
    `API_KEY_INVALID` (auth), a prompt over the context window is a 400 naming the token count
    (context overflow), a 429 is a rate limit whose wait is in `RetryInfo` (not a header)."""
    error = body.get("error") if isinstance(body, Mapping) else None
    inner = error if isinstance(error, Mapping) else body if isinstance(body, Mapping) else {}
    name = inner.get("status") if isinstance(inner.get("status"), str) else None
    code = inner.get("code")
    status = status if status is not None else code if isinstance(code, int) else None
    details = _details(body)
    reasons = {d.get("reason") for d in details if isinstance(d, Mapping)}
    message = str(inner.get("message") or "")
    kind: ErrorKind | None = _STATUS_KIND.get(name or "")
    if "API_KEY_INVALID" in reasons or "api key not valid" in message.lower():
        kind = "auth"
    elif _CONTEXT.search(message):
        kind = "context_overflow"
    elif status == 429:
        kind = "rate_limit"
    if not (headers and (headers.get("retry-after") or headers.get("retry-after-ms"))):
        delay = _retry_delay(details)
        headers = {"retry-after": delay} if delay is not None else headers
    return classify_status(status, body, provider=PROVIDER, headers=headers, api_key=secrets, default="server",
                           kind=kind)


# --------------------------------------------------------------------------- settings


GEMINI_LEVELS = ("low", "high")  # `thinking_level` (Gemini 3): what `reasoning_effort` maps to


def gemini_settings(model: str, s: ModelSettings, tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The `GenerateContentConfig` fields of settings `s` (model, max_tokens and temperature
    excepted: the adapter merges those with its own defaults), every field mapped or refused with
    `UnsupportedModelSetting` naming the model and the setting (`durable.models.settings_wire`
    does the same for the other providers); `extra` fields are merged in as given."""
    out: dict[str, Any] = {}
    if s.top_p is not None:
        out["top_p"] = s.top_p
    if s.stop is not None:
        out["stop_sequences"] = list(s.stop)
    if s.seed is not None:
        out["seed"] = s.seed
    thinking: dict[str, Any] = {}
    if s.thinking_budget is not None:
        thinking["thinking_budget"] = s.thinking_budget
    if s.reasoning_effort is not None:
        if s.reasoning_effort not in GEMINI_LEVELS:
            raise UnsupportedModelSetting(model, "reasoning_effort", f"Gemini's thinking_level accepts "
                                          f"{', '.join(map(repr, GEMINI_LEVELS))}, not {s.reasoning_effort!r}")
        thinking["thinking_level"] = s.reasoning_effort
    if thinking:
        out["thinking_config"] = thinking
    if s.parallel_tool_calls is not None:
        raise UnsupportedModelSetting(model, "parallel_tool_calls", "Gemini has no switch for parallel tool calls")
    if s.service_tier is not None:
        raise UnsupportedModelSetting(model, "service_tier", "Gemini's API has no service tier")
    if s.tool_choice is not None and tools:
        names = {t.name for t in tools}
        mode = {"auto": "AUTO", "required": "ANY", "none": "NONE"}.get(s.tool_choice)
        calling: dict[str, Any] = {"mode": mode or "ANY"}
        if mode is None and s.tool_choice in names:
            calling["allowed_function_names"] = [s.tool_choice]
        out["tool_config"] = {"function_calling_config": calling}
    out.update(s.extra or {})
    return out
