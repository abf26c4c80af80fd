"""A conversation deleted from the file leaves the standalone console's page and memory at its
next look: its document, usage, entry count and recovery notes go with it."""

from __future__ import annotations

import pytest

import durable
from durable.console import FileSource
from durable.models import faux
from durable.records import Usage
from durable.testing.scripts import by_input

pytestmark = pytest.mark.anyio


async def test_a_deleted_conversation_leaves_the_standalone_console(tmp_path):
    path = str(tmp_path / "d.sqlite")
    model = by_input({"hi": [faux.reply("Hello.", usage=Usage(10, 2))], "bye": [faux.reply("Bye.", usage=Usage(7, 1))]})
    async with durable.open_harness(path, model=model) as h:
        source = FileSource(path)
        await (await h.root.submit("hi")).wait()
        other = h.conversation("other")
        await (await other.submit("bye")).wait()
        seen = await source.state()
        assert sorted(seen["live"]) == ["other", "root"]
        assert [(c["id"], c["entries"]) for c in seen["conversations"]] == [("other", 2), ("root", 2)]
        assert seen["usage_by_kind"]["total"]["requests"] == 2
        await other.delete()
        after = await source.state()
    assert sorted(after["live"]) == ["root"]
    assert [(c["id"], c["entries"]) for c in after["conversations"]] == [("root", 2)]
    assert after["usage_by_kind"]["total"]["requests"] == 1
    assert sorted(source._docs.docs) == sorted(source._counts) == ["root"]  # nothing of it kept either
