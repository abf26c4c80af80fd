"""The codec's hooks checked in as Python source (durable/_codec_hooks.py, written by
scripts/codec_hooks.py; never stale: tests/test_checked_in_source.py): used only for a class
that still has the fields they were written for."""

from __future__ import annotations

import attrs
import pytest

from durable import _codec_hooks, _written_hooks, codec, records as r


def test_a_checked_in_hook_is_the_source_cattrs_generated_kept_under_cattrs_name():
    import linecache

    hook = codec.converter.get_unstructure_hook(r.UserEntry)
    assert hook.__code__.co_filename == "<cattrs generated unstructure durable.records.entries.UserEntry>"
    assert hook.__qualname__ == "_u_durable_records_entries_UserEntry.<locals>.unstructure_UserEntry"  # made from it
    written = _codec_hooks.HOOKS["unstructure", "durable.records.entries.UserEntry"][2]
    assert "\n".join(linecache.getlines(hook.__code__.co_filename)) == written
    assert codec.to_data(r.UserEntry(text="hi")) == {"text": "hi", "submission_id": None}


@attrs.frozen
class Moved:  # stands for a record class changed since the hooks were written
    text: str
    size: int = 0


def test_a_class_whose_fields_changed_since_gets_its_hook_from_cattrs(monkeypatch: pytest.MonkeyPatch):
    key = f"{Moved.__module__}.{Moved.__qualname__}"
    written = _codec_hooks.HOOKS["unstructure", "durable.records.entries.UserEntry"]
    monkeypatch.setitem(_codec_hooks.HOOKS, ("unstructure", key), (written[0], ("text", "gone"), written[2]))
    assert _written_hooks.written_hook("unstructure", Moved, codec.converter) is None
    assert codec.to_data(Moved("a", 2)) == {"text": "a", "size": 2}


def test_with_another_cattrs_than_the_one_they_were_written_from_cattrs_makes_every_hook(
        monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_written_hooks, "_same_cattrs", lambda: False)
    assert _written_hooks.written_hook("unstructure", r.UserEntry, codec.converter) is None
