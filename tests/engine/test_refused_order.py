"""The file holds a prefix of the commit order also under refusals (issue 25, item 9): a change
refused for a passing cause holds back the later ones until it lands, and is sent again as it
was, in its place. Refusals are injected below the crashable store; the process death is the
in-process crash of `durable.testing` (the store hangs, the harness is abandoned)."""

from __future__ import annotations

import anyio
import pytest

import durable
from durable.errors import CommitFailed
from durable.models import FauxModel, faux
from durable.storage.sqlite.reader import SessionReader
from durable.testing.crash import crash

from .conftest import settings

pytestmark = pytest.mark.anyio


def _io_error(path: str) -> CommitFailed:
    return CommitFailed(f"A commit to {path} failed and was rolled back (disk I/O error, injected)", location=path)


def _outputs(batch) -> dict[int, str]:
    return {t.id: t.checkpoint.output for t in batch.tasks if t.kind == "tool"}


async def test_two_refused_changes_and_a_death_between_never_expose_part_of_the_second(host):
    """Tool one's output flush is refused; tool two's flush, made after it on a head that holds
    tool one's output, is refused too. Before the fix the first was tried again rebased on the
    head, so it wrote the live document with tool two's output, and a death before the second
    landed left the file with part of it: the slot's output but not the task's."""
    first_refused = anyio.Event()
    landed: list[dict[int, str]] = []

    async def one(args, api, ctx):
        await api.output("one")
        return "r1"

    async def two(args, api, ctx):
        await first_refused.wait()  # made while tool one's flush stands refused
        await api.output("two")
        return "r2"

    tools = [durable.define_tool("one", "first", replay="safe", execute=one),
             durable.define_tool("two", "second", replay="safe", execute=two)]
    script = [faux.reply("", tool_calls=[faux.call("one", {}, id="a"), faux.call("two", {}, id="b")]),
              faux.reply("done")]
    refused: list[dict[int, str]] = []
    async with host.open(FauxModel(script), settings=settings(), tools=tools) as h:
        assert host.storage is not None
        inner = host.storage.inner
        real_commit = inner.commit

        async def commit(batch):  # type: ignore[no-untyped-def]
            outputs = _outputs(batch)
            flush = {2: "one"} if outputs.get(2) == "one" else {3: "two"} if outputs.get(3) == "two" else None
            if flush is not None and flush not in refused:  # each tool's first flush is refused once
                refused.append(flush)
                if flush == {2: "one"}:
                    first_refused.set()
                raise _io_error(host.path)
            await real_commit(batch)
            landed.append(outputs)
            if outputs.get(2) == "one":  # tool one's flush, tried again, is on disk: the process dies
                crash(h)

        inner.commit = commit  # type: ignore[method-assign]
        await h.root.submit("go")
        await host.storage.crashed.wait()
    assert refused[0] == {2: "one"}
    with SessionReader(host.path) as reader:
        slots = {s.task_id: s.output for s in reader.live_documents()["root"].tools}
        tasks = {t.id: t.checkpoint.output for t in reader.tasks(kind="tool")}
    assert (slots, tasks) == ({2: "one", 3: ""}, {2: "one", 3: ""})  # tool one's flush, nothing of two's
