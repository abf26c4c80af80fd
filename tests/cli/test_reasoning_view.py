"""The demo's terminal view shows a reasoning model thinking: the partial reasoning (dim, labelled
"thinking") until the answer's text starts, then the text."""

from __future__ import annotations

import io

import pytest
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


async def _session(path) -> None:
    from durable.storage import Batch, SQLiteStorage

    store = SQLiteStorage(str(path))
    await store.open()
    entries = [r.UserEntry("Weather?"),
               r.AssistantEntry("", "aborted", error="The run was aborted",
                                reasoning=(r.Reasoning("Paris in\nDecember", partial=True),)),
               r.AssistantEntry("Sunny.", "stop", reasoning=(
                   r.Reasoning("It is sunny.", "anthropic", signature="sig"), r.Reasoning("", "anthropic", redacted="x"),
                   r.Reasoning("", "openai", id="rs_1", summary=("Look.", "Answer.")))),
               ]
    await store.commit(Batch(entries=[r.StoredEntry("root", n, e) for n, e in enumerate(entries, 1)]))
    await store.close()


@pytest.mark.anyio
async def test_export_quotes_each_reasoning_block_and_inspect_counts_them(tmp_path):
    from durable.cli.export_data import export_session, to_markdown
    from durable.cli.inspect_view import _entry_text

    path = tmp_path / "s.sqlite"
    await _session(path)
    data = export_session(path, conversation="root")
    markdown = to_markdown(data)
    assert "### 2 · assistant (aborted)\n\n> **Reasoning** (cut off, never sent back)\n> Paris in\n> December\n\n" \
           "> Error: The run was aborted" in markdown
    assert "### 3 · assistant (stop)\n\n> **Reasoning**\n> It is sunny.\n\n> **Reasoning** (redacted by the " \
           "provider)\n\n> **Reasoning**\n> Look.\n>\n> Answer.\n\nSunny." in markdown
    aborted, answered = data["conversations"][0]["entries"][1:]
    assert _entry_text(aborted) == "(reasoning: 1 block(s), 17 chars, partial) [The run was aborted]"
    assert _entry_text(answered) == "(reasoning: 3 block(s), 24 chars) Sunny."
