"""Hypothesis strategies for every record, derived from the records' own type annotations.

`records(cls, **overrides)` builds any attrs record of `durable.records`: every field gets a
strategy from its annotation (unions become `one_of` their variants, so every state, outcome,
checkpoint, input, entry and status is drawn), and `overrides` pins a field to one variant.
Deriving from the annotations keeps the strategies complete when a record gains a field.

Values are what JSON holds exactly: finite floats, 64-bit ints (ids and seqs are SQLite integer
keys), text without lone surrogates (those have their own test), and `Any` as JSON values.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, Literal, Union

import attrs
from hypothesis import strategies as st

import durable.tasks  # noqa: F401 - the standard kinds register their records
from durable import codec, records as r
from durable.tasks import cancel, compaction, tool
from durable.tasks.generation import records as generation

INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
FLOATS = st.floats(allow_nan=False)
TEXT = st.text(max_size=12)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | INT64 | FLOATS | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)

RECORD_MODULES = (r, generation, tool, compaction, cancel)
"""Where records are defined: the shared ones, and each standard kind's own."""
RECORD_CLASSES = sorted(
    {cls for module in RECORD_MODULES for cls in vars(module).values()
     if isinstance(cls, type) and attrs.has(cls) and cls.__module__.startswith(module.__name__)},
    key=lambda cls: cls.__name__,
)


@functools.cache
def of(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy for values of the annotation `tp`."""
    if tp is Any:
        return JSON_VALUES
    simple = {str: TEXT, int: INT64, float: FLOATS, bool: st.booleans(), type(None): st.none()}
    if tp in simple:
        return simple[tp]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return st.sampled_from(args)
    if origin in (Union, types.UnionType):
        return st.one_of([of(a) for a in args])
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return st.lists(of(args[0]), max_size=3).map(tuple)
    if origin is dict:
        return st.dictionaries(of(args[0]), of(args[1]), max_size=3)
    if tp in (r.TaskInput, r.Checkpoint):
        return st.one_of([records(cls) for cls in variants(tp)])
    if isinstance(tp, type) and attrs.has(tp):
        return records(tp)
    raise TypeError(f"no strategy for {tp!r}: add one to tests/storage/strategies.py")


def _model_settings() -> st.SearchStrategy[Any]:
    """Valid `ModelSettings` (each field None or a value it accepts)."""
    def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.none() | strategy

    name = st.text(min_size=1, max_size=8)
    return st.builds(
        r.ModelSettings, temperature=maybe(st.floats(0, 2)), top_p=maybe(st.floats(0, 1)),
        max_tokens=maybe(st.integers(1, 1 << 20)), stop=maybe(st.lists(name, max_size=3).map(tuple)),
        seed=maybe(INT64), reasoning_effort=maybe(name), thinking_budget=maybe(st.integers(1, 1 << 20)),
        tool_choice=maybe(name), parallel_tool_calls=maybe(st.booleans()), service_tier=maybe(name),
        prompt_cache=maybe(st.booleans()),
        extra=maybe(st.dictionaries(TEXT, st.none() | st.booleans() | INT64 | TEXT, max_size=3)),
        model=maybe(name))


def records(cls: type, **overrides: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Instances of the attrs record `cls`; `overrides` replaces the strategy of named fields."""
    if cls is r.ModelSettings and not overrides:  # its fields are checked when made
        return _model_settings()
    hints = typing.get_type_hints(cls)
    unknown = set(overrides) - {f.name for f in attrs.fields(cls)}
    if unknown:
        raise TypeError(f"{cls.__name__} has no field(s) {sorted(unknown)}")
    return st.builds(cls, **{f.name: overrides[f.name] if f.name in overrides else of(hints[f.name]) for f in attrs.fields(cls)})


def variants(union: Any) -> list[type]:
    """The record classes of a union (without None), or those registered for an open variant."""
    if union in (r.TaskInput, r.Checkpoint):
        return list(codec.variants(union).values())
    return [a for a in typing.get_args(union) if a is not type(None)]


# Every state, with every outcome spelled out as its own terminal state.
STATE_CASES: list[tuple[str, st.SearchStrategy[Any]]] = [
    *((cls.__name__, records(cls)) for cls in variants(r.State) if cls is not r.Terminal),
    *((f"Terminal({cls.__name__})", records(r.Terminal, outcome=records(cls))) for cls in variants(r.Outcome)),
]
CHECKPOINT_CASES = [("None", st.none())] + [(cls.__name__, records(cls)) for cls in variants(r.Checkpoint)]
INPUT_CASES = [(cls.__name__, records(cls)) for cls in variants(r.TaskInput)]

LIVE_WITH_EVERY_PART = records(
    r.Live,
    run=records(r.Run),
    generation=records(
        r.GenerationLive,
        message=records(r.PartialMessage, tool_calls=st.lists(records(r.ToolCall), min_size=1, max_size=2).map(tuple)),
        retry=records(r.RetryLive),
        deferred=records(r.DeferredLive),
    ),
    tools=st.lists(records(r.ToolSlot), min_size=1, max_size=3).map(tuple),
    run_failure=records(r.RunFailure),
    compaction_failure=records(r.CompactionFailure),
)
