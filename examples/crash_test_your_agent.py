"""Crash-test your own agent with durable.testing.

Your agent is a model, some tools and settings, and what the host does with them. Write that
down once as a *scenario*, then:

1. `explore(scenario)` crashes it at every commit boundary, just before and just after each
   commit, reopens the session file as a new process would, drives it to the end and checks
   the invariants (nothing acknowledged lost, every input settled once, every tool call
   answered once, unsafe tools never run twice, retries within the policy...).
2. `crashable_harness(...)` + `check_invariants(...)` let you write a crash test by hand.
3. `kill_test(...)` runs it in child processes and kills them with SIGKILL (optional, `--kill`).

Run it:  python examples/crash_test_your_agent.py [--kill]
"""

from __future__ import annotations

import sys
import time

import trio

import durable
from durable.models import faux
from durable.testing import (
    Driver,
    FakeClock,
    World,
    by_input,
    check_invariants,
    crashable_harness,
    describe_session,
    explore,
    scenario,
    settle,
)

# --------------------------------------------------------------------------- your agent


def weather_tools() -> list[durable.Tool]:
    async def forecast(args, api, ctx):
        await api.output(f"asking the weather service about {args['city']}... ")
        return {"city": args["city"], "sky": "sunny", "high": 21}

    async def send_email(args, api, ctx):
        # Not safe to repeat: after a crash in the middle, durable answers the call with
        # "Tool send_email was interrupted and may have partially run" instead of sending twice.
        await api.output(f"sending to {args['to']}")
        return "sent"

    return [
        durable.define_tool("forecast", "Tomorrow's weather in a city",
                            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                            replay="safe", execute=forecast),
        durable.define_tool("send_email", "Email someone",
                            {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]},
                            replay="unsafe", execute=send_email),
    ]


def weather_world(clock) -> World:
    """The world outside your agent's process, made fresh for every replay: a scripted model
    (answering by conversation turn, so a request sent again after a crash gets the same answer),
    your tools, your settings."""
    model = by_input({
        "Will it be sunny in Oslo tomorrow? Tell Ann.": [
            faux.reply("Let me check.", tool_calls=[faux.call("forecast", {"city": "Oslo"})]),
            faux.reply("", tool_calls=[faux.call("send_email", {"to": "ann@example.com"})]),
            faux.reply("Sunny, 21 degrees. I told Ann."),
        ],
        # The provider is overloaded once, then answers: a retry with a durable backoff.
        "Thanks!": [lambda request: faux.error("Overloaded", kind="overloaded", status_code=529)
                    if request.attempt == 1 else faux.reply("You're welcome!")],
    }, token_size=6)
    settings = durable.Settings(progress=durable.Progress(persist_within=0, output_interval=0),
                                retry=durable.RetryPolicy(base_delay=2.0))
    return World(model, tools=weather_tools(), settings=settings)


@scenario(setup=weather_world)
async def weather_agent(d: Driver) -> None:
    """What the host does: two inputs, the second after the first is answered."""
    first = await d.submit("Will it be sunny in Oslo tomorrow? Tell Ann.")
    await first.wait()
    await d.submit("Thanks!")


# --------------------------------------------------------------------------- 1. the explorer


async def explore_every_commit() -> None:
    started = time.monotonic()
    exploration = await explore(weather_agent)
    print(exploration.summary(), f"({time.monotonic() - started:.1f} s)")
    # On a violation this raises with the crash point, what that commit wrote, the violations,
    # the transcript and a one-call reproduction: await explore(weather_agent, only=("after", 7))
    exploration.assert_ok()


# --------------------------------------------------------------------------- 2. a crash test by hand


async def crash_by_hand(path: str) -> None:
    clock = FakeClock()
    world = weather_world(clock)
    # Crash just after the 4th commit: the model has started answering; the process "dies".
    async with crashable_harness(path, model=world.model, tools=world.tools, settings=world.settings,
                                 clock=clock, crash_after=4) as h:
        sub = await h.root.submit("Will it be sunny in Oslo tomorrow? Tell Ann.")
        await h.storage.crashed.wait()
    print("after the crash:", check_invariants(path, acknowledged=[sub.id]) or "every invariant holds")
    # A new "process" opens the same file, finishes the work and closes cleanly.
    async with crashable_harness(path, model=world.model, tools=world.tools, settings=world.settings,
                                 clock=clock) as h:
        await settle(h, clock)  # fires due timers on the fake clock; no sleeping and hoping
        print("the input is", await h.root.submission(sub.id).wait())
    problems = check_invariants(path, acknowledged=[sub.id], settings=world.settings, clean_close=True,
                                quiescent=True)
    print("after recovery:", problems or "every invariant holds")
    print(describe_session(path))


def main() -> None:
    trio.run(explore_every_commit)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        trio.run(crash_by_hand, f"{tmp}/agent.sqlite")
    if "--kill" in sys.argv:
        from durable.testing.kill import kill_test

        # The children are forked from a server that imported this script, so the scenario can
        # be named by its place here; a scenario in your package is "package.module:name".
        report = kill_test("__main__:weather_agent", kills=20, seed=1)
        print(report.summary())
        report.assert_ok()


if __name__ == "__main__":  # required by the process-kill runner's fork server
    main()
