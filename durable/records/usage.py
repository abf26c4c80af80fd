"""What a conversation, a run or a harness used: requests and tokens per model, tool calls and
tool runtime (`UsageTotals`). The limits a run or a conversation may not pass are settings
(`durable.settings.UsageLimits`).

The totals are running sums committed with what changes them (a request, an answer, a closed
tool round), so reading them never reads history. Plain frozen values; `a + b` adds them up.
"""

from __future__ import annotations

from attrs import field

from .._frozen import OMITTED_WHEN_DEFAULT, evolve, frozen
from .entries import Usage


@frozen
class ModelUsage:
    """What one model (by its `name`, "openai:gpt-4o") was sent and answered: `requests` sent
    (every attempt, and every deferred job submitted), and the tokens its answers reported (as in
    `Usage`: cache reads and writes are parts of the input, reasoning a part of the output).
    `cost`: what they cost in USD, set when the totals are read with prices (`durable.Prices`),
    None when the model's price is unknown; never stored."""

    model: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    cache_read_tokens: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    cache_write_tokens: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    cost: float | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: ModelUsage) -> ModelUsage:
        cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return ModelUsage(self.model, self.requests + other.requests, self.input_tokens + other.input_tokens,
                          self.output_tokens + other.output_tokens, self.reasoning_tokens + other.reasoning_tokens,
                          self.cache_read_tokens + other.cache_read_tokens,
                          self.cache_write_tokens + other.cache_write_tokens, cost)


@frozen
class UsageTotals:
    """Usage summed over a run, a conversation (`conv.usage()`) or a harness (`h.usage()`).

    `models`: requests and tokens per model, in the order first used. `tool_calls`: calls the
    model made that were handed to tools (each call of a tool round, counted when the round
    closes). `tool_seconds`: tool runtime on the harness's clock, the union of the started calls'
    intervals (from its start to its result, or to the interrupt that cut it off; the time a call
    spent cut off is not counted, nor twice the time parallel calls overlap). The properties sum
    the models' figures."""

    models: tuple[ModelUsage, ...] = ()
    tool_calls: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    tool_seconds: float = field(default=0.0, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def requests(self) -> int:
        return sum(m.requests for m in self.models)

    @property
    def input_tokens(self) -> int:
        return sum(m.input_tokens for m in self.models)

    @property
    def output_tokens(self) -> int:
        return sum(m.output_tokens for m in self.models)

    @property
    def reasoning_tokens(self) -> int:
        return sum(m.reasoning_tokens for m in self.models)

    @property
    def cache_read_tokens(self) -> int:
        return sum(m.cache_read_tokens for m in self.models)

    @property
    def cache_write_tokens(self) -> int:
        return sum(m.cache_write_tokens for m in self.models)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cost(self) -> float | None:
        """What every model cost in USD (see `ModelUsage.cost`): None when any model's is
        unknown (`unpriced` names them), since a sum without it would understate."""
        if self.unpriced:
            return None
        return sum((m.cost or 0.0 for m in self.models), 0.0)

    @property
    def unpriced(self) -> tuple[str, ...]:
        """The models whose cost is unknown (all of them when the totals were not priced)."""
        return tuple(m.model for m in self.models if m.cost is None)

    def model(self, name: str) -> ModelUsage:
        """The usage of the model `name` (zero when it was never used)."""
        return next((m for m in self.models if m.model == name), ModelUsage(name))

    def add(self, model: str, *, requests: int = 0, tokens: Usage | None = None) -> UsageTotals:
        """These totals with `requests` more sent to `model` and the `tokens` of an answer of it."""
        t = tokens or _NO_TOKENS
        models = self.models
        for i, m in enumerate(models):  # (every commit of a run adds here: no intermediate records)
            if m.model == model:
                more = ModelUsage(model, m.requests + requests, m.input_tokens + t.input_tokens,
                                  m.output_tokens + t.output_tokens, m.reasoning_tokens + t.reasoning_tokens,
                                  m.cache_read_tokens + t.cache_read_tokens,
                                  m.cache_write_tokens + t.cache_write_tokens)
                return UsageTotals((*models[:i], more, *models[i + 1:]), self.tool_calls, self.tool_seconds)
        more = ModelUsage(model, requests, t.input_tokens, t.output_tokens, t.reasoning_tokens, t.cache_read_tokens,
                          t.cache_write_tokens)
        return UsageTotals((*models, more), self.tool_calls, self.tool_seconds)

    def with_tools(self, calls: int, seconds: float) -> UsageTotals:
        """These totals with `calls` more tool calls that ran `seconds` (their union)."""
        return evolve(self, tool_calls=self.tool_calls + calls, tool_seconds=self.tool_seconds + seconds)

    def __add__(self, other: UsageTotals) -> UsageTotals:
        models = list(self.models)
        for m in other.models:
            i = next((i for i, mine in enumerate(models) if mine.model == m.model), None)
            if i is None:
                models.append(m)
            else:
                models[i] = models[i] + m
        return UsageTotals(tuple(models), self.tool_calls + other.tool_calls, self.tool_seconds + other.tool_seconds)


EMPTY_USAGE = UsageTotals()
_NO_TOKENS = Usage()


__all__ = ["EMPTY_USAGE", "ModelUsage", "UsageTotals"]
