"""The smallest embedding of durable in a program that is not async: `quickstart.py` without
`async`/`await`.

    python examples/sync_quickstart.py [PATH]

PATH is the session file (default: quickstart.sqlite in a new temporary directory). The model is
durable's scripted `FauxModel`, so no API key is needed.

`durable.sync.open_harness` runs the same harness on an event loop in a background thread (trio;
`backend="asyncio"` selects asyncio): `submit` returns once the input is committed to the file,
`wait()` and `answer()` block until the run settles, and leaving the `with` block is a clean close
that also ends the thread. Run it twice on the same PATH: the second run adds to the first.
"""

from __future__ import annotations

import os
import sys
import tempfile

import durable
import durable.sync
from durable.models import FauxModel, faux


def main(path: str) -> None:
    model = FauxModel([faux.reply("Hello! This answer is committed to the session file as it streams.")],
                      tokens_per_second=80)
    with durable.sync.open_harness(path, model=model) as harness:
        submission = harness.root.submit("Hello, durable!")  # durable once this returns
        result = submission.wait()  # blocks until the run settles
        print(f"submission {submission.id}: {result}")
        print(f"answer: {submission.answer()}")
        for stored in harness.root.entries():
            entry = stored.entry
            who = "you" if isinstance(entry, durable.UserEntry) else "assistant"
            print(f"  {stored.seq}. {who}: {entry.text}")
    print(f"session file: {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(prefix="durable-"), "quickstart.sqlite"))
