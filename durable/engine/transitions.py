"""Transitions as data: the moves each task kind may make, checked by the commit line.

A task is at a *position*: its state tag (`pending`, `running`, `sleeping`, `waiting`,
`terminal`) and its phase (the tag of its checkpoint, `none` without one). Each kind declares one
`Transitions` table: the positions a new task may start at, the state moves and the phase moves it
allows. Staying where it is (the same state, or the same phase with new content) is always
allowed; leaving `terminal` never is. The commit line (`Change.put_task`) checks every write
against the table of the task's kind, so a move the table does not list is refused with
`IllegalTransition` naming the task, its kind and both positions, before anything is written.

The tables are the state machines: the docstring diagrams of the task kinds are `diagram()`'s
text, and a test holds each docstring to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from attrs import field, frozen

from ..codec import tag_of
from ..errors import IllegalTransition
from ..records import Task

NO_PHASE = "none"


def phase_of(task: Task) -> str:
    """The phase tag of a task: its checkpoint's stored tag, or `none`."""
    return NO_PHASE if task.checkpoint is None else tag_of(task.checkpoint)


def state_of(task: Task) -> str:
    return tag_of(task.state)


def _frozen_map(value: Mapping[str, frozenset[str] | set[str]]) -> Mapping[str, frozenset[str]]:
    return {k: frozenset(v) for k, v in value.items()}


def _positions(value: Iterable[tuple[str, str]]) -> frozenset[tuple[str, str]]:
    return frozenset(value)


@frozen
class Transitions:
    """The allowed moves of one task kind.

    `start`: the (state, phase) pairs a new task may be created at. `states` and `phases`: for
    each state (phase), the states (phases) it may move to. A phase may also stay the same while
    its content changes, and every state may end `terminal`."""

    kind: str
    start: frozenset[tuple[str, str]] = field(converter=_positions)
    states: Mapping[str, frozenset[str]] = field(converter=_frozen_map)
    phases: Mapping[str, frozenset[str]] = field(converter=_frozen_map)

    def check_start(self, task: Task) -> None:
        position = (state_of(task), phase_of(task))
        if position not in self.start:
            allowed = ", ".join(sorted(f"{s}/{p}" for s, p in self.start))
            raise IllegalTransition(
                f"Task {task.id} ({self.kind}) cannot be created {position[0]}/{position[1]} "
                f"(a {self.kind} task starts at {allowed})")

    def check(self, old: Task, new: Task) -> None:
        old_state, new_state = state_of(old), state_of(new)
        old_phase, new_phase = phase_of(old), phase_of(new)
        state_ok = old_state != "terminal" and (
            new_state == old_state or new_state == "terminal" or new_state in self.states.get(old_state, ()))
        phase_ok = new_phase == old_phase or new_phase in self.phases.get(old_phase, ())
        if not (state_ok and phase_ok):
            raise IllegalTransition(
                f"Task {new.id} ({self.kind}) cannot move from {old_state}/{old_phase} to {new_state}/{new_phase}")

    def diagram(self) -> str:
        """The phase moves as text, one line per phase: `prepare -> poll | request`."""
        return "\n".join(f"{phase} -> {' | '.join(sorted(nexts))}" for phase, nexts in self.phases.items() if nexts)


__all__ = ["NO_PHASE", "Transitions", "phase_of", "state_of"]
