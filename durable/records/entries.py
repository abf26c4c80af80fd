"""The conversation entries: what a conversation holds, and the values they carry.

User inputs, model messages (with their tool calls and token usage), tool results and compaction
summaries, each stored at its `seq` in its conversation (`StoredEntry`).
"""

from __future__ import annotations

from typing import Literal, Union

from attrs import field

from .._frozen import OMITTED_WHEN_DEFAULT, evolve, frozen
from .content import Part, placeholder_text
from .reasons import StopReason


@frozen
class Usage:
    """Tokens a model call used, as the provider reported them (0 when it did not). `a + b` adds them up.

    `input_tokens` counts every token of the prompt, cached or not; `cache_read_tokens` (read
    from the provider's prompt cache) and `cache_write_tokens` (written to it) are parts of it.
    `output_tokens` counts every token of the answer; `reasoning_tokens` (a reasoning model's
    hidden thinking) are part of it. The three parts are stored only when not 0."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    cache_read_tokens: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    cache_write_tokens: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.reasoning_tokens + other.reasoning_tokens, self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens)


@frozen
class ToolCall:
    """One call the model asked for. `arguments` is the raw JSON text the model produced."""

    id: str
    name: str
    arguments: str


@frozen
class Reasoning:
    """One block of a model's reasoning, kept as its provider gave it so that it can be shown and
    sent back. `text`: the thinking as shown (Anthropic's thinking, the raw reasoning of an open
    model, a chat server's `reasoning_content`); `summary`: the parts of an OpenAI reasoning
    summary. `format` names the wire format that accepts the block back ("anthropic", "openai"
    for the Responses API, "faux"); "" is text only, never sent to any model. What that format
    needs to accept it: `signature` (Anthropic thinking), `redacted` (the data of an Anthropic
    `redacted_thinking` block, whose text is empty), `id` and `encrypted` (an OpenAI reasoning
    item and its `encrypted_content`). `partial`: a stream cut off (by a crash, an abort or an
    error) before the block was complete; it is kept for people and never sent back, as
    providers reject unsigned thinking."""

    text: str = ""
    format: str = ""
    signature: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    redacted: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    id: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    encrypted: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    summary: tuple[str, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)
    partial: bool = field(default=False, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def shown(self) -> str:
        """The text a person reads: the thinking, else the summary's parts."""
        return self.text or "\n\n".join(self.summary)


def reasoning_text(blocks: tuple[Reasoning, ...]) -> str:
    """The reasoning of a message as one text (blocks apart by a blank line)."""
    return "\n\n".join(shown for b in blocks if (shown := b.shown))


@frozen
class Diagnostic:
    """A note attached to a tool result (for the host and the logs, not sent to the model):
    its `severity`, a stable `code` and a sentence."""

    severity: Literal["error", "warning", "info"]
    code: str
    message: str


@frozen
class UserEntry:
    """An input of the host, in the conversation. `submission_id` is the submission it came from
    (None for an entry written without one). `parts`: an input of several parts (text, images,
    files: `durable.records.content`), in order; `text` is then its text parts joined."""

    text: str
    submission_id: str | None = None
    parts: tuple[Part, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)


@frozen
class AssistantEntry:
    """A model message. `stop_reason` "aborted" marks a partial kept after an interruption; such
    entries stay in the conversation but are never sent to the model again. `reasoning`: the
    model's reasoning blocks before its answer, in order (stored only when there are some).
    `model` names the model that wrote it ("openai:gpt-4o": a `FallbackModel`'s member when one is
    used; None in entries written before models were recorded)."""

    text: str
    stop_reason: StopReason
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    error: str | None = None
    attempt: int = 1
    interrupted: bool = False  # a partial of an attempt the host's death cut off (charged once)
    reasoning: tuple[Reasoning, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)
    model: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class ToolResultEntry:
    """The result of one tool call, as the model reads it: `content` (text), with `is_error`
    when the call failed (bad arguments, an unknown tool, an exception, an interruption).
    `parts`: a result with images or files (`durable.records.content`), in order; `content` is
    then its text parts joined."""

    call_id: str
    tool_name: str
    content: str
    is_error: bool = False
    diagnostics: tuple[Diagnostic, ...] = ()
    parts: tuple[Part, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)


@frozen
class CompactionEntry:
    """A summary that replaces every entry before `first_kept_seq` in the model's context."""

    summary: str
    first_kept_seq: int
    usage: Usage = Usage()


Entry = Union[UserEntry, AssistantEntry, ToolResultEntry, CompactionEntry]
"""Any entry of a conversation; stored with its kind as a tag."""


def without_attachments(entry: Entry) -> Entry:
    """`entry` with its images and files as placeholder text ("[image: image/png, 12 kB]") and no
    parts: what a compaction's summary request reads instead of the bytes."""
    if isinstance(entry, UserEntry) and entry.parts:
        return evolve(entry, text=placeholder_text(entry.parts), parts=())
    if isinstance(entry, ToolResultEntry) and entry.parts:
        return evolve(entry, content=placeholder_text(entry.parts), parts=())
    return entry


@frozen
class StoredEntry:
    """An entry at its place in a conversation (`seq` counts from 1 per conversation)."""

    conversation_id: str
    seq: int
    entry: Entry



__all__ = [
    "AssistantEntry",
    "CompactionEntry",
    "Diagnostic",
    "Entry",
    "Reasoning",
    "StoredEntry",
    "ToolCall",
    "ToolResultEntry",
    "Usage",
    "UserEntry",
    "reasoning_text",
    "without_attachments",
]
