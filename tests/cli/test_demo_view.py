"""The demo's terminal view (`durable.cli.live_view.RichUi`), rendered into a string: each
closing line is shown once, and a cut-off or failed attempt is labelled in words."""

from __future__ import annotations

import io

from rich.console import Console

from durable import records as r
from durable.cli.live_view import RichUi


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
