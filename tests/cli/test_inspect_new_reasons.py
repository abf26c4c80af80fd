"""`durable inspect` shows the endings of instructions, structured output and usage limits
(`prepare_failed`, `output_invalid`, `usage_limit`) with their details, and each conversation's
usage totals."""

from __future__ import annotations

import anyio
import attrs

import durable
from durable.models import FauxModel, faux

from .conftest import inspect_json, run_durable


@attrs.frozen
class Answer:
    value: int


async def failing_section(ctx: durable.PrepareContext) -> str:
    raise RuntimeError("no profile")


def test_inspect_shows_the_new_endings_and_the_usage(tmp_path):
    path = tmp_path / "s.sqlite"

    async def build() -> None:
        clock = durable.FakeClock()
        async with durable.open_harness(path, model=FauxModel([]), clock=clock,
                                        instructions=[failing_section]) as h:
            await (await h.conversation("prep").submit("hello")).wait()
        limits = durable.Settings(output_retries=0, usage_limits=durable.UsageLimits(request_limit=1))
        model = FauxModel([faux.reply("not json", usage=durable.Usage(12, 3, cache_read_tokens=4)),
                           faux.reply("", tool_calls=[faux.call("none", {})])])
        async with durable.open_harness(path, model=model, clock=clock, settings=limits) as h:
            await (await h.conversation("out").submit("a number", output=Answer)).wait()
            await (await h.conversation("lim").submit("go")).wait()

    anyio.run(build, backend="trio")
    done = run_durable("inspect", str(path))
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "last run unanswered (prepare_failed): Instruction section failing_section failed: RuntimeError: " \
           "no profile" in out
    assert "unanswered (output_invalid): The answer did not match the output schema after no retry" in out
    assert "last run unanswered (usage_limit): The run would pass its request limit " \
           "(settings.usage_limits.request_limit = 1): 1 request sent" in out
    assert "usage: faux: 1 request(s), 12 input / 3 output tokens (4 cache read)" in out
    data = inspect_json(path)
    assert data["live"]["out"]["usage"] == {"models": [{"model": "faux", "requests": 1, "input_tokens": 12,
                                                        "output_tokens": 3, "cache_read_tokens": 4}]}
    reasons = {s["conversation_id"]: s["reason"] for s in data["submissions"]}
    assert reasons == {"prep": "prepare_failed", "out": "output_invalid", "lim": "usage_limit"}
