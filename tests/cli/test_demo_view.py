"""The demo's terminal view (`durable.cli.live_view.RichUi`), rendered into a string: each
closing line is shown once, and a cut-off or failed attempt is labelled in words."""

from __future__ import annotations

import io

from rich.console import Console

from durable import records as r
from durable.cli.live_view import RichUi
from durable.tasks.generation.records import GenerationInput, Prepare, Request


def rendered(events=(), entries=()) -> str:
    ui = RichUi()
    out = io.StringIO()
    ui.console = Console(file=out, width=100, height=60, color_system=None)
    ui.start("demo.sqlite")
    for seq, entry in enumerate(entries, 1):
        ui.entry(r.StoredEntry("root", seq, entry))
    for kind, text in events:
        ui.event(kind, text)
    ui.stop()
    return out.getvalue()


def test_the_closing_line_is_printed_once_below_the_view():
    done = "[done] all 4 inputs settled: 4 answered. Inspect it: durable inspect demo.sqlite"
    out = rendered(events=[("answer", "(attempt 1, 17 tokens) Power cut mid-word;"),
                           ("done", done.removeprefix("[done] "))])
    assert out.count("[done]") == 1
    assert out.rstrip().endswith(done)
    assert "[answer] (attempt 1, 17 tokens) Power cut mid-word;" in out  # other events stay in the view


def test_cut_off_and_failed_attempts_are_labelled_in_words():
    out = rendered(entries=[
        r.UserEntry("Hi!"),
        r.AssistantEntry("Hello! I am a scr", "aborted", error="The host stopped", attempt=1),
        r.AssistantEntry("", "error", error="Rate limit reached", attempt=2),
        r.AssistantEntry("Hello! I am a scripted agent. " * 20, "stop", attempt=3),
    ])
    assert "attempt 1 cut off" in out and "attempt 2 failed" in out
    assert "✗" not in out


def test_a_cut_off_task_gets_one_line_whatever_its_report():
    from durable.cli.plain_view import describe_cut_off
    from durable.engine.reports import TaskFaulted, TaskInterrupted, TaskRef

    gen = r.Task(1, "root", "generation", GenerationInput(("s1",)), r.Pending(), Request(2), restarts=3)
    ref = TaskRef.of(gen)
    start = "task 1 (generation) was cut off by the crash in its request phase"
    assert describe_cut_off(gen, TaskInterrupted(ref, "restart_limit", 3, "The generation was interrupted")) == (
        f"{start}, 3 times in a row: the restart limit, so it ends here: The generation was interrupted")
    assert describe_cut_off(gen, TaskFaulted(ref, "restart_limit", "Abort handler cut off")) == (
        f"{start} and ended faulted (restart_limit; restarts=3): Abort handler cut off")
    assert describe_cut_off(gen, None) == f"{start} (restarts=3)"  # no report: no claim about what follows
    prep = r.Task(1, "root", "generation", GenerationInput(("s1",)), r.Pending(), Prepare(1), restarts=1)
    assert describe_cut_off(prep, TaskInterrupted(ref, "interrupted", 1, "The prepare phase runs again")) == (
        "task 1 (generation) was cut off by the crash in its prepare phase; it runs again (restarts=1)")
