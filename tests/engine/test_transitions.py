"""The engine's shape: transitions as data, checked on every commit, and the docstrings held to
the tables."""

from __future__ import annotations

import inspect

import attrs
import pytest

import durable
from durable import records as r
from durable.engine.transitions import Transitions, phase_of, state_of
from durable.models import FauxModel, faux
from durable.tasks import CancelKind, CompactionKind, GenerationKind, ToolKind, default_kinds
from durable.tasks.generation.records import AttemptFailure, GenerationInput, Poll, Prepare, Request, Retry, ToolRound
from durable.tasks.tool import Approval, Delegated, ToolProgress
from durable.testing import scenarios
from durable.testing.explore import explore
from tests import moves

from .conftest import settings

pytestmark = pytest.mark.anyio

KINDS = (GenerationKind, ToolKind, CompactionKind, CancelKind)


def test_every_kind_declares_its_table_and_a_handler_for_each_of_its_phases():
    kinds, _ = default_kinds()
    assert sorted(k.name for k in kinds) == ["cancel", "compaction", "generation", "tool"]
    for kind in kinds:
        phases = {p for s, p in kind.transitions.positions if s != "terminal"}
        handled = {"none" if cls is type(None) else durable.codec.tag_of(_sample(cls)) for cls in kind.phases}
        assert phases <= handled, f"{kind.name}: phases without a handler: {phases - handled}"


def _sample(cls):
    samples = {Prepare: Prepare(1), Request: Request(1), Poll: Poll(1, r.DeferredJob("k"), 0.0),
               Retry: Retry(1, 0.0, AttemptFailure("m", "k")), ToolRound: ToolRound(1, (), ()),
               ToolProgress: ToolProgress(), Approval: Approval(0.0), Delegated: Delegated("root/s-2", "subagent-2", 0.0)}
    return samples[cls]


def test_the_generation_docstring_diagram_is_its_transition_table():
    diagram = GenerationKind.transitions.diagram()
    doc = inspect.getdoc(inspect.getmodule(GenerationKind))
    assert doc is not None
    indented = "\n".join("    " + line for line in diagram.splitlines())
    assert indented in doc, f"the module docstring must show the table:\n{indented}"


async def test_an_illegal_move_is_refused_naming_the_task_its_kind_and_both_positions(tmp_path):
    model = FauxModel([faux.hang("par")])
    async with durable.open_harness(tmp_path / "s.sqlite", model=model, settings=settings()) as h:
        await h.root.submit("hi")
        await model.wait_for_requests(1)
        task = h.session.tasks[1]
        assert (state_of(task), phase_of(task)) == ("running", "request")
        change = h.session.change()
        with pytest.raises(durable.IllegalTransition) as refused:
            change.put_task(attrs.evolve(task, checkpoint=Poll(1, r.DeferredJob("k"), 0.0)))
        assert str(refused.value) == "Task 1 (generation) cannot move from running/request to running/poll"
        with pytest.raises(durable.IllegalTransition, match=r"Task 99 \(generation\) cannot be created waiting/tools"):
            change.create_task(r.Task(99, "root", "generation", GenerationInput(()), r.Waiting(),
                                      ToolRound(1, (), ())))
        ended = attrs.evolve(task, state=r.Terminal(r.Aborted()))
        with pytest.raises(durable.IllegalTransition, match="cannot move from terminal/request to running/request"):
            GenerationKind.transitions.check(ended, task, "generation")
        assert not change  # nothing of the refused writes is in the change


def _limit1(scenario):
    return scenario.variant(f"{scenario.name}_limit1", settings=lambda st: attrs.evolve(st, restart_limit=1))


# The moves of every scenario crashed at every commit boundary (the charges, the endings at the
# limit), and twice over where a crash in the recovery matters (an ending cut off: past the
# limit). tests/crash/test_explore.py explores every scenario and records its moves (`run_dir`):
# those are read here, and only the ones not recorded (yet) are explored here (all of them when
# this module runs alone: 93-297 s under load). The depth-2 exploration is this module's own
# test, so that pytest-xdist runs it beside the rest.
@pytest.mark.timeout(1200)
async def test_every_move_made_in_every_scenario_is_in_its_table_and_the_tables_have_no_dead_moves(monkeypatch,
                                                                                                   run_dir):
    seen: set[moves.Move] = set()
    for scenario in scenarios.ALL:
        recorded = moves.load(run_dir, scenario.name)
        if recorded is None:
            with moves.recording(monkeypatch) as recorded:
                (await explore(scenario)).assert_ok()
            moves.save(run_dir, scenario.name, recorded)
        seen |= recorded
    deep = _limit1(scenarios.deferred_answer)
    recorded = moves.load(run_dir, f"{deep.name}-depth2")
    if recorded is None:
        recorded = await _explore_deep(monkeypatch, run_dir)
    seen |= recorded
    declared = {(kind.name, src, dst) for kind in KINDS for src, dsts in kind.transitions.moves.items() for dst in dsts}
    assert seen <= declared
    # Moves no ready-made scenario makes, each tested on its own: a context overflow compacts, then
    # prepares again (tests/providers/test_harness_integration.py); a deferred answer that calls
    # tools, and its next round prepared (a deferred job or a compaction comes first) rather than
    # requested in the round's last commit (below); a cut-off fetch is charged and polls the same
    # job again (test_tools_crash.py); a deferred answer that does not match its output schema
    # prepares a new job (test_structured_output.py).
    elsewhere = {
        ("generation", ("running", "poll"), ("running", "prepare")),
        ("generation", ("running", "request"), ("running", "prepare")),
        ("generation", ("running", "poll"), ("waiting", "tools")),
        ("generation", ("waiting", "tools"), ("running", "prepare")),
        ("generation", ("running", "poll"), ("sleeping", "retry")),
        ("generation", ("sleeping", "retry"), ("running", "poll")),
    }
    unseen = sorted(declared - elsewhere - seen)
    assert unseen == [], "\n".join(map(str, unseen))


async def _explore_deep(monkeypatch, run_dir) -> set[moves.Move]:
    deep = _limit1(scenarios.deferred_answer)
    with moves.recording(monkeypatch) as recorded:
        (await explore(deep, depth=2)).assert_ok()  # an owed cancel, cut off
    moves.save(run_dir, f"{deep.name}-depth2", recorded)
    return recorded


async def test_an_owed_cancel_cut_off_past_the_limit_keeps_to_the_tables(monkeypatch, run_dir):
    """The depth-2 exploration the tables' test reads (on its own, so that another worker runs it)."""
    await _explore_deep(monkeypatch, run_dir)


async def test_a_deferred_answer_that_calls_a_tool_goes_from_poll_to_a_tool_round(host, monkeypatch):
    seen: list[tuple[str, str]] = []
    check = Transitions.check

    def recording(self, old, new, kind):
        check(self, old, new, kind)
        if kind == "generation" and phase_of(old) != phase_of(new):
            seen.append((phase_of(old), phase_of(new)))

    monkeypatch.setattr(Transitions, "check", recording)

    async def look(args, api, ctx):
        return "found"

    lookup = durable.define_tool("lookup", "Look up", replay="safe", execute=look)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("lookup", {}, id="c1")]), faux.reply("Done")],
                      deferred=True, poll_after=5.0)
    async with host.open(model, settings=settings(stream=durable.StreamSettings(deferred=True)), tools=[lookup]) as h:
        sub = await h.root.submit("go")
        for _ in range(2):
            await host.clock.wait_for_timer("poll:1")
            host.clock.advance(5.0)
        assert await sub.wait() == r.Answered("Done", 4)
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result", "assistant:stop"]
    assert seen == [("prepare", "poll"), ("poll", "tools"), ("tools", "prepare"), ("prepare", "poll")]
