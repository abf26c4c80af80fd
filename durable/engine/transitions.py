"""Transitions as data: the positions a task of a kind can be at, and the moves between them.

A *position* is a task's state tag with its phase (its checkpoint's tag, `none` without one),
written `"state/phase"`: `"sleeping/retry"`. Each kind declares one `Transitions` table: the
positions a new task may start at and, for each position, where it may move. `end` as a target
means `terminal` (with any phase of the kind). Staying at a position while its content changes
is always allowed; leaving `terminal` never is; a fault (the harness giving up on a task whose
code raised) may end a task wherever it is. The commit line checks every write against the
table (`Change.put_task`), so a move the table does not list is refused with `IllegalTransition`
naming the task, its kind and both positions, before anything is written.

The kinds' docstring diagrams are `diagram()`'s text (its phase moves), held by a test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from attrs import field

from .._frozen import frozen
from ..codec import tag_of
from ..errors import IllegalTransition
from ..records import Faulted, Task, Terminal

NO_PHASE = "none"
END = "end"
Position = tuple[str, str]


def phase_of(task: Task) -> str:
    """The phase tag of a task: its checkpoint's stored tag, or `none`."""
    return NO_PHASE if task.checkpoint is None else tag_of(task.checkpoint)


def state_of(task: Task) -> str:
    return tag_of(task.state)


def position_of(task: Task) -> Position:
    return tag_of(task.state), phase_of(task)


def _position(text: str) -> Position:
    state, sep, phase = text.partition("/")
    if not sep or not state or not phase:
        raise ValueError(f"A position is written 'state/phase', not {text!r}")
    return state, phase


def _starts(value: Iterable[str]) -> frozenset[Position]:
    return frozenset(_position(p) for p in value)


def _moves(value: Mapping[str, Iterable[str]]) -> Mapping[Position, frozenset[Position]]:
    return {_position(src): frozenset(("terminal", "*") if dst == END else _position(dst) for dst in dsts)
            for src, dsts in value.items()}


@frozen
class Transitions:
    """The positions of one task kind (see the module docstring): `start`, the positions a new
    task may be created at, and `moves`, for each position the positions it may move to."""

    start: frozenset[Position] = field(converter=_starts)
    moves: Mapping[Position, frozenset[Position]] = field(converter=_moves)

    @property
    def positions(self) -> frozenset[Position]:
        """Every position a task of this kind can be at (terminal ones as `terminal/*`)."""
        found = set(self.start) | set(self.moves)
        for targets in self.moves.values():
            found |= targets
        return frozenset(found)

    def knows(self, task: Task) -> bool:
        """Whether the task is at a position of this table."""
        state, phase = position_of(task)
        return (state, phase) in self.positions or (state == "terminal" and ("terminal", "*") in self.positions)

    def check_start(self, task: Task, kind: str) -> None:
        position = position_of(task)
        if position not in self.start:
            allowed = ", ".join(sorted(f"{s}/{p}" for s, p in self.start))
            raise IllegalTransition(
                f"Task {task.id} ({kind}) cannot be created {position[0]}/{position[1]} "
                f"(a {kind} task starts at {allowed})")

    def check(self, old: Task, new: Task, kind: str) -> None:
        src, dst = position_of(old), position_of(new)
        if src[0] == "terminal":
            allowed = False
        elif src == dst or (isinstance(new.state, Terminal) and isinstance(new.state.outcome, Faulted)):
            allowed = True
        else:
            targets = self.moves.get(src, frozenset())
            allowed = dst in targets or (dst[0] == "terminal" and ("terminal", "*") in targets)
        if not allowed:
            raise IllegalTransition(
                f"Task {new.id} ({kind}) cannot move from {src[0]}/{src[1]} to {dst[0]}/{dst[1]}")

    def diagram(self) -> str:
        """The phase moves as text, one line per phase: `prepare -> poll | request`."""
        nexts: dict[str, set[str]] = {}
        for (_, phase), targets in self.moves.items():
            nexts.setdefault(phase, set())
            nexts[phase] |= {p for s, p in targets if s != "terminal" and p != phase}
        return "\n".join(f"{phase} -> {' | '.join(sorted(n))}" for phase, n in nexts.items() if n)


__all__ = ["END", "NO_PHASE", "Position", "Transitions", "phase_of", "position_of", "state_of"]
