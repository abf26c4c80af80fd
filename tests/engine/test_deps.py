"""The host's dependencies (`open_harness(deps=...)`) reach every tool through its context, typed,
and are never written to the session file."""

from __future__ import annotations

import attrs
import pytest

import durable
from durable import records as r
from durable.models import FauxModel, faux

from .conftest import settings

pytestmark = pytest.mark.anyio


@attrs.define
class Shop:
    prices: dict[str, int]
    secret: str = "do-not-store-me"


async def test_a_tool_reads_the_harness_dependencies_from_its_context_and_the_file_never_holds_them(tmp_path):
    seen: list[Shop] = []

    @durable.tool(replay="safe")
    async def price(item: str, ctx: durable.ToolContext[Shop]) -> str:
        """The price of an item."""
        seen.append(ctx.deps)
        return f"{item}: {ctx.deps.prices[item]} EUR"

    shop = Shop({"tea": 4})
    model = FauxModel([faux.reply("", tool_calls=[faux.call("price", {"item": "tea"}, id="c1")]), faux.reply("4 EUR")])
    path = tmp_path / "s.sqlite"
    async with durable.open_harness(path, model=model, tools=[price], settings=settings(), deps=shop) as h:
        assert h.deps is shop
        assert await (await h.root.submit("How much is tea?")).wait() == r.Answered("4 EUR", 4)
        result = (await h.root.entries())[2].entry
    assert seen == [shop] and seen[0] is shop
    assert isinstance(result, r.ToolResultEntry) and result.content == "tea: 4 EUR"
    for file in tmp_path.iterdir():  # the session file, and its WAL if one is left
        assert b"do-not-store-me" not in file.read_bytes(), file.name
