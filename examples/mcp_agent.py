"""An agent whose tools come from an MCP server, and that survives `kill -9`.

    python examples/mcp_agent.py [PATH]

Needs the MCP SDK: pip install "durable-harness[mcp]". PATH is the session file (default:
mcp_agent.sqlite in the current directory); the notes file is notes.txt beside it. The example
starts examples/mcp_notes_server.py over stdio with `durable.mcp.connect`, gives its tools to the
harness, and asks a scripted model (no API key) to add a note and then summarize the notes:

- `add_note` has no annotation saying it is safe to repeat: it is `unsafe`, never run twice;
- `summarize_notes` is annotated read-only: `safe`; it reports progress for about 3 seconds, which
  the example prints from the committed live document.

Kill the process (`kill -9`) while the summary is being written and start it again on the same
file: it connects to a new server process, resumes the run, runs `summarize_notes` again (safe),
and does not add the note a second time. At the end it prints the transcript.
"""

from __future__ import annotations

import os
import sys

import anyio

import durable
from durable import mcp
from durable.models import FauxModel, faux
from durable.testing import by_input

HERE = os.path.dirname(os.path.abspath(__file__))
QUESTION = "Note that durable survives kill -9, then summarize my notes."


def scripted_model() -> FauxModel:
    """Answers by turn (`by_input`), so a request sent again after a crash gets the same step."""
    return by_input({QUESTION: [
        faux.reply("I'll add the note.", tool_calls=[faux.call("add_note", {"text": "durable survives kill -9"})]),
        faux.reply("Now the summary.", tool_calls=[faux.call("summarize_notes", {})]),
        lambda request: faux.reply(f"Done. Summary: {request.messages[-1].content}"),
    ]})


async def show_tool_output(harness: durable.Harness) -> None:
    """Print each tool slot's output as it is committed, line by line."""
    shown: dict[int, str] = {}
    async for live in harness.root.follow():
        for slot in live.tools:
            before = shown.get(slot.task_id, "")
            if not slot.output.startswith(before):
                before = ""  # a safe tool run again starts its output afresh
            for line in slot.output[len(before):].splitlines():
                print(f"  {slot.name}: {line}", flush=True)
            shown[slot.task_id] = slot.output


async def main(path: str) -> None:
    notes = os.path.join(os.path.dirname(os.path.abspath(path)), "notes.txt")
    server = mcp.stdio(sys.executable, [os.path.join(HERE, "mcp_notes_server.py"), notes], name="notes",
                       stderr=open(os.devnull, "w"))  # the SDK server logs every request on stderr

    def report(rep: object) -> None:
        if isinstance(rep, (durable.TaskInterrupted, durable.TaskFaulted)):
            print(f"(recovery: task {rep.task.id} ({rep.task.kind}): {rep.detail})", flush=True)

    async with mcp.connect(server) as servers:
        print("tools: " + ", ".join(f"{t.name} [{t.replay}]" for t in servers.tools), flush=True)
        async with durable.open_harness(path, model=scripted_model(), tools=servers.tools, report=report,
                                        settings=durable.Settings(progress=durable.Progress(output_interval=0))) as h:
            live = h.root.live()
            if live.run is not None:  # the last process was killed in the middle of this run
                submission = h.root.submission(live.run.inputs[-1])
                print(f"(resuming the run the last process left: {(await submission.get()).text!r})", flush=True)
                await h.resume()
            else:
                submission = await h.root.submit(QUESTION)
                print(f"you> {QUESTION}", flush=True)
            async with anyio.create_task_group() as tg:
                tg.start_soon(show_tool_output, h)
                result = await submission.wait()
                tg.cancel_scope.cancel()
            if isinstance(result, durable.Answered):
                print(f"result: answered ({len(result.text)} characters)")
            else:
                print(f"result: unanswered ({result.reason}): {result.detail}")
            print("transcript:")
            for stored in await h.root.entries():
                e = stored.entry
                if isinstance(e, durable.UserEntry):
                    print(f"  you: {e.text}")
                elif isinstance(e, durable.AssistantEntry):
                    calls = "".join(f" -> {c.name}{c.arguments}" for c in e.tool_calls)
                    print(f"  assistant: {e.text}{calls}")
                elif isinstance(e, durable.ToolResultEntry):
                    print(f"  {e.tool_name} {'error' if e.is_error else 'result'}: {e.content}")
    print(f"notes in {notes}: {open(notes, encoding='utf-8').read().splitlines()}")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "mcp_agent.sqlite", backend="trio")
