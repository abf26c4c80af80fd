"""What usage cost: model prices from the host's table (`Prices({...})`) or from the `genai-prices`
database (the optional extra `prices`), applied to usage totals when they are read.

Costs are never stored: `conv.usage()`, `h.usage()` and `durable inspect` price the committed
token totals with the prices in force (`Settings.prices`; by default `genai-prices` when it is
installed). A model found in neither has cost None, never 0, and the totals name it
(`UsageTotals.unpriced`): their `cost` is None then too, since a sum without it would understate.
Tokens are priced by kind: input (less its cache reads and writes), cache reads, cache writes and
output, per million tokens, in USD. A `genai-prices` model whose price depends on a request's size
(tiers) is priced as if every request were of the mean size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ._frozen import evolve, frozen
from .records.usage import ModelUsage, UsageTotals

if TYPE_CHECKING:  # imported where a cost is computed: `import durable` and a recovery price nothing
    from decimal import Decimal


@frozen
class Price:
    """A model's prices in USD per million tokens: `input`, `output`, and the cache's `cache_read`
    and `cache_write` (None: priced as input)."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(self, usage: ModelUsage) -> Decimal:
        """The exact cost of `usage` at these prices."""
        from decimal import Decimal

        read = usage.cache_read_tokens
        write = usage.cache_write_tokens
        plain = usage.input_tokens - read - write
        return (_d(self.input) * plain + _d(self.output) * usage.output_tokens
                + _d(self.input if self.cache_read is None else self.cache_read) * read
                + _d(self.input if self.cache_write is None else self.cache_write) * write) / Decimal(1_000_000)


class Prices:
    """Model prices: `table` maps a model's name as usage names it ("openai:gpt-4o", or its bare
    "gpt-4o") to a `Price` (or a dict of its fields); a model not in it is looked up in
    `genai-prices` when it is installed and `genai_prices` is true. Raises `ValueError` naming a
    model whose price is not a `Price` or a dict of one's fields."""

    def __init__(self, table: Mapping[str, Price | Mapping[str, float]] | None = None, *,
                 genai_prices: bool = True) -> None:
        self.table: dict[str, Price] = {}
        for name, price in (table or {}).items():
            try:
                self.table[name] = price if isinstance(price, Price) else Price(**price)
            except TypeError as exc:
                raise ValueError(f"The price of model {name!r} must be a durable.Price or a dict of input, output, "
                                 f"cache_read and cache_write (USD per million tokens): {exc}") from None
        self.genai_prices = genai_prices

    def __repr__(self) -> str:
        return f"Prices({self.table!r}, genai_prices={self.genai_prices!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Prices):
            return NotImplemented
        return (self.table, self.genai_prices) == (other.table, other.genai_prices)

    __hash__ = None  # type: ignore[assignment]  # a table that may be changed in place

    def cost(self, usage: ModelUsage) -> float | None:
        """What `usage` cost in USD, or None when the model's price is unknown."""
        name = usage.model
        price = self.table.get(name) or self.table.get(name.partition(":")[2])
        if price is not None:
            return float(price.cost(usage))
        if self.genai_prices:
            found = _genai_cost(usage)
            if found is not None:
                return float(found)
        return None

    def priced(self, totals: UsageTotals) -> UsageTotals:
        """`totals` with each model's `cost` (None where unknown)."""
        return evolve(totals, models=tuple(evolve(m, cost=self.cost(m)) for m in totals.models))


DEFAULT_PRICES = Prices()
"""The prices used when `Settings.prices` is None: `genai-prices`, when installed."""


def in_force(prices: Prices | None) -> Prices:
    """The prices of `Settings.prices`: those given, else `DEFAULT_PRICES`."""
    return DEFAULT_PRICES if prices is None else prices


def _d(value: float) -> Decimal:
    from decimal import Decimal

    return Decimal(str(value))  # 2.5 is $2.50, not the float nearest to it


def _genai_cost(usage: ModelUsage) -> Decimal | None:
    try:
        import genai_prices
    except ImportError:
        return None
    from decimal import Decimal

    provider, _, ref = usage.model.rpartition(":")
    n = max(usage.requests, 1)
    fields = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
              "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens}
    try:
        found = genai_prices.calc_price(genai_prices.Usage(**{k: round(v / n) for k, v in fields.items()}), ref,
                                        provider_id=provider or None)
        if any(type(v).__name__ == "TieredPrices" for v in vars(found.model_price).values()):
            return Decimal(found.total_price) * n  # priced at the mean request's tier
        return Decimal(found.model_price.calc_price(genai_prices.Usage(**fields))["total_price"])
    except (LookupError, ValueError):  # an unknown provider or model
        return None


__all__ = ["DEFAULT_PRICES", "Price", "Prices", "in_force"]
