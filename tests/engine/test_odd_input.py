"""Odd host input is refused at the API with `InvalidInput` (a `HarnessError` and a `ValueError`)
naming the value, before anything is written (issue 13, item 9): a conversation id that is not a
non-empty str, or holds a NUL or a lone surrogate; an input that is not non-empty text. Text with
a lone surrogate is stored and read back as it was."""

from __future__ import annotations

import sqlite3

import pytest

import durable
from durable import records as r
from durable.models.faux import FauxModel, reply

pytestmark = pytest.mark.anyio

BAD_IDS = [
    (None, "A conversation id must be a non-empty str, not None"),
    ("", "A conversation id must be a non-empty str, not ''"),
    (5, "A conversation id must be a non-empty str, not 5"),
    (b"root", "A conversation id must be a non-empty str, not b'root'"),
    ("a\x00b", "The conversation id 'a\\x00b' contains a NUL character"),
    ("a\ud800b", "The conversation id 'a\\ud800b' contains a lone surrogate and cannot be stored as UTF-8"),
    ("\udcff", "The conversation id '\\udcff' contains a lone surrogate and cannot be stored as UTF-8"),
]


def counts(path) -> tuple[int, int]:
    with sqlite3.connect(path) as db:
        return (db.execute("SELECT count(*) FROM submissions").fetchone()[0],
                db.execute("SELECT count(*) FROM tasks").fetchone()[0])


@pytest.mark.parametrize(("cid", "message"), BAD_IDS)
async def test_a_bad_conversation_id_is_a_clear_error_and_nothing_is_written(tmp_path, cid, message):
    path = tmp_path / "agent.sqlite"
    async with durable.open_harness(path, model=FauxModel([reply("fine")])) as h:
        with pytest.raises(durable.InvalidInput) as caught:
            h.conversation(cid)
        assert str(caught.value) == message
        assert isinstance(caught.value, durable.HarnessError) and isinstance(caught.value, ValueError)
        # the harness keeps working
        assert await (await h.root.submit("hello")).wait() == r.Answered("fine", 2)
    assert counts(path) == (1, 1)


async def test_good_odd_ids_and_surrogate_text_are_stored_and_read_back(tmp_path):
    path = tmp_path / "agent.sqlite"
    text = "a lone \ud800 surrogate"
    async with durable.open_harness(path, model=FauxModel([reply("back \udcff"), reply("ok")])) as h:
        assert await (await h.root.submit(text)).wait() == r.Answered("back \udcff", 2)
        odd = h.conversation("ünï\tcödé 🙂")
        assert odd.id == "ünï\tcödé 🙂"
        assert await (await odd.submit("hi")).wait() == r.Answered("ok", 2)
        assert [e.entry.text for e in await h.root.entries()] == [text, "back \udcff"]


@pytest.mark.parametrize(("text", "what"), [("", "blank text"), ("  \n", "blank text"), (None, "NoneType"), (7, "int")])
async def test_an_input_that_is_not_non_empty_text_is_invalid_input(tmp_path, text, what):
    async with durable.open_harness(tmp_path / "agent.sqlite", model=FauxModel([])) as h:
        with pytest.raises(durable.InvalidInput) as caught:
            await h.root.submit(text)
        assert str(caught.value) == f"An input for conversation 'root' must be non-empty text (a str), not {what}"
        assert isinstance(caught.value, ValueError)
