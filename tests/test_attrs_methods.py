"""The methods attrs writes for durable's classes, checked in as Python source
(durable/_attrs_methods.py, written by scripts/attrs_methods.py; never stale:
tests/test_checked_in_source.py): the same methods as attrs compiles."""

from __future__ import annotations

import attrs
import pytest

from durable import _attrs_methods, records as r


def test_a_record_class_gets_its_init_from_the_checked_in_source_and_behaves_as_attrs_wrote_it():
    init = r.Sleeping.__init__
    assert init.__code__.co_filename == _attrs_methods.__file__
    assert r.Sleeping(until=12.5).until == 12.5
    with pytest.raises(TypeError, match="positional argument"):
        r.Sleeping(12.5, 1)  # type: ignore[call-arg]


def test_a_class_defined_elsewhere_is_compiled_by_attrs_as_always():
    @attrs.frozen
    class Mine:
        a: int
        b: str = "x"

    assert Mine.__init__.__code__.co_filename.startswith("<attrs generated")
    assert Mine(1) == Mine(1, "x")


def test_a_host_class_written_like_a_record_is_still_compiled_by_attrs():
    """The checked-in methods serve durable's own classes while they are made, never a class of
    the host's, even one whose methods attrs writes word for word as for a record of durable's."""
    @attrs.frozen
    class Sleeping:
        until: float

    assert Sleeping.__init__.__code__.co_filename.startswith("<attrs generated")
    assert Sleeping(until=2.0).until == 2.0
