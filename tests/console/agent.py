"""An agent process for the console tests: `python tests/console/agent.py MODE PATH`.

MODE `stream` streams a long answer (quickly) once a line comes on stdin (the page is ready), pausing after
its 20th and 40th pieces (saying `paused`) until the next line;
`hang` streams a partial and never answers (to be killed); `resume` reopens after such a kill (the
model answers whole this time, with reasoning and usage); `approve` makes a tool call that waits
for approval (`save_note`, each run appended to PATH.runs) beside one whose output is an XSS
payload (`fetch_page`), saying `waiting` once the call waits; `approve-held` too, but never looking
at its inbox; `decided` reopens and waits until a decision in the inbox is applied and the answer
given. It says `open`, then `settled` once its input is answered, on stdout, and stays open
(owning the file) until it is killed or gets SIGTERM.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio

from durable import define_tool, open_harness
from durable.models.faux import FauxModel, call, hang, reply
from durable.models.protocol import TextDelta
from durable.records import Usage
from durable.storage import SQLiteStorage

XSS = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
LONG = " ".join(f"word{i}" for i in range(120))


class Paused(FauxModel):
    """A faux model whose answer waits for a line on stdin before it starts and again after each
    of `pauses` (counts of text deltas streamed), saying `paused` each time it stops there."""

    def __init__(self, *args: Any, pauses: tuple[int, ...] = (), **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.pauses = pauses

    async def stream(self, request: Any) -> Any:
        deltas = 0
        async for event in super().stream(request):
            yield event
            if isinstance(event, TextDelta):
                deltas += 1
                if deltas in self.pauses:
                    say("paused")
                    await anyio.to_thread.run_sync(sys.stdin.readline)


def say(line: str) -> None:
    os.write(1, (line + "\n").encode())


async def main(mode: str, path: str) -> None:
    async def save_note(text: str) -> str:
        """Save a note."""
        with open(path + ".runs", "a", encoding="utf-8") as f:
            f.write(text + "\n")
        return f"saved {text}"

    async def fetch_page(url: str) -> str:
        """Fetch a page."""
        return XSS

    tools = [define_tool(execute=save_note, approval=True), define_tool(execute=fetch_page, replay="safe")]
    script = {
        "stream": [reply(LONG)],
        "hang": [hang("Partial words before the crash")],
        "resume": [reply("The whole answer, after recovery.", reasoning="Recovering calmly.",
                         usage=Usage(1200, 300, 120, 800))],
        "approve": [reply("", tool_calls=[call("fetch_page", {"url": "u"}, id="call_page"),
                                          call("save_note", {"text": "draft"}, id="call_note")]),
                    reply("Saved.")],
        "decided": [reply("Saved.")],
    }[mode.removesuffix("-held")]
    model = Paused(script, tokens_per_second=120 if mode == "stream" else None, token_size=6,
                   pauses=(20, 40) if mode == "stream" else ())
    # `-held`: the owner never looks at its inbox (a decision put there stays until the next owner).
    storage = SQLiteStorage(path, inbox_poll_seconds=None if mode.endswith("-held") else 0.25)
    async with open_harness(storage, model=model, tools=tools) as h:
        say("open")
        if mode == "resume":
            await h.resume()
            while h.wake().active:
                await anyio.sleep(0.02)
        elif mode == "decided":
            await h.resume()
            async for live in h.root.follow():  # until the decision in the inbox is applied and answered
                if live.run is None and not live.approvals:
                    break
        else:
            if mode == "stream":
                await anyio.to_thread.run_sync(sys.stdin.readline)
            sub = await h.root.submit("Tell me something")
            say("submitted")
            if mode.startswith("approve"):
                async for live in h.root.follow():
                    if live.approvals:
                        say("waiting")
                        break
            await sub.wait()
        say("settled")
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], backend="trio")
