"""Settings of a harness, with their defaults: plain frozen values (`attrs.evolve` to change).

`Settings` holds them all; the grouped ones are classes of their own (`RetryPolicy`, `Progress`,
`StreamSettings`, `Compaction`, `UsageLimits`). Each field's comment says what it governs, and the
settings table of docs/settings.md lists every one with its default and meaning.
"""

from __future__ import annotations

from typing import Any, Literal

from attrs import field

from ._frozen import frozen
from .prices import Prices
from .records.model_settings import ModelSettings, from_options, merge

WhenBusy = Literal["queue", "interrupt", "reject"]
"""What `submit` does with an input while a run is active: "queue" it for the next run,
"interrupt" the run (the input starts the next one), or "reject" it (`ConversationBusy`)."""


@frozen
class RetryPolicy:
    """How failed model attempts are retried (see the table in the module docstring).

    Attempt n+1 waits `delay(n)`: `base_delay * 2**(n-1)` seconds, capped at `max_delay`, raised
    to the provider's retry-after; the wait is durable (it survives a restart). A run gets at
    most `max_retries + 1` attempts (on each member of a `FallbackModel`: a member that fails
    for good hands the run to the next); with `enabled=False`, the first failure ends it (or
    moves it to the next member)."""

    enabled: bool = True
    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based)."""
        factor: int = 2 ** (attempt - 1)  # typeshed: int ** int is Any (a negative power is a float)
        d = min(self.base_delay * factor, self.max_delay)
        if retry_after is not None and retry_after > d:
            d = retry_after
        return d

    def allows_another(self, attempt: int) -> bool:
        return self.enabled and attempt < self.max_retries + 1


@frozen
class Progress:
    """How often streamed progress is committed: partial answer text at most every
    `persist_within` seconds, tool output at most every `output_interval` seconds (0: every
    delta). A crash loses at most one window of it."""

    persist_within: float = 0.1
    output_interval: float = 0.1


@frozen
class StreamSettings:
    """How answers are requested: `deferred=True` asks the model for a background job (polled, and
    never submitted twice for one attempt) instead of a stream; `stream_silence` is the number
    of seconds without a stream event after which the attempt fails as a timeout, a failed attempt
    like any other (None: no limit; a model that goes silent then holds its run until `abort()`)."""

    deferred: bool = False
    stream_silence: float | None = 300.0


@frozen
class Compaction:
    """Automatic compaction of a conversation's context: before a request whose context passes
    `threshold` of the model's context window, the older entries are summarised and the last
    `keep_last` kept verbatim. `enabled=False` turns it off (the host may still compact)."""

    enabled: bool = True
    threshold: float = 0.8
    keep_last: int = 4


@frozen
class UsageLimits:
    """Limits a run (`Settings.usage_limits`) or a conversation (`Settings.conversation_usage_limits`)
    may not pass; None: no limit. They are checked before each request (and, for `tool_calls_limit`,
    before a round of tool calls is handed out): a request that would pass one is not sent, and the
    run ends `unanswered{usage_limit}` with a detail naming the limit and the figures.

    "Would pass": `request_limit` counts the request about to be sent; `input_tokens_limit` and
    `total_tokens_limit` count its input, estimated (4 characters a token) from the context and the
    instructions; `output_tokens_limit` is passed once it is reached (an answer has at least one
    token); `tool_calls_limit` counts the calls of the round about to run."""

    request_limit: int | None = None
    tool_calls_limit: int | None = None
    input_tokens_limit: int | None = None
    output_tokens_limit: int | None = None
    total_tokens_limit: int | None = None

    def __attrs_post_init__(self) -> None:
        for name in ("request_limit", "tool_calls_limit", "input_tokens_limit", "output_tokens_limit",
                     "total_tokens_limit"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"UsageLimits.{name} must be at least 0, not {value}")


@frozen
class Settings:
    """Everything a harness can be told, with its defaults (see the table in the module docstring).

    Frozen: make a changed copy with `attrs.evolve(settings, ...)`. Invalid values (`restart_limit`
    below 1, negative `max_retries`, an unknown `when_busy`) raise `ValueError` when made.
    `model_settings` are the harness's layer of `durable.ModelSettings` (a conversation handle's
    and an input's are merged over them); `model_options`, the older dict form, is converted (an
    unknown key is `InvalidModelSettings`) and merged under them."""

    retry: RetryPolicy = field(factory=RetryPolicy)
    restart_limit: int = 3
    progress: Progress = field(factory=Progress)
    stream: StreamSettings = field(factory=StreamSettings)
    client_tool_timeout: float = 300.0
    compaction: Compaction = field(factory=Compaction)
    system_prompt: str = "You are a helpful assistant."
    when_busy: WhenBusy = "queue"
    max_tool_rounds: int = 50
    check_integrity: bool = True
    disk_full_patience: float = 60.0
    model_options: dict[str, Any] = field(factory=dict)
    # Tool approval (issue 24): how long a call waits for a person's decision, from the commit
    # that made it wait (a durable deadline); None: no limit, it waits across any restarts.
    approval_timeout: float | None = None
    # What agents are built with: instructions, structured output, usage limits.
    prepare_timeout: float = 60.0
    output_retries: int = 2
    usage_limits: UsageLimits | None = None
    conversation_usage_limits: UsageLimits | None = None
    # Cost: the prices usage is costed with when read (None: genai-prices, when installed).
    prices: Prices | None = None
    # Images and files in inputs and tool results: each at most this many bytes.
    max_attachment_bytes: int = 20_000_000
    model_settings: ModelSettings | None = None
    # Sub-agents (durable.subagent): the deepest a child conversation may be (a child of a
    # top-level conversation is at depth 1).
    subagent_depth: int = 3
    # Memory: seconds an idle conversation (no run, no queued input) keeps its model context in
    # memory after it was last used; then it is dropped and read back from the store when the
    # conversation runs again (`durable.engine.idle`). None: contexts are kept for ever.
    keep_idle_context: float | None = 60.0

    def __attrs_post_init__(self) -> None:
        from_options(self.model_options)  # an unknown key is an error here, not ignored at each request
        if self.keep_idle_context is not None and self.keep_idle_context < 0:
            raise ValueError(f"keep_idle_context must be at least 0 or None, not {self.keep_idle_context}")
        if self.max_attachment_bytes < 1:
            raise ValueError(f"max_attachment_bytes must be at least 1, not {self.max_attachment_bytes}")
        if self.restart_limit < 1:
            raise ValueError(f"restart_limit must be at least 1, not {self.restart_limit}")
        if self.max_tool_rounds < 1:
            raise ValueError(f"max_tool_rounds must be at least 1, not {self.max_tool_rounds}")
        if self.retry.max_retries < 0:
            raise ValueError(f"retry.max_retries must be >= 0, not {self.retry.max_retries}")
        if self.approval_timeout is not None and not self.approval_timeout > 0:
            raise ValueError(f"approval_timeout must be positive (or None), not {self.approval_timeout!r}")
        if self.subagent_depth < 0:
            raise ValueError(f"subagent_depth must be >= 0, not {self.subagent_depth}")
        if self.output_retries < 0:
            raise ValueError(f"output_retries must be >= 0, not {self.output_retries}")
        if self.prepare_timeout <= 0:
            raise ValueError(f"prepare_timeout must be above 0, not {self.prepare_timeout}")
        if not self.disk_full_patience >= 0:
            raise ValueError(f"disk_full_patience must be >= 0 seconds, not {self.disk_full_patience}")
        if self.when_busy not in ("queue", "interrupt", "reject"):
            raise ValueError(f"when_busy must be 'queue', 'interrupt' or 'reject', not {self.when_busy!r}")

    @property
    def model_defaults(self) -> ModelSettings:
        """The harness's model settings: `model_options` converted, `model_settings` over them."""
        return merge(from_options(self.model_options), self.model_settings)
