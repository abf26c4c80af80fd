"""The demo's terminal view shows a reasoning model thinking: the partial reasoning (dim, labelled
"thinking") until the answer's text starts, then the text."""

from __future__ import annotations

import io

from rich.console import Console

from durable import records as r
from durable.cli.live_view import RichUi


def rendered(message: r.PartialMessage) -> str:
    ui = RichUi()
    out = io.StringIO()
    ui.console = Console(file=out, width=100, height=60, color_system=None)
    ui.start("demo.sqlite")
    ui.live(r.Live(run=r.Run(1, ("s1",)), generation=r.GenerationLive(1, message)), None, None)
    ui.stop()
    return out.getvalue()


def test_the_view_shows_the_reasoning_until_the_text_starts():
    thinking = rendered(r.PartialMessage(reasoning="Let me  think\nabout it"))
    assert "thinking (attempt 1) Let me think about it▍" in thinking
    answering = rendered(r.PartialMessage("Hello", reasoning="Let me think about it"))
    assert "assistant (attempt 1) Hello▍" in answering and "Let me think" not in answering
