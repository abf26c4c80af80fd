"""The model protocol: what the harness needs from a language model, and nothing more.

Shaped after the real providers (OpenAI Responses / Chat Completions, Anthropic Messages): a
streaming call that yields text and reasoning deltas, finished tool calls and usage, and ends
with exactly one `FinalMessage` (with the reasoning blocks to send back); and, for providers
with background or batch jobs, the deferred calls `submit`, `fetch` and `cancel`.

Errors are `ModelError`s that carry the provider, the HTTP status, a retry-after and a `kind`;
the harness decides from `kind` alone whether an attempt is retried (docs/spec.md §3). Providers never
put credentials in an error message.

A provider module (faux, openai, anthropic, gemini) imports this module, `durable.records` and
`durable.errors` (which imports nothing) only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from attrs import field

from .. import tokens
from .._frozen import frozen
from ..errors import DurableError, UnsupportedModelSetting
from ..records import AssistantEntry, Entry, ModelStopReason, Reasoning, ToolCall, Usage
from ..records.model_settings import NO_SETTINGS, TOOL_CHOICES, ModelSettings, from_options

ErrorKind = Literal[
    "rate_limit",  # 429: retryable, honours retry-after
    "overloaded",  # 529 / "overloaded_error": retryable
    "timeout",  # 408, read timeouts, a stream silent past `stream_silence`: retryable
    "connection",  # dropped or refused connections: retryable
    "server",  # other 5xx: retryable
    "auth",  # 401 / 403: not retryable
    "quota",  # billing / insufficient quota: not retryable
    "invalid_model",  # unknown model: not retryable
    "context_overflow",  # prompt too long: not retryable, the harness compacts instead
    "invalid_request",  # other 4xx: not retryable
    "invalid_response",  # a final message that breaks the protocol (see `check_final`): retryable
    "unknown",  # anything else: not retryable
]

RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"rate_limit", "overloaded", "timeout", "connection", "server", "invalid_response"}
)


@frozen
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any] = field(factory=lambda: {"type": "object", "properties": {}})


@frozen
class ModelRequest:
    """One attempt's request. `messages` is the model's context in order: user entries,
    assistant entries (never aborted ones), tool results and at most one leading compaction
    summary: a read-only sequence (a tuple, or the harness's view of its context, which is
    equal to the tuple of the same entries), to be iterated or indexed, never changed. An
    assistant entry's reasoning blocks go back only to a model of their `format`, never a
    `partial` one (`sendable_reasoning`). `key` is
    unique per attempt and stable across restarts: providers send it as request metadata so a
    deferred job can be found again. `output`: the JSON schema (of type object) the answer must
    match, None for a text answer; a provider with a structured mode asks for it there (OpenAI
    `json_schema`, Anthropic a forced `final_result` tool) and gives the answer's JSON as the
    final message's text with stop reason `stop`; one without may ignore it (the harness checks
    the text either way). `attachments`: the bytes of every image and file the messages
    reference (`parts` of user entries and tool results), by sha256, read from the store for this
    request; a provider sends each in its own format (`durable.models.content`).

    `settings`: the run's merged `ModelSettings` (`options`, their older dict form, is merged
    under them: see `settings_of`). `cache_key`: the conversation's prompt-cache identity (the
    harness sets it; "" asks for no prompt caching): OpenAI sends it as `prompt_cache_key`,
    Anthropic places cache breakpoints; `settings.prompt_cache=False` turns both off."""

    system: str
    messages: Sequence[Entry]
    tools: tuple[ToolSpec, ...] = ()
    options: dict[str, Any] = field(factory=dict)
    attempt: int = 1
    key: str = ""
    output: dict[str, Any] | None = None
    attachments: Mapping[str, bytes] = field(factory=dict, repr=False)
    settings: ModelSettings = NO_SETTINGS
    cache_key: str = ""


def settings_of(request: ModelRequest) -> ModelSettings:
    """What `request` asks of the model: its `options` (the older dict) with its `settings` over
    them. An unknown option is `InvalidModelSettings`."""
    if not request.options:
        return request.settings
    return from_options(request.options, "ModelRequest.options").merged(request.settings)


def check_settings(model: Any, settings: ModelSettings, tools: Sequence[ToolSpec], structured: bool = False) -> None:
    """Raise `UnsupportedModelSetting` (naming the model and the setting) when `model` cannot
    honour `settings` for a request offering `tools` (`structured`: with an output schema): a
    `tool_choice` naming a tool not offered, or "required" without any tool; then whatever the
    model's own `check_settings(settings, tools, structured)` refuses, if it has one."""
    name = str(getattr(model, "name", type(model).__name__))
    choice = settings.tool_choice
    if choice is not None and choice not in TOOL_CHOICES and choice not in {t.name for t in tools}:
        offered = ", ".join(sorted(t.name for t in tools)) or "none"
        raise UnsupportedModelSetting(name, "tool_choice", f"it names the tool {choice!r}, which is not offered "
                                                           f"(tools offered: {offered})")
    if choice == "required" and not tools:
        raise UnsupportedModelSetting(name, "tool_choice", "'required' asks for a tool call, but no tool is offered")
    own = getattr(model, "check_settings", None)
    if callable(own):
        own(settings, tuple(tools), structured)


def sendable_reasoning(entry: AssistantEntry, wire_format: str) -> tuple[Reasoning, ...]:
    """The reasoning blocks of `entry` that a model of `wire_format` takes back: its own format's,
    complete (a partial block is unsigned: providers reject it)."""
    return tuple(b for b in entry.reasoning if b.format == wire_format and not b.partial)


OUTPUT_TOOL = "final_result"
"""The name of the tool through which a provider without a JSON mode (Anthropic) gives a
structured answer: reserved when `ModelRequest.output` is set."""


@frozen
class TextDelta:
    text: str


@frozen
class ReasoningDelta:
    """A piece of the model's reasoning (thinking, or a reasoning summary) as it streams: shown
    live, never sent back; the complete blocks come with the `FinalMessage`."""

    text: str


@frozen
class ToolCallEvent:
    """A tool call whose arguments are complete."""

    call: ToolCall


@frozen
class UsageEvent:
    """Usage so far in this response; each one replaces the previous (cumulative)."""

    usage: Usage


@frozen
class FinalMessage:
    """The end of a response. With stop_reason "error", `error` holds the provider's message.
    `reasoning`: the reasoning blocks of the response, complete (with what the provider needs to
    accept them back), in order; a block cut short is marked `partial`."""

    text: str
    stop_reason: ModelStopReason
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    error: str | None = None
    reasoning: tuple[Reasoning, ...] = ()


StreamEvent = TextDelta | ReasoningDelta | ToolCallEvent | UsageEvent | FinalMessage

_STOP_REASONS = frozenset(get_args(ModelStopReason))
_INT = {int}


def _malformed(why: str, provider: str | None) -> ModelError:
    return ModelError(f"The model's answer was malformed: {why}", kind="invalid_response", provider=provider)


def _check_call(call: object, provider: str | None) -> ToolCall:
    if not (isinstance(call, ToolCall) and isinstance(call.id, str) and isinstance(call.name, str)
            and isinstance(call.arguments, str)):
        raise _malformed(f"a tool call is not a ToolCall of strings: {call!r}", provider)
    return call


def _check_usage(usage: object, provider: str | None) -> Usage:
    if isinstance(usage, Usage):
        counts = (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens, usage.cache_read_tokens,
                  usage.cache_write_tokens)
        if set(map(type, counts)) == _INT and min(counts) >= 0:  # a bool is not a count
            return usage
    raise _malformed(f"its usage is not a Usage of non-negative integers: {usage!r}", provider)


def check_event(event: object, provider: str | None = None) -> StreamEvent:
    """One event of a stream, checked at the model boundary before anything of it reaches the
    live document or a commit: a `TextDelta` or `ReasoningDelta` of a string, a `ToolCallEvent` of a `ToolCall` of
    strings, a `UsageEvent` of a `Usage` of non-negative integers, or a final message
    (`check_final`). Raises `ModelError` (kind `invalid_response`, retryable) naming what is
    wrong, so a model's junk fails its attempt and never reaches the store."""
    if isinstance(event, TextDelta | ReasoningDelta):
        if not isinstance(event.text, str):
            what = "a text delta" if isinstance(event, TextDelta) else "a reasoning delta"
            raise _malformed(f"{what} holds {type(event.text).__name__}, not a string: {event.text!r}", provider)
        return event
    if isinstance(event, ToolCallEvent):
        _check_call(event.call, provider)
        return event
    if isinstance(event, UsageEvent):
        _check_usage(event.usage, provider)
        return event
    if not isinstance(event, FinalMessage):
        raise _malformed(f"expected a stream event (TextDelta, ReasoningDelta, ToolCallEvent, UsageEvent or "
                         f"FinalMessage), got {type(event).__name__}", provider)
    return check_final(event, provider)


def check_final(message: object, provider: str | None = None) -> FinalMessage:
    """What a model returned, checked at the model boundary before anything of it is committed:
    a `FinalMessage` with a known stop reason, text and calls of the right types, unique call
    ids, calls only with `tool_use` and at least one with it. Raises `ModelError` (kind
    `invalid_response`, retryable) naming what is wrong."""

    def bad(why: str) -> ModelError:
        return _malformed(why, provider)

    if not isinstance(message, FinalMessage):
        raise bad(f"expected a FinalMessage, got {type(message).__name__}")
    if message.stop_reason not in _STOP_REASONS:
        raise bad(f"unknown stop reason {message.stop_reason!r} (expected one of {', '.join(sorted(_STOP_REASONS))})")
    if not isinstance(message.text, str):
        raise bad("its text is not a string")
    _check_usage(message.usage, provider)
    if message.error is not None and not isinstance(message.error, str):
        raise bad(f"its error is not a string: {message.error!r}")
    if not isinstance(message.tool_calls, tuple | list):
        raise bad(f"its tool calls are not a sequence: {message.tool_calls!r}")
    if not isinstance(message.reasoning, tuple) or not all(isinstance(b, Reasoning) for b in message.reasoning):
        raise bad(f"its reasoning is not a tuple of Reasoning blocks: {message.reasoning!r}")
    seen: set[str] = set()
    for call in message.tool_calls:
        _check_call(call, provider)
        if not call.id or call.id in seen:
            raise bad(f"tool call id {call.id!r} is empty or used twice")
        seen.add(call.id)
    if message.stop_reason == "tool_use" and not message.tool_calls:
        raise bad("stop reason tool_use without any tool call")
    if message.tool_calls and message.stop_reason != "tool_use":
        raise bad(f"{len(message.tool_calls)} tool call(s) under stop reason {message.stop_reason!r}")
    return message


@frozen
class DeferredHandle:
    """A background job at the provider; `poll_after` is in seconds from now."""

    id: str
    poll_after: float = 1.0


@frozen
class StillRunning:
    poll_after: float = 1.0


FetchResult = StillRunning | FinalMessage


class ModelError(DurableError):
    """A provider call failed. `kind` decides whether the attempt is retried."""

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind = "unknown",
        provider: str | None = None,
        status_code: int | None = None,
        retry_after: float | None = None,
        raw: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.provider = provider
        self.status_code = status_code
        self.retry_after = retry_after
        self.raw = raw

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS

    def __repr__(self) -> str:
        return (
            f"ModelError({self.message!r}, kind={self.kind!r}, provider={self.provider!r}, "
            f"status_code={self.status_code!r}, retry_after={self.retry_after!r})"
        )


@runtime_checkable
class Model(Protocol):
    """A language model. `name` appears in reports; `context_window` (tokens) drives automatic
    compaction; `deferred` says the model answers through background jobs. A model may also have
    `check_settings(settings, tools, structured)`, raising `UnsupportedModelSetting` for model
    settings it cannot honour: the harness calls it before anything is written (`check_settings`)."""

    name: str
    context_window: int
    deferred: bool

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response. Ends with a `FinalMessage` or raises `ModelError`. If cancelled,
        the provider connection is closed; nothing is retried by the model itself."""
        ...

    async def submit(self, request: ModelRequest) -> DeferredHandle:
        """Start a background job for `request` (deferred models only)."""
        ...

    async def fetch(self, handle: str) -> FetchResult:
        """Look at a background job: still running, or its final message."""
        ...

    async def cancel(self, handle: str) -> None:
        """Cancel a background job. Cancelling an ended or unknown job is not an error."""
        ...

    async def find(self, key: str) -> str | None:
        """The handle of a background job submitted with `request.key`, or None: no such job, or
        the provider cannot list jobs. The harness asks after a crash between committing a job's
        intent and committing its handle; on None the job is submitted again (and reported)."""
        ...


estimate_tokens = tokens.estimate_tokens  # kept here for the code that imported it from here
