"""The agent process of the MCP kill tests:

    python agent_child.py SESSION SIDE SERVER TOOL KEY [SUBMISSION]

SERVER is `stdio` (this process starts the test server, `mcp_server.py SIDE`) or the URL of a
streamable HTTP server. Without SUBMISSION it submits "go" (the model calls TOOL {"key": KEY},
then says "finished") and prints `submitted ID`; with it, it resumes the session and waits for that
submission. Then it prints `results JSON` (the tool results' contents) and closes.
"""

from __future__ import annotations

import json
import os
import sys

import anyio

import durable
from durable import mcp
from durable.models import faux
from durable.testing import by_input

HERE = os.path.dirname(os.path.abspath(__file__))


def say(line: str) -> None:
    os.write(1, (line + "\n").encode())


async def main(session: str, side: str, server: str, tool: str, key: str, submission: str | None) -> None:
    if server == "stdio":
        errlog = open(side + ".stderr", "a")
        spec: mcp.Server = mcp.stdio(sys.executable, [os.path.join(HERE, "mcp_server.py"), side], name="tests",
                                     stderr=errlog)
    else:
        spec = mcp.http(server, name="tests")
    model = by_input({"go": [faux.reply("", tool_calls=[faux.call(tool, {"key": key})]), faux.reply("finished")]})
    settings = durable.Settings(progress=durable.Progress(persist_within=0, output_interval=0))
    async with mcp.connect(spec) as servers:
        async with durable.open_harness(session, model=model, tools=servers.tools, settings=settings) as h:
            if submission is None:
                handle = await h.root.submit("go")
                say(f"submitted {handle.id}")
            else:
                await h.resume()
                handle = h.root.submission(submission)
            await handle.wait()
            results = [e.entry.content for e in await h.root.entries() if isinstance(e.entry, durable.ToolResultEntry)]
            say(f"results {json.dumps(results)}")


if __name__ == "__main__":
    args = sys.argv[1:]
    anyio.run(main, *args[:5], args[5] if len(args) > 5 else None, backend="trio")
