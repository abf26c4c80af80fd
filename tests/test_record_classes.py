"""A record's repr, equality and hash are attrs' own, though attrs no longer writes them when the
class is defined (durable._frozen: a shared repr, equality and hash compiled on first use, so
that defining a record class compiles less at import)."""

from __future__ import annotations

import threading
from typing import Any

import attrs

import durable
from durable import _frozen, records as r
from durable.tasks.generation.records import GenerationInput, Request


def _pair(**kwargs: Any) -> tuple[type, type]:
    """The same class body decorated by attrs and by durable._frozen."""

    def body() -> type:
        class Sample:
            name: str
            count: int = 0
            secret: str = attrs.field(default="hidden", repr=False)
            shown: Any = attrs.field(default=None, repr=lambda v: f"<{v}>")
            rest: Any = None
            ignored: int = attrs.field(default=0, eq=False)
            folded: str = attrs.field(default="", eq=str.lower)

        return Sample

    return attrs.frozen(body(), **kwargs), _frozen.frozen(body(), **kwargs)


def test_the_shared_repr_writes_what_attrs_writes():
    by_attrs, shared = _pair()
    assert shared.__repr__ is not by_attrs.__repr__
    for args in [("a",), ("b", 3, "s", 7, [1, "x"]), ("é\n", -1, "", None, {"k": (1,)})]:
        assert repr(shared(*args)) == repr(by_attrs(*args))
    assert repr(shared("a", 2, "s", "v")) == "Sample(name='a', count=2, shown=<v>, rest=None, ignored=0, folded='')"


def test_a_value_met_again_inside_its_own_repr_is_written_as_dots_as_attrs_does():
    by_attrs, shared = _pair()
    loop_a: list[Any] = []
    loop_s: list[Any] = []
    a, s = by_attrs("a", rest=loop_a), shared("a", rest=loop_s)
    loop_a.append(a)
    loop_s.append(s)
    assert repr(s) == repr(a) == "Sample(name='a', count=0, shown=<None>, rest=[...], ignored=0, folded='')"
    assert repr(shared("b", rest=s)) == repr(by_attrs("b", rest=a))  # the guard is emptied after


def test_the_guard_is_per_thread():
    _, shared = _pair()
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(repr(shared("t"))))
    t.start()
    t.join()
    assert out == ["Sample(name='t', count=0, shown=<None>, rest=None, ignored=0, folded='')"]


def test_equality_and_hash_are_what_attrs_gives_made_on_first_use():
    by_attrs, shared = _pair()
    assert shared.__eq__.__code__.co_filename == _frozen.__file__  # the stub, until the first comparison
    pairs = [
        (("a",), ("a",)), (("a", 1), ("a", 2)), (("a", 1, "x"), ("a", 1, "y")),  # secret is compared, not shown
        (("a", 0, "", None, None, 1), ("a", 0, "", None, None, 2)),  # eq=False: ignored
        (("a", 0, "", None, None, 0, "AbC"), ("a", 0, "", None, None, 0, "abc")),  # eq key: folded
        (("a", 0, "", None, None, 0, "AbC"), ("a", 0, "", None, None, 0, "abd")),
        (("a", 0, "", [1]), ("a", 0, "", [1])),
    ]
    for left, right in pairs:
        expected = (by_attrs(*left) == by_attrs(*right), by_attrs(*left) != by_attrs(*right))
        assert (shared(*left) == shared(*right), shared(*left) != shared(*right)) == expected, (left, right)
        if expected[0] and not any(isinstance(v, list) for v in left):
            assert hash(shared(*left)) == hash(shared(*right))
    assert shared("a").__eq__(by_attrs("a")) is NotImplemented  # another class: Python decides
    assert shared("a").__ne__(by_attrs("a")) is NotImplemented
    assert shared("a") != by_attrs("a") and shared("a") != "a"
    assert {shared("a", 1): 1}[shared("a", 1)] == 1
    assert shared.__eq__.__code__.co_filename == "<durable record __eq__ for _pair.<locals>.body.<locals>.Sample>"
    assert hash(shared("a", 1)) != hash(shared("a", 2))  # (not guaranteed, but a collision here would be a bug)
    try:
        hash(shared("a", 0, "", [1]))
    except TypeError as exc:  # a list field is unhashable, as with attrs
        assert str(exc) == "unhashable type: 'list'"
    else:
        raise AssertionError("a record holding a list should not hash")


def test_a_subclass_compares_as_attrs_lets_it():
    _, shared = _pair()

    class Sub(shared):  # type: ignore[misc, valid-type]  # a plain subclass, as a user may write
        pass

    assert Sub("a") == Sub("a") and Sub("a") != shared("a") and shared("a") != Sub("a")
    assert hash(Sub("a")) == hash(Sub("a"))


def test_mutable_records_keep_attrs_equality_and_are_unhashable():
    @_frozen.define
    class Mutable:
        x: int

    assert Mutable(1) == Mutable(1) and Mutable(1) != Mutable(2)
    assert Mutable.__hash__ is None


def test_a_class_that_writes_its_own_methods_or_asks_for_them_keeps_them():
    @_frozen.frozen
    class Own:
        x: int

        def __repr__(self) -> str:
            return "own"

    assert repr(Own(1)) == "own"
    _, asked = _pair(repr=False, eq=False)
    assert repr(asked("a")).startswith("<")  # object's own repr, as attrs gives with repr=False
    assert asked("a") != asked("a")  # object's own identity equality, as attrs gives with eq=False


def test_records_read_as_they_always_did():  # the texts attrs wrote before
    task = r.Task(7, "root", "generation", GenerationInput(("s-1",)), r.Running(), Request(1, {"t": 0.5}),
                  parent_id=3)
    assert repr(task) == (
        "Task(id=7, conversation_id='root', kind='generation', input=GenerationInput(submission_ids=('s-1',), "
        "settings=None), state=Running(), checkpoint=Request(attempt=1, options={'t': 0.5}, rounds=0, "
        "notes=RunNotes(instructions=None, output_retries=0, model=0)), restarts=0, parent_id=3, "
        "stop=None, created_at=0.0, updated_at=0.0)"
    )
    assert repr(durable.Terminal(durable.Failed(durable.ErrorInfo("boom", durable.ErrorDetail("model_error"))))) == (
        "Terminal(outcome=Failed(error=ErrorInfo(message='boom', detail=ErrorDetail(reason='model_error'))))"
    )
    assert repr(durable.Live()) == (
        "Live(run=None, generation=None, tools=(), approvals=(), run_failure=None, compaction_failure=None, "
        "compactions=0, usage=UsageTotals(models=(), tool_calls=0, tool_seconds=0.0), archived=False, "
        "forked_from=None, forked_at=0, parent=None)"
    )
    assert repr(durable.Settings().retry) == (
        "RetryPolicy(enabled=True, max_retries=3, base_delay=1.0, max_delay=60.0)"
    )


def test_evolve_gives_what_attrs_evolve_gives_for_every_record_class():
    task = r.Task(7, "root", "generation", GenerationInput(("s-1",)), r.Running(), Request(1, {"t": 0.5}),
                  restarts=2, parent_id=3)
    for changes in [{}, {"state": r.Pending()}, {"restarts": 0, "updated_at": 9.5}, {"checkpoint": None, "id": 8}]:
        mine, theirs = _frozen.evolve(task, **changes), attrs.evolve(task, **changes)
        assert mine == theirs and repr(mine) == repr(theirs) and mine is not task
    live = durable.Live(compactions=2)
    assert _frozen.evolve(live, tools=(), compactions=3) == attrs.evolve(live, tools=(), compactions=3)
    assert task == r.Task(7, "root", "generation", GenerationInput(("s-1",)), r.Running(), Request(1, {"t": 0.5}),
                          restarts=2, parent_id=3)  # the original is untouched


def test_evolve_refuses_a_name_the_class_does_not_take_as_attrs_does():
    task = r.Task(1, "c", "tool", None)
    try:
        _frozen.evolve(task, bogus=1)
    except TypeError as exc:
        assert str(exc) == "Task.__init__() got an unexpected keyword argument 'bogus'"
    else:
        raise AssertionError("no TypeError")


def test_evolve_goes_through_init_for_a_class_that_checks_or_converts():
    @_frozen.frozen
    class Checked:
        n: int = attrs.field(converter=int)
        m: int = attrs.field(default=0, validator=attrs.validators.ge(0))
        _hidden: str = attrs.field(default="h", alias="shown")
        later: list[int] = attrs.field(init=False, factory=list)

    c = Checked("4")
    assert _frozen.evolve(c, n="5") == attrs.evolve(c, n="5") == Checked(5)
    assert _frozen.evolve(c, shown="x")._hidden == "x"
    try:
        _frozen.evolve(c, m=-1)
    except ValueError as exc:
        assert "'m' must be >= 0: -1" in str(exc)
    else:
        raise AssertionError("the validator did not run")
