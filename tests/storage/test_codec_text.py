"""`codec.dumps` writes records through generated text functions (`durable._json_text`): the text
must be exactly what unstructuring with the converter and the JSON encoder writes, for every
record and every value, including values of an unexpected type in a field (they are written the
old way) and values JSON cannot hold (refused as before)."""

from __future__ import annotations

import typing

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from durable import codec, records as r
from durable._frozen import OMITTED_WHEN_DEFAULT, frozen
from durable.records import entries, live as live_records
from durable.tasks.generation.records import Request, ToolRound
from durable.tasks.tool import ToolInput

from .strategies import LIVE_WITH_EVERY_PART, RECORD_CLASSES, of, records

EXAMPLES = settings(max_examples=60, deadline=None)


@pytest.fixture(autouse=True)
def _text_functions_at_once(monkeypatch):
    """Every write takes the generated function (not only from a class's 32nd write on)."""
    monkeypatch.setattr(codec, "_MAKE_AFTER", 1)


def old_text(value, cls=None):
    """The text as `dumps` wrote it before the generated functions."""
    return codec._encode(codec.to_data(value, cls))


def outcome(fn):
    try:
        return ("text", fn())
    except Exception as exc:  # noqa: BLE001 - compared as (type, message)
        return (type(exc).__name__, str(exc))


def same(value, cls=None):
    """dumps writes what the old way writes, or raises what it raised."""
    new = outcome(lambda: codec.dumps(value, cls))
    old = outcome(lambda: old_text(value, cls))
    if old[0] in ("TypeError", "ValueError"):  # dumps says so with a CodecError
        assert new[0] == "CodecError" and old[1] in new[1], (new, old)
    else:
        assert new == old


LIVE_CLASSES = sorted((c for c in vars(live_records).values()
                       if isinstance(c, type) and attrs.has(c) and c.__module__ == live_records.__name__),
                      key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", RECORD_CLASSES + LIVE_CLASSES, ids=lambda c: c.__name__)
@EXAMPLES
@given(data=st.data())
def test_every_record_is_written_as_the_converter_and_the_encoder_write_it(cls, data):
    value = data.draw(records(cls))
    same(value, cls)
    same(value)


@pytest.mark.parametrize("union", list(codec._TAGS), ids=lambda u: "|".join(a.__name__ for a in typing.get_args(u)))
@EXAMPLES
@given(data=st.data())
def test_every_variant_is_written_with_its_tag_as_before(union, data):
    same(data.draw(of(union)), union)


@EXAMPLES
@given(live=LIVE_WITH_EVERY_PART)
def test_a_live_document_with_every_part_is_written_as_before(live):
    same(live, r.Live)


class _Int(int):
    pass


class _Str(str):
    pass


class _Float(float):
    pass


@attrs.frozen
class _NotAVariant:
    x: int = 1


def _task(**changes):
    base = r.Task(id=3, conversation_id="c", kind="tool", input=ToolInput(call=entries.ToolCall("a", "t", "{}")),
                  state=r.Running(), created_at=1.5, updated_at=2.5)
    return attrs.evolve(base, **changes)


@pytest.mark.parametrize("value", [
    _task(id=True), _task(id=_Int(5)), _task(id=2**80), _task(id=10**5000), _task(id="seven"), _task(id=None),
    _task(conversation_id=_Str("c")), _task(conversation_id=7), _task(conversation_id='quote " back \\ \n \x00 ü'),
    _task(created_at=float("nan")), _task(created_at=float("inf")), _task(updated_at=-float("inf")),
    _task(created_at=_Float(1.25)), _task(created_at=3), _task(created_at=1e16), _task(created_at=-0.0),
    _task(parent_id=True), _task(parent_id="p"), _task(stop="aborted"), _task(stop=5),
    _task(input=ToolInput(call=entries.ToolCall("a", "t", "{}"), replay=_Str("safe"), client=0, deadline=_Int(3))),
    _task(input=ToolInput(call=entries.ToolCall(1, None, b"x"), deadline=float("nan"))),
    _task(state=r.Waiting(on=[1, 2], client=False)), _task(state=r.Waiting(on=(True, 2.5, "x", None), client=1)),
    _task(state=r.Terminal(r.Done(result=object()))), _task(state=_NotAVariant()), _task(state=None),
    _task(checkpoint=ToolRound(assistant_seq=1, calls=[entries.ToolCall("i", "n", "{}")], pending=(), round=1)),
    _task(checkpoint=ToolRound(assistant_seq=1, calls=(entries.ToolCall("i", "n", "{}"), "not a call"), pending=(),
                                 round=1)),
    _task(checkpoint=Request(attempt=1, options={"a": [1, {"b": None}], "c": float("nan")})),
])
def test_a_value_of_an_unexpected_type_in_a_field_is_written_or_refused_as_before(value):
    same(value, r.Task)
    same(value, r.State) if isinstance(value, r.State) else None


def test_a_subclass_instance_is_written_as_its_declared_class_as_before():
    @attrs.frozen
    class Sub(r.UserEntry):
        extra: int = 9

    same(Sub("hi"), r.UserEntry)
    same(Sub("hi"), r.Entry)
    same(Sub("hi"))


def test_lone_surrogates_are_escaped_as_before():
    entry = r.UserEntry("raw \udcff bytes")
    text = codec.dumps(entry, r.Entry)
    text.encode("utf-8")
    assert codec.loads(text, r.Entry) == entry


@pytest.mark.parametrize("cls", [r.Task, r.Submission, r.Live, *codec._TAGS],
                         ids=lambda c: getattr(c, "__name__", None) or "|".join(a.__name__ for a in typing.get_args(c)))
def test_the_records_a_commit_writes_have_a_text_function(cls):
    """The fast way is really taken for what every commit writes: a cattrs release that changes
    the shape of its generated hooks would leave every record to the old way without a test
    failing on the texts."""
    assert codec._ENCODERS.encoder_for(cls) is not None


@frozen
class _Sparse:
    """A record with fields written only when they differ from their default."""

    kept: int = 0
    count: int = attrs.field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    note: str | None = attrs.field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class _HoldsSparse:
    first: _Sparse = _Sparse()
    second: _Sparse = attrs.field(default=_Sparse(), metadata=OMITTED_WHEN_DEFAULT)


@pytest.mark.parametrize(("value", "text"), [
    (_Sparse(), '{"kept":0}'),
    (_Sparse(1, 2, "x"), '{"kept":1,"count":2,"note":"x"}'),
    (_Sparse(0, 0, "y"), '{"kept":0,"note":"y"}'),
    (_HoldsSparse(), '{"first":{"kept":0}}'),
    (_HoldsSparse(_Sparse(1), _Sparse(2, 3)), '{"first":{"kept":1},"second":{"kept":2,"count":3}}'),
])
def test_a_field_omitted_when_default_is_written_only_when_it_differs_and_read_back_as_its_default(value, text):
    assert codec.dumps(value) == text == old_text(value)
    assert codec.loads(text, type(value)) == value
    fast = codec._ENCODERS.encoder_for(type(value))
    assert fast is not None and fast(value) == text  # the fast way, with the conditional keys (never falling back)
