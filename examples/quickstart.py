"""The smallest embedding of durable: open a session file, submit an input, wait, close.

    python examples/quickstart.py [PATH]

PATH is the session file (default: quickstart.sqlite in a new temporary directory). The model is
durable's scripted `FauxModel`, so no API key is needed; swap in
`durable.models.openai.OpenAIModel("gpt-4o-mini")` or
`durable.models.anthropic.AnthropicModel("claude-3-5-haiku-latest")` for a real one.

What it shows: `submit` returns once the input is committed to the file; `wait()` returns how it
settled (`Answered(text, seq)`, or `Unanswered(reason, detail)`) and `answer()` the answer's text;
leaving the `async with` block is a clean close. Run it twice on the same PATH: the second run
finds the first exchange in the file and adds to it. `sync_quickstart.py` is the same program
without async.
"""

from __future__ import annotations

import os
import sys
import tempfile

import anyio

import durable
from durable.models import FauxModel, faux


async def main(path: str) -> None:
    model = FauxModel([faux.reply("Hello! This answer is committed to the session file as it streams.")],
                      tokens_per_second=80)
    async with durable.open_harness(path, model=model) as harness:
        submission = await harness.root.submit("Hello, durable!")  # durable once this returns
        result = await submission.wait()
        print(f"submission {submission.id}: {result}")
        print(f"answer: {await submission.answer()}")
        for stored in await harness.root.entries():
            entry = stored.entry
            who = "you" if isinstance(entry, durable.UserEntry) else "assistant"
            print(f"  {stored.seq}. {who}: {entry.text}")
    print(f"session file: {path}")


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(prefix="durable-"), "quickstart.sqlite")
    anyio.run(main, target)
