"""What a crash exploration found: where a harness was crashed (`CrashPoint`), each replay's
commits, violations and transcript (`Lifetime`, `PointResult`), and the whole result with its
report (`Exploration`). Made by `durable.testing.explore`, which re-exports them."""

from __future__ import annotations

from typing import Any, Literal

import attrs
from attrs import frozen

Side = Literal["before", "after"]


@frozen
class CrashPoint:
    """Where a harness dies: just `"before"` or just `"after"` its commit number `commit`
    (counted from 1 per harness, the open commit included)."""

    side: Side
    commit: int

    def __str__(self) -> str:
        return f"just {self.side} commit {self.commit}"


@attrs.define
class Lifetime:
    """One harness on the file: its commits (described one per line) and whether it crashed."""

    commits: int
    history: list[str]
    crashed: bool


@attrs.define
class PointResult:
    """One replay: where it crashed (one point per crashed lifetime), what commit that was, what
    was violated, and the final transcript."""

    points: tuple[CrashPoint, ...]  # () for the run without a crash
    crashed: bool  # every point was reached
    lifetimes: list[Lifetime]
    commit: str  # what the commit of the last point wrote ("" when not reached)
    violations: list[str]
    transcript: str
    reports: list[Any] = attrs.field(factory=list)
    polls: int = 0  # real-time polls while settling (0: quiescence was seen from events alone)

    @property
    def point(self) -> CrashPoint | None:
        return self.points[0] if self.points else None

    @property
    def commits(self) -> int:
        """Commits of the first harness (up to its crash)."""
        return self.lifetimes[0].commits

    @property
    def history(self) -> list[str]:
        return self.lifetimes[0].history

    @property
    def ok(self) -> bool:
        return not self.violations

    def where(self) -> str:
        if not self.points:
            return "the run without a crash"
        return ", then ".join(
            f"a crash {p}" + (" of the reopened harness" if i else "") for i, p in enumerate(self.points))

    def only(self) -> str:
        """The `only=` argument that replays this point."""
        if len(self.points) == 1:
            p = self.points[0]
            return f"({p.side!r}, {p.commit})"
        return "[" + ", ".join(f"({p.side!r}, {p.commit})" for p in self.points) + "]"


@attrs.define
class Exploration:
    """The result of `explore`. `crash_points` counts the replays that crashed where asked."""

    scenario: str
    commits: int
    baseline: PointResult
    results: list[PointResult]

    @property
    def crash_points(self) -> int:
        return sum(1 for r in self.results if r.crashed)

    @property
    def failures(self) -> list[PointResult]:
        return [r for r in [self.baseline, *self.results] if r.violations]

    @property
    def missed(self) -> list[PointResult]:
        """Points a replay never reached (its run had fewer commits than the first run)."""
        return [r for r in self.results if not r.crashed]

    def summary(self) -> str:
        return (f"{self.scenario}: {self.commits} commits, {self.crash_points} crash points covered, "
                f"{len(self.failures)} with violations")

    def report(self) -> str:
        lines = [self.summary()]
        for r in self.failures:
            lines.append("")
            lines.append(f"After {r.where()} ({r.commit or 'no commit'}):")
            lines += [f"  - {v}" for v in r.violations]
            if r.points:
                lines.append(f"  reproduce: await explore({self.scenario}, only={r.only()})")
            lines.append("  " + r.transcript.replace("\n", "\n  "))
        return "\n".join(lines)

    def assert_ok(self) -> None:
        """Raise `AssertionError` with the full report when any point has violations."""
        if self.failures:
            raise AssertionError(self.report())


__all__ = ["CrashPoint", "Exploration", "Lifetime", "PointResult", "Side"]
