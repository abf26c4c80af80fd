"""What usage cost: `conv.usage()` and `h.usage()` priced per model and in total, from the host's
table (`durable.Prices`) or from `genai-prices`; a model found in neither costs None, not 0, and
the totals name it; `durable inspect` shows the same. Exact amounts."""

from __future__ import annotations

import pytest

import durable
from durable import records as r
from durable.cli.inspect_data import read_session
from durable.cli.inspect_view import cost_text, print_session
from durable.models import FauxModel, faux

from .conftest import settings

pytestmark = pytest.mark.anyio

GPT = "openai:gpt-4o"
TABLE = durable.Prices({GPT: durable.Price(input=2.5, output=10, cache_read=1.25)}, genai_prices=False)
BIG = r.Usage(1_234_567, 345_678, cache_read_tokens=234_567)
# 1,000,000 plain input at $2.50, 234,567 cache reads at $1.25, 345,678 output at $10 per million.
BIG_COST = 2.5 + 0.29320875 + 3.45678


async def test_a_users_table_prices_each_model_exactly_and_an_unknown_model_is_none_and_named(host):
    unknown = FauxModel([faux.error("Quota exceeded", kind="quota", partial="Half")], name="acme:mystery-1")
    known = FauxModel([faux.reply("Answer", usage=BIG)], name=GPT)
    async with host.open(durable.FallbackModel([unknown, known]), settings=settings(prices=TABLE)) as h:
        assert await (await h.root.submit("hi")).wait() == r.Answered("Answer", 3)
        usage = h.root.usage()
        assert usage == r.UsageTotals((r.ModelUsage("acme:mystery-1", 1, cost=None),
                                       r.ModelUsage(GPT, 1, 1_234_567, 345_678, cache_read_tokens=234_567,
                                                    cost=BIG_COST)))
        assert usage.model(GPT).cost == 6.24998875 and round(usage.model(GPT).cost, 2) == 6.25
        assert (usage.cost, usage.unpriced) == (None, ("acme:mystery-1",))  # a sum without it would understate
        assert h.usage() == usage
        # The stored totals carry no cost: prices apply when the totals are read.
        assert h.root.live().usage.model(GPT).cost is None
    data = read_session(host.path, prices=TABLE)
    assert data["costs"] == {"root": {"models": {"acme:mystery-1": None, GPT: BIG_COST}, "total": None,
                                      "unpriced": ["acme:mystery-1"]}}
    assert cost_text(data["costs"]["root"]) == "unknown (acme:mystery-1 unknown (no price for it); openai:gpt-4o $6.25)"


async def test_every_model_priced_gives_a_total_to_the_cent(host, capsys):
    model = FauxModel([faux.reply("One", usage=BIG), faux.reply("Two", usage=r.Usage(2_000, 500))], name=GPT)
    async with host.open(model, settings=settings(prices=TABLE)) as h:
        await (await h.root.submit("one")).wait()
        await (await h.root.submit("two")).wait()
        usage = h.root.usage()
    assert usage.unpriced == ()
    assert usage.cost == pytest.approx(BIG_COST + (2_000 * 2.5 + 500 * 10) / 1e6, abs=1e-12)
    assert round(usage.cost, 2) == 6.26
    assert cost_text(read_session(host.path, prices=TABLE)["costs"]["root"]) == "$6.26 (openai:gpt-4o $6.26)"
    print_session(read_session(host.path, prices=TABLE))  # what `durable inspect` prints
    shown = capsys.readouterr().out.splitlines()
    assert "cost: $6.26 (openai:gpt-4o $6.26)" in shown
    assert [line.split()[:2] for line in shown if "assistant:" in line] == [["2", "assistant:stop"],
                                                                             ["4", "assistant:stop"]]
    assert sum("(by openai:gpt-4o)" in line for line in shown) == 2


async def test_genai_prices_price_a_known_model_when_the_table_has_none(host):
    usage = r.Usage(1_000_000, 1_000_000, cache_read_tokens=500_000)
    async with host.open(FauxModel([faux.reply("Hi", usage=usage)], name=GPT), settings=settings()) as h:
        await (await h.root.submit("hi")).wait()
        # gpt-4o: $2.50 input, $1.25 cached input, $10 output per million tokens.
        assert h.root.usage().cost == 1.25 + 0.625 + 10.0 == 11.875
    assert read_session(host.path)["costs"]["root"] == {"models": {GPT: 11.875}, "total": 11.875, "unpriced": []}


def test_a_model_with_size_tiers_is_priced_at_the_mean_requests_tier():
    # Claude Sonnet 4.5: $3 / $15 per million up to 200k input tokens a request, $6 / $22.50 past them.
    two = r.ModelUsage("anthropic:claude-sonnet-4-5", 2, 300_000, 2_000)  # 150k a request: the base tier
    assert durable.Prices().cost(two) == pytest.approx(0.9 + 0.03, abs=1e-12)
    one = r.ModelUsage("anthropic:claude-sonnet-4-5", 1, 300_000, 2_000)  # one request past 200k
    assert durable.Prices().cost(one) == pytest.approx(1.8 + 0.045, abs=1e-12)


def test_a_price_table_names_a_bad_entry_and_unknown_models_cost_none():
    with pytest.raises(ValueError, match=r"The price of model 'x:y' must be a durable\.Price"):
        durable.Prices({"x:y": {"input": 1.0, "outptu": 2.0}})
    bare = durable.Prices({"gpt-4o": {"input": 1.0, "output": 2.0, "cache_write": 4.0}}, genai_prices=False)
    usage = r.ModelUsage(GPT, 1, 3_000_000, 1_000_000, cache_write_tokens=1_000_000)
    assert bare.cost(usage) == 2.0 + 4.0 + 2.0  # a bare name matches; cache writes at their own price
    assert durable.Price(1.0, 2.0).cost(usage) == 3 + 2  # cache writes priced as input when not given
    assert bare.cost(r.ModelUsage("faux", 1, 10, 10)) is None
    assert durable.Prices().cost(r.ModelUsage("faux", 1, 10, 10)) is None  # genai-prices has no such provider
    assert r.UsageTotals().cost == 0.0 and r.UsageTotals().unpriced == ()


def test_prices_are_equal_by_their_table_and_settings_with_them_too():
    assert durable.Prices({GPT: {"input": 2.5, "output": 10}}) == durable.Prices({GPT: durable.Price(2.5, 10)})
    assert durable.Prices() != durable.Prices(genai_prices=False)
    assert durable.Settings(prices=durable.Prices()) == durable.Settings(prices=durable.Prices())
    assert repr(durable.Prices({"m": durable.Price(1, 2)})) == (
        "Prices({'m': Price(input=1, output=2, cache_read=None, cache_write=None)}, genai_prices=True)")
