"""Reasoning and cost on the console: an answer's reasoning in its entry (`reasoning_text`, shown
collapsed by the page), usage by kind of token apart (input not cached, cache reads and writes,
output less reasoning, reasoning) with each model's cost when `Settings.prices` knows it (the
embedded console), and without a known price (standalone: `unknown`, the model named)."""

from __future__ import annotations

import pytest

import durable
from durable.console import FileSource, HarnessSource
from durable.models import FauxModel, faux
from durable.records import Usage

pytestmark = pytest.mark.anyio

USAGE = Usage(1_000_000, 500_000, 200_000, 300_000, 100_000)  # input, output, reasoning, cache read, write
PRICES = durable.Prices({"faux": durable.Price(input=1, output=2, cache_read=0.5, cache_write=1.25)})


async def test_reasoning_and_usage_by_kind_with_cost(tmp_path):
    path = tmp_path / "u.sqlite"
    model = FauxModel([faux.reply("The answer.", reasoning="First I think.", usage=USAGE)])
    async with durable.open_harness(path, model=model, settings=durable.Settings(prices=PRICES)) as h:
        await (await h.root.submit("Question?")).wait()
        source = HarnessSource(h)
        state = await source.state()
        entries = await source.entries("root", 0)
    assert [(e["type"], e.get("reasoning_text")) for e in entries] == [("user", None),
                                                                       ("assistant", "First I think.")]
    assert entries[1]["text"] == "The answer."
    kinds = {"requests": 1, "input": 600_000, "cache_read": 300_000, "cache_write": 100_000, "output": 300_000,
             "reasoning": 200_000}
    # 0.6 (input) + 0.15 (cache reads) + 0.125 (cache writes) + 1.0 (output, reasoning included) USD
    assert state["usage_by_kind"] == {"models": [{"model": "faux", **kinds, "cost": 1.875}],
                                      "total": {**kinds, "cost": 1.875}, "unpriced": [], "tool_calls": 0,
                                      "tool_seconds": 0.0}

    standalone = await FileSource(str(path)).state()  # no prices of the owner's: genai-prices knows no faux
    assert standalone["usage_by_kind"] == {"models": [{"model": "faux", **kinds, "cost": None}],
                                           "total": {**kinds, "cost": None}, "unpriced": ["faux"],
                                           "tool_calls": 0, "tool_seconds": 0.0}
