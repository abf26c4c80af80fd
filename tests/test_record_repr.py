"""The repr of a record is attrs' own text, though attrs no longer writes it (durable._frozen
shares one `__repr__` so that defining a record class compiles less at import)."""

from __future__ import annotations

import threading
from typing import Any

import attrs

import durable
from durable import _frozen, records as r


def _pair(**kwargs: Any) -> tuple[type, type]:
    """The same class body decorated by attrs and by durable._frozen."""

    def body() -> type:
        class Sample:
            name: str
            count: int = 0
            secret: str = attrs.field(default="hidden", repr=False)
            shown: Any = attrs.field(default=None, repr=lambda v: f"<{v}>")
            rest: Any = None

        return Sample

    return attrs.frozen(body(), **kwargs), _frozen.frozen(body(), **kwargs)


def test_the_shared_repr_writes_what_attrs_writes():
    by_attrs, shared = _pair()
    assert shared.__repr__ is not by_attrs.__repr__
    for args in [("a",), ("b", 3, "s", 7, [1, "x"]), ("é\n", -1, "", None, {"k": (1,)})]:
        assert repr(shared(*args)) == repr(by_attrs(*args))
    assert repr(shared("a", 2, "s", "v")) == "Sample(name='a', count=2, shown=<v>, rest=None)"


def test_a_value_met_again_inside_its_own_repr_is_written_as_dots_as_attrs_does():
    by_attrs, shared = _pair()
    loop_a: list[Any] = []
    loop_s: list[Any] = []
    a, s = by_attrs("a", rest=loop_a), shared("a", rest=loop_s)
    loop_a.append(a)
    loop_s.append(s)
    assert repr(s) == repr(a) == "Sample(name='a', count=0, shown=<None>, rest=[...])"
    assert repr(shared("b", rest=s)) == repr(by_attrs("b", rest=a))  # the guard is emptied after


def test_the_guard_is_per_thread():
    _, shared = _pair()
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(repr(shared("t"))))
    t.start()
    t.join()
    assert out == ["Sample(name='t', count=0, shown=<None>, rest=None)"]


def test_a_class_that_writes_its_own_repr_or_asks_for_one_keeps_it():
    @_frozen.frozen
    class Own:
        x: int

        def __repr__(self) -> str:
            return "own"

    assert repr(Own(1)) == "own"
    _, asked = _pair(repr=False)
    assert repr(asked("a")).startswith("<")  # object's own repr, as attrs gives with repr=False


def test_records_read_as_they_always_did():  # the texts attrs wrote before
    task = r.Task(7, "root", "generation", r.GenerationInput(("s-1",)), r.Running(), r.Request(1, {"t": 0.5}),
                  parent_id=3)
    assert repr(task) == (
        "Task(id=7, conversation_id='root', kind='generation', input=GenerationInput(submission_ids=('s-1',)), "
        "state=Running(), checkpoint=Request(attempt=1, options={'t': 0.5}, rounds=0), restarts=0, parent_id=3, "
        "stop=None, created_at=0.0, updated_at=0.0)"
    )
    assert repr(durable.Terminal(durable.Failed(durable.ErrorInfo("boom", durable.ErrorDetail("model_error"))))) == (
        "Terminal(outcome=Failed(error=ErrorInfo(message='boom', detail=ErrorDetail(reason='model_error'))))"
    )
    assert repr(durable.Live()) == (
        "Live(run=None, generation=None, tools=(), run_failure=None, compaction_failure=None, compactions=0)"
    )
    assert repr(durable.Settings().retry) == (
        "RetryPolicy(enabled=True, max_retries=3, base_delay=1.0, max_delay=60.0)"
    )
