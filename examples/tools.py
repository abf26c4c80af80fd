"""Tools: a safe one, an unsafe one, and a client tool the host answers.

    python examples/tools.py [PATH]

PATH is the session file (default: tools.sqlite in a new temporary directory). The scripted
`FauxModel` asks for three tools in one round, so no API key is needed:

- `lookup` is `replay="safe"`: reading has no side effect, so after a crash it simply runs again;
- `append_line` is `replay="unsafe"` (the default): it writes a file, so after a crash it is never
  run a second time; the model gets "Tool append_line was interrupted and may have partially run";
- `confirm` is a client tool (`client=True`): the harness does not run it, the host does (a
  dialog, a browser action...). The generation waits durably, without running, until the host
  calls `harness.submit_tool_result(call_id, ...)`, here when the live document shows the tool
  slot `waiting`. A deadline (`settings.client_tool_timeout`, 5 minutes by default, measured
  from the stored start) answers it with "Tool execution timed out" if nobody does.

Tools stream output with `await api.output(...)`; it is committed coalesced and shown in the
live document's tool slots. At the end the example prints the transcript.
"""

from __future__ import annotations

import os
import sys
import tempfile

import anyio

import durable
from durable.models import FauxModel, faux


@durable.tool(replay="safe", parameters={"type": "object", "properties": {"word": {"type": "string"}},
                                         "required": ["word"]})
async def lookup(args: dict, api: durable.ToolApi, ctx: durable.ToolContext) -> str:
    """Look a word up in a (tiny) dictionary."""
    await api.output(f"looking up {args['word']}...\n")
    meanings = {"durable": "able to withstand wear, pressure, or damage"}
    return meanings.get(args["word"], "not found")


def make_append_line(folder: str) -> durable.Tool:
    async def append_line(args: dict, api: durable.ToolApi, ctx: durable.ToolContext) -> str:
        path = os.path.join(folder, "notes.txt")
        with open(path, "a", encoding="utf-8") as f:  # a side effect: not safe to repeat
            f.write(args["line"] + "\n")
        await api.output(f"appended to {path}\n")
        return f"appended 1 line to {path}"

    return durable.define_tool(
        "append_line", "Append a line to notes.txt.",
        {"type": "object", "properties": {"line": {"type": "string"}}, "required": ["line"]},
        replay="unsafe", execute=append_line,
    )


confirm = durable.define_tool(
    "confirm", "Ask the user to confirm something (the host shows a dialog).",
    {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]},
    client=True,
)


async def answer_client_tools(harness: durable.Harness) -> None:
    """The host's side of client tools: answer each slot that waits for us."""
    answered: set[str] = set()
    async for live in harness.root.follow():
        for slot in live.tools:
            if slot.status == "waiting" and slot.call_id not in answered:
                answered.add(slot.call_id)
                print(f"host: the model asks the user to confirm (call {slot.call_id}); answering yes")
                await harness.submit_tool_result(slot.call_id, "The user clicked: yes")


async def main(path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    model = FauxModel([
        faux.reply("Let me look it up, note it, and check with you.", tool_calls=[
            faux.call("lookup", {"word": "durable"}),
            faux.call("append_line", {"line": "durable: able to withstand wear"}),
            faux.call("confirm", {"question": "Keep this note?"}),
        ]),
        faux.reply("Done: I looked it up, noted it, and you confirmed."),
    ])
    tools = [lookup, make_append_line(folder), confirm]
    async with durable.open_harness(path, model=model, tools=tools) as harness:
        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_client_tools, harness)
            submission = await harness.root.submit("What does 'durable' mean? Note it down.")
            print(f"result: {await submission.wait()}")
            tg.cancel_scope.cancel()
        print("transcript:")
        for stored in await harness.root.entries():
            e = stored.entry
            if isinstance(e, durable.UserEntry):
                print(f"  {stored.seq}. you: {e.text}")
            elif isinstance(e, durable.AssistantEntry):
                calls = "".join(f" -> {c.name}{c.arguments}" for c in e.tool_calls)
                print(f"  {stored.seq}. assistant ({e.stop_reason}): {e.text}{calls}")
            elif isinstance(e, durable.ToolResultEntry):
                print(f"  {stored.seq}. {e.tool_name} {'error' if e.is_error else 'result'}: {e.content}")


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(prefix="durable-"), "tools.sqlite")
    anyio.run(main, target)
