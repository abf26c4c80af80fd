"""The standalone console reads a live document again by what changed in its row (`LiveDocs`):
a streamed answer's text alone when only it changed, inline or kept apart; the document and
its data are exactly those decoding the row whole gives, whatever the text holds."""

from __future__ import annotations

import json

from durable import codec, records as r
from durable.console.sources import LiveDocs
from durable.storage import rows
from durable.storage.texts import split_live

# texts a JSON string must escape, and the place the console looks for, inside the answer itself
TRICKY = ['', 'a', 'say "hi"', 'back\\slash\\', 'line\nbreak\ttab', 'é 中文 🙂', '\x01\x1f',
          '"generation":{"attempt":1,"message":{"text":"', '"}}', '\\"', 'end\\']


def doc(text: str, *, attempt: int = 1, retry: bool = False, output: str = "", reasoning: str = "") -> r.Live:
    waiting = r.RetryLive(attempt, 5.0, "boom", "transient") if retry else None
    return r.Live(run=r.Run(task_id=1, inputs=("sub_1",)),
                  generation=r.GenerationLive(attempt, r.PartialMessage(text=text, reasoning=reasoning), retry=waiting),
                  tools=(r.ToolSlot("call_1", "search", 2, output=output),),
                  usage=r.UsageTotals(models=(r.ModelUsage("faux", 1, 2, 3),)))


def row(live: r.Live, *, apart: bool = False) -> tuple[str, str, dict[str, str] | None]:
    """The row the store writes of `live` (its long texts kept apart when `apart`)."""
    body, texts = split_live(live) if apart else (live, {})
    return ("c1", codec.dumps(body, r.Live), texts or None)


def check(docs: LiveDocs, found: tuple[str, str, dict[str, str] | None]) -> None:
    """The document `docs` holds is the row decoded whole, and so is its data, key order too."""
    cid, body, texts = found
    whole = rows.live(body, cid, "s.sqlite", texts)
    held = docs.docs[cid]
    assert held.doc == whole
    assert json.dumps(held.data) == json.dumps(codec.to_data(whole))


def test_an_inline_answer_growing_is_read_alone_and_the_same_as_decoded_whole():
    docs = LiveDocs("s.sqlite")
    text = ""
    first = row(doc(text, output='tool "output" with "generation":{"attempt":1,"message":{"text":"x'))
    assert docs.update([first]) == ["c1"]
    check(docs, first)
    for piece in TRICKY + list(reversed(TRICKY)):
        text += piece
        found = row(doc(text, output='tool "output" with "generation":{"attempt":1,"message":{"text":"x'))
        assert docs.update([found]) == (["c1"] if piece else [])
        check(docs, found)
    assert docs.decoded == 1  # every other row changed only in the answer's text

    again = row(doc(text + "!", attempt=2, output='tool "output" with "generation":{"attempt":1,"message":{"text":"x'))
    docs.update([again])  # the attempt changed too (as long as it was): decoded whole
    check(docs, again)
    assert docs.decoded == 2
    shorter = row(doc("a new attempt", attempt=2))  # other fields changed too: decoded whole
    assert docs.update([shorter]) == ["c1"]
    check(docs, shorter)
    retrying = row(doc("a new attempt", attempt=2, retry=True))
    docs.update([retrying])
    check(docs, retrying)
    assert docs.decoded == 4
    grown = row(doc("a new attempt, longer", attempt=2, retry=True))
    docs.update([grown])
    check(docs, grown)
    assert docs.decoded == 4


def test_an_answer_kept_apart_growing_joins_the_texts_again_and_is_the_same_as_decoded_whole():
    docs = LiveDocs("s.sqlite")
    text = "x" * 300  # past `LIVE_LONG`: kept apart, the body stays the same as it grows
    for piece in ["", *TRICKY]:
        text += piece
        found = row(doc(text, output="o" * 400 + piece, reasoning="r" * 300 + piece), apart=True)
        assert found[2] is not None and set(found[2]) == {"generation", "reasoning", "tool:2"}
        docs.update([found])
        check(docs, found)
    assert docs.decoded == 1
    answered = row(r.Live(usage=r.UsageTotals(models=(r.ModelUsage("faux", 1, 2, 60),))))
    docs.update([answered])
    check(docs, answered)
    assert docs.decoded == 2


def test_usage_is_summed_again_only_when_a_documents_usage_changed():
    docs = LiveDocs("s.sqlite")
    c2 = ("c2", codec.dumps(doc("b"), r.Live), None)
    docs.update([row(doc("a")), c2])
    both = docs.usage()
    assert both.models == (r.ModelUsage("faux", 2, 4, 6),)
    docs.update([row(doc("ab")), c2])
    assert docs.usage() is both  # the answer grew: the same usage
    docs.update([row(r.Live(usage=r.UsageTotals(models=(r.ModelUsage("faux", 1, 2, 9),)))), c2])
    assert docs.usage().models == (r.ModelUsage("faux", 2, 4, 12),)
    assert docs.update([c2]) == []  # c1 deleted: its usage leaves the sum
    assert list(docs.docs) == ["c2"]
    assert docs.usage().models == (r.ModelUsage("faux", 1, 2, 3),)
