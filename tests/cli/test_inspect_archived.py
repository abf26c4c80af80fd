"""`durable inspect` shows an archived conversation, and a run it ended `unanswered (archived)`."""

from __future__ import annotations

import anyio

import durable
from durable.models import FauxModel, faux

from .conftest import inspect_json, run_durable


def test_inspect_shows_an_archived_conversation(tmp_path):
    path = tmp_path / "s.sqlite"

    async def build() -> None:
        async with durable.open_harness(path, model=FauxModel([faux.hang("thinking")])) as h:
            sub = await h.conversation("old").submit("hello")
            async for live in h.conversation("old").follow():
                if live.generation is not None and live.generation.message.text:
                    break
            await h.conversation("old").archive()
            await sub.wait()

    anyio.run(build, backend="trio")
    done = run_durable("inspect", str(path))
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "archived (refuses new input); last run unanswered (archived): The conversation was archived" in out
    data = inspect_json(path)
    assert data["live"]["old"]["archived"] is True
    assert [(s["conversation_id"], s["reason"]) for s in data["submissions"]] == [("old", "archived")]
