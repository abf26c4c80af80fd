"""The moves of the transition tables that explorations make, shared between the tests that make
them and the test that checks every declared move is made (`tests/engine/test_transitions.py`).

An exploration of a scenario (every commit boundary, `durable.testing.explore`) takes 2-20 s; the
table test needs those of every scenario, which `tests/crash/test_explore.py` makes anyway. So
each of those records the moves it saw in a directory of the run (`run_dir`: one for the whole
pytest run, shared by its pytest-xdist workers, made by the controller), and the table test
explores itself only the scenarios no test recorded yet (all of them when it runs alone)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from durable import records as r
from durable.engine.transitions import Transitions, position_of

Move = tuple[str, tuple[str, str], tuple[str, str]]


@contextmanager
def recording(monkeypatch: Any) -> Iterator[set[Move]]:
    """Every move `Transitions.check` passes meanwhile (it still raises on one its table lacks):
    (kind, from, to), a move to a terminal state as ("terminal", "*"); staying put and a fault
    (which may end a task anywhere) are not moves."""
    seen: set[Move] = set()
    check = Transitions.check

    def record(self: Transitions, old: Any, new: Any, kind: str) -> None:
        check(self, old, new, kind)  # raises on a move the table does not list
        src, dst = position_of(old), position_of(new)
        if src != dst and not isinstance(new.outcome, r.Faulted):
            seen.add((kind, src, ("terminal", "*") if dst[0] == "terminal" else dst))

    with monkeypatch.context() as patched:
        patched.setattr(Transitions, "check", record)
        yield seen


def _path(run_dir: str, key: str) -> str:
    return os.path.join(run_dir, f"{key}.json")


def save(run_dir: str | None, key: str, seen: set[Move]) -> None:
    """Record the moves an exploration `key` made (written whole, then renamed: a reader in
    another worker sees all of it or nothing)."""
    if run_dir is None:
        return
    tmp = _path(run_dir, key) + f".{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(sorted(seen), f)
    os.replace(tmp, _path(run_dir, key))


def load(run_dir: str | None, key: str) -> set[Move] | None:
    """The moves recorded for `key` in this run, or None when no test recorded them yet."""
    if run_dir is None:
        return None
    try:
        with open(_path(run_dir, key)) as f:
            return {(kind, (a[0], a[1]), (b[0], b[1])) for kind, a, b in json.load(f)}
    except FileNotFoundError:
        return None
