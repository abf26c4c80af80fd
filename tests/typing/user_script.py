"""A program that uses durable's public API as a user would, written to type-check clean under
`mypy --strict` and pyright's strict mode (tests/typing/test_typing.py runs both, and runs this
script). It also runs: `python tests/typing/user_script.py [DIR]`."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated

import anyio
import attrs

import durable
import durable.sync
from durable.models import FauxModel, faux


@durable.tool(replay="safe")
async def weather(city: str, api: durable.ToolApi, ctx: durable.ToolContext,
                  days: Annotated[int, "How many days, 1 to 14"] = 1) -> dict[str, str | int]:
    """The forecast for a city."""
    await api.output(f"looking up {city} (call {ctx.call_id}, attempt {ctx.attempt})")
    return {"city": city, "days": days, "sky": "sunny"}


def script() -> FauxModel:
    return FauxModel([faux.reply("", tool_calls=[faux.call("weather", {"city": "Paris"})]), faux.reply("Sunny.")])


def on_report(report: durable.Report) -> None:
    if isinstance(report, durable.TaskInterrupted):
        reason: durable.InterruptReason = report.reason
        print(f"recovered task {report.task.id}: {reason} ({report.detail})")
    elif isinstance(report, durable.TaskFaulted):
        fault: durable.FaultReason = report.reason
        print(f"gave up on task {report.task.id}: {fault}")
    else:
        print(f"error: {report.message}")


def describe(status: durable.SubmissionStatus) -> str:
    if isinstance(status, durable.Answered):
        return f"answered at entry {status.seq}: {status.text}"
    if isinstance(status, durable.Unanswered):
        why: durable.UnansweredReason = status.reason
        return f"unanswered ({why}): {status.detail}"
    return "queued"


def settings() -> durable.Settings:
    policy: durable.WhenBusy = "queue"
    base = durable.Settings(retry=durable.RetryPolicy(max_retries=2, base_delay=0.01), when_busy=policy,
                            progress=durable.Progress(persist_within=0.05))
    return attrs.evolve(base, system_prompt="You are terse.")


async def run_async(path: Path) -> list[str]:
    model: durable.Model = script()
    lines: list[str] = []
    harness: durable.Harness = durable.open_harness(path, model=model, tools=[weather], settings=settings(),
                                                    report=on_report)
    async with harness as h:
        conversation: durable.Conversation = h.root
        sub: durable.SubmissionHandle = await conversation.submit("Weather in Paris?", when_busy="interrupt")
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                async for live in conversation.follow():
                    if live.generation is not None:
                        lines.append(f"live: attempt {live.generation.attempt} {live.generation.message.text!r}")
                    if not live.busy:
                        tg.cancel_scope.cancel()

            tg.start_soon(watch)
            lines.append(describe(await sub.wait()))
        try:
            lines.append(await sub.answer())
        except durable.SubmissionUnanswered as exc:
            lines.append(f"no answer: {exc.reason}")
        for stored in await conversation.entries():
            entry: durable.Entry = stored.entry
            if isinstance(entry, durable.AssistantEntry):
                stop: durable.StopReason = entry.stop_reason
                lines.append(f"{stored.seq}: assistant ({stop}) {entry.text}")
        tasks: list[durable.Task] = await h.tasks(kind="tool")
        lines.extend(f"tool task {t.id}: {type(t.state).__name__}" for t in tasks)
        wake: durable.Wake = h.wake()
        lines.append(f"active: {wake.active}")
    return lines


def run_sync(path: Path) -> list[str]:
    lines: list[str] = []
    with durable.sync.open_harness(path, model=script(), tools=[weather], settings=settings(),
                                   backend="asyncio") as h:
        sub: durable.sync.SubmissionHandle = h.root.submit("And tomorrow?", when_busy="queue")
        status = sub.wait()
        lines.append(describe(status))
        lines.append(sub.answer())
        live: durable.Live = h.root.live()
        lines.append(f"busy: {live.busy}")
    return lines


@attrs.frozen
class Profile:
    name: str


@attrs.frozen
class Forecast:
    city: str
    celsius: int


async def who(ctx: durable.PrepareContext[Profile]) -> str:
    """A dynamic instruction section: typed by the harness's deps."""
    return f"The user is {ctx.deps.name}; it is {ctx.now:.0f} on the clock."


async def run_features(path: Path) -> list[str]:
    model = FauxModel([faux.reply('{"city": "Paris", "celsius": 18}')])
    limits = durable.UsageLimits(request_limit=5, total_tokens_limit=10_000)
    async with durable.open_harness(path, model=model, settings=attrs.evolve(settings(), usage_limits=limits),
                                    deps=Profile("Ada"), instructions=["Be brief.", who]) as h:
        sub = await h.conversation("typed").submit("Weather?", output=Forecast)
        forecast: Forecast = await sub.answer(Forecast)
        usage: durable.UsageTotals = h.conversation("typed").usage()
        per_model: durable.ModelUsage = usage.model(model.name)
        return [f"{forecast.city}: {forecast.celsius} C", f"requests: {usage.requests} ({per_model.requests})"]


def main(folder: Path) -> None:
    try:
        for line in anyio.run(run_async, folder / "typed.sqlite", backend="trio"):
            print(line)
        for line in run_sync(folder / "typed.sqlite"):
            print(line)
        for line in anyio.run(run_features, folder / "typed.sqlite", backend="trio"):
            print(line)
    except durable.DurableError as exc:
        print(f"durable: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="durable-typed-")))
