"""What start-up imports: `import durable` loads no provider SDK, no optional extra and no event
loop; a process that opens a session, or recovers an interrupted turn (open the file, charge the
cut-off attempt, send it again), loads none of the optional extras either, nor the parts of durable
it does not use (importing histories, forks, the command line, the console, PostgreSQL, MCP, a
submission's stream and its events), nor `decimal` (only pricing usage needs it). Checked in a
fresh interpreter by what is in `sys.modules`, never by time (benchmarks/startup.py times it)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

EXTRAS = ("openai", "anthropic", "google.genai", "cryptography", "psycopg", "starlette", "hypercorn", "rich", "click",
          "jsonschema", "opentelemetry", "mcp", "httpx", "genai_prices", "pdoc")
"""Provider SDKs, optional extras and what only the command line or tool validation needs."""

NOT_AT_START = ("decimal", "durable.engine.streaming", "durable.engine.stream_events")
"""Pricing usage needs `decimal`; only a submission's stream needs the streaming module and its events."""

NOT_FOR_RECOVERY = ("durable.engine.history", "durable.engine.fork", "durable.cli", "durable.console",
                    "durable.storage.postgres", "durable.mcp", "durable.remote", "trio", "uuid", *NOT_AT_START)


def loaded(code: str, *args: str) -> list[str]:
    """The module names in `sys.modules` after a fresh interpreter ran `code`."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def under(names: list[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == r or n.startswith(r + ".") for r in roots))


def test_import_durable_loads_no_extra_no_event_loop_and_no_engine():
    names = loaded("import durable")
    assert under(names, EXTRAS) == []
    assert under(names, ("anyio", "trio", "asyncio", "sqlite3", "cattrs", "durable.engine.harness",
                         "durable.storage", "durable.tasks", "durable.codec", *NOT_AT_START)) == []


def test_the_lazy_names_of_durable_load_what_they_name():
    names = loaded("import durable\n"
                   "assert durable.TextDeltaEvent('hi').text == 'hi'\n"
                   "assert str(durable.Price(2.5, 10).cost(durable.ModelUsage('m', input_tokens=10**6))) == '2.5'")
    assert under(names, ("decimal", "durable.engine.stream_events")) == ["decimal", "durable.engine.stream_events"]
    assert under(names, ("durable.engine.streaming", "anyio")) == []


OPEN = textwrap.dedent("""
    import sys
    import anyio
    import durable
    from durable.models import FauxModel

    async def main():
        async with durable.open_harness(sys.argv[1], model=FauxModel([])) as h:
            assert h.root.id == "root"

    anyio.run(main)
""")


def test_opening_a_session_loads_no_extra_no_decimal_and_no_streaming(tmp_path: Path):
    names = loaded(OPEN, str(tmp_path / "session.sqlite"))
    assert "durable.storage.sqlite.store" in names  # it did open a file
    assert under(names, EXTRAS) == []
    assert under(names, NOT_FOR_RECOVERY) == []


HOOKS = ("import json, linecache\n"
         "print(json.dumps(sorted(k for k in linecache.cache if k.startswith('<cattrs generated'))))\n")
"""Prints the codec hooks made so far (cattrs keeps each generated hook's source in `linecache`)."""


def hooks_after(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code + "\n" + HOOKS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_codec_makes_its_hooks_on_first_use_and_the_first_turns_with_the_engine():
    assert hooks_after("import durable.codec") == []
    # A reader (`durable inspect`) makes the hooks of what it reads, and no hook to write with.
    read = hooks_after("import durable.codec as c, durable.records as r\n"
                       "c.loads('{\"type\":\"user\",\"text\":\"hi\"}', r.Entry)")
    assert read == ["<cattrs generated structure durable.records.entries.UserEntry>"]
    # The engine makes those of an open and a first turn (`codec.warm`): the task's, among them.
    engine = hooks_after("import durable.tasks")
    assert "<cattrs generated unstructure durable.records.tasks.Task>" in engine
    assert "<cattrs generated structure durable.records.submissions.Submission>" in engine


RECOVER = textwrap.dedent("""
    import sys
    import anyio
    import durable
    from durable.models import FauxModel, faux

    path, mode = sys.argv[1], sys.argv[2]

    async def main():
        if mode == "interrupt":  # a partial committed, then the process stops without closing
            model = FauxModel([faux.hang("Hello wor")])
            h = durable.open_harness(path, model=model)
            await h.__aenter__()
            await h.root.submit("What is the answer?")
            async for live in h.root.follow():
                if live.generation is not None and live.generation.message.text == "Hello wor":
                    break
            print("committed", flush=True)
            import os
            os._exit(0)
        settings = durable.Settings(retry=durable.RetryPolicy(base_delay=0.001))
        model = FauxModel([faux.reply("Hello world.")])
        async with durable.open_harness(path, model=model, settings=settings) as h:
            await h.resume()
            while h.wake().active:
                await anyio.sleep(0.01)
        assert [r.attempt for r in model.requests] == [2], model.requests

    anyio.run(main)
""")


def test_a_recovering_process_loads_only_what_recovery_needs(tmp_path: Path):
    path = str(tmp_path / "session.sqlite")
    done = subprocess.run([sys.executable, "-c", RECOVER, path, "interrupt"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "committed", done.stderr
    names = loaded(RECOVER, path, "recover")
    assert "durable.engine.recovery" in names  # it did recover
    assert under(names, EXTRAS) == []
    assert under(names, NOT_FOR_RECOVERY) == []
