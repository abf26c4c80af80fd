"""Ready-made scenarios: durable's own crash tests, and examples to copy for your agent.

Each is a `Scenario` for `explore` (in-process crashes) and for `kill_test` (process kills): the
clock is handed to `setup`, never assumed a `FakeClock`, so a scenario runs on a child process's
`ScaledClock`. Every delta is committed (`persist_within=0`): each partial is a commit boundary.

| name | what it does |
|---|---|
| `streamed_answer`, `reasoning_tool_loop` | an answer streamed in five deltas; a reasoning model's tool loop |
| `tool_round`, `long_tool_output` | a safe and an unsafe tool stream output; an unsafe one 3.6 kB over 3 s |
| `retry_after_provider_error` | attempt 1 fails (529, after a partial), attempt 2 answers (`abort_in_backoff`: abort) |
| `deferred_answer` | the answer comes from a deferred job, polled twice |
| `abort_in_tool_round`, `compaction` | the host aborts while a safe and an unsafe tool run; 3 turns, `compact()` |
| `client_tool`, `queued_inputs` | a tool the host answers; a second input queued behind the first run |
| `approved_tool`, `denied_tool`, `approval_timeout` | calls wait for approval: approved, denied, undecided |
| `tool_timeout`, `tool_retry` | a safe and an unsafe tool run past their `timeout`; a tool asks to be called again |
| `dynamic_instructions` | a section run in `prepare`; a failed attempt and a tool round reuse its text |
| `structured_output_retry` | an answer off the output schema is sent back; the next one matches |
| `fallback_tool_round`, `..._deferred_secondary` | a `FallbackModel`: the primary rejects the key, the second answers |
| `usage_limit`; `subagents`, `abort_subagent` | `usage_limit` after 2 rounds; 2 sub-agents; parent aborted mid-child |
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from ..errors import RetryTool
from ..models.fallback import FallbackModel
from ..models.faux import call, error, reply
from ..records import ApprovalSlot, Replay
from ..settings import Compaction, Progress, RetryPolicy, Settings, StreamSettings, UsageLimits
from ..tools import define_tool
from ..tools.subagent import subagent
from .explore import Driver, Scenario, World
from .quiesce import Approve, Deny
from .scripts import by_input


def base_settings(**changes: Any) -> Settings:
    """Every delta committed, 1 s base backoff (on the scenario's clock), 3 retries."""
    settings = Settings(retry=RetryPolicy(max_retries=3, base_delay=1.0, max_delay=8.0),
                        progress=Progress(persist_within=0, output_interval=0))
    return attrs.evolve(settings, **changes)


# --------------------------------------------------------------------------- tools


def lookup_tool() -> Any:
    async def execute(args: Any, api: Any, ctx: Any) -> str:
        await api.output("looking up ")
        await api.output(str(args.get("q", "")))
        return f"price of {args.get('q')}: 5 EUR"

    return define_tool("lookup", "Look a price up", {"type": "object", "properties": {"q": {"type": "string"}}},
                       replay="safe", execute=execute)


def charge_tool() -> Any:
    async def execute(args: Any, api: Any, ctx: Any) -> str:
        await api.output("charging ")
        await api.output(f"{args.get('amount')} EUR")
        return "charged"

    return define_tool("charge_card", "Charge the card (not safe to repeat)",
                       {"type": "object", "properties": {"amount": {"type": "number"}}}, replay="unsafe",
                       execute=execute)


def slow_tool(name: str, clock: Any, *, replay: Replay, seconds: float = 100.0, timeout: float | None = None) -> Any:
    """A tool that works for `seconds` of the scenario's clock (a timer the explorer can fire)."""

    async def execute(args: Any, api: Any, ctx: Any) -> str:
        await api.output(f"{name} started")
        await clock.sleep_until(clock.now() + seconds, f"tool:{name}")
        return f"{name} finished"

    return define_tool(name, f"Work for {seconds:g} s", replay=replay, execute=execute, timeout=timeout)


def long_output_tool(clock: Any) -> Any:
    """An unsafe tool streaming 3 parts of 1,200 characters, 1.5 s of the scenario's clock apart:
    its output is kept apart from its rows, grows beside the file and is stamped again."""

    async def execute(args: Any, api: Any, ctx: Any) -> str:
        for part in range(3):
            for line in range(24):
                await api.output(f"part {part} line {line:02d}: {'x' * 34}\n")  # 50 characters
            await clock.sleep_until(clock.now() + 1.5, f"tool:dump:{part}")
        return "dumped"

    return define_tool("dump", "Dump a long log", replay="unsafe", execute=execute)


def transfer_tool(*, approval: Any = True) -> Any:
    """An unsafe tool that moves money; by default every call waits for a person's decision."""

    async def execute(args: Any, api: Any, ctx: Any) -> str:
        await api.output(f"sending {args.get('amount')} EUR")
        return f"sent {args.get('amount')} EUR to {args.get('to')}"

    schema = {"type": "object", "properties": {"to": {"type": "string"}, "amount": {"type": "integer"}},
              "required": ["to", "amount"]}
    return define_tool("transfer", "Send money", schema, replay="unsafe", execute=execute, approval=approval)


def weather_tool() -> Any:
    """A safe tool that asks the model to call it again for a misspelt city (`RetryTool`)."""

    async def execute(args: Any, api: Any, ctx: Any) -> str:
        city = args.get("city")
        await api.output(f"looking up {city}")
        if city != "Paris":
            raise RetryTool(f"No city named {city!r}; check the spelling")
        return "Sunny in Paris"

    return define_tool("weather", "The weather in a city", {"type": "object", "properties": {"city": {"type":
                       "string"}}}, replay="safe", execute=execute)


# --------------------------------------------------------------------------- scenarios


def _submits(text: str) -> Any:
    """A driver that submits `text` and lets the run go to its end."""

    async def drive(d: Driver) -> None:
        await d.submit(text)

    return drive


def _streamed_world(clock: Any) -> World:
    model = by_input({"Hello": [reply("Hello there! How can I help you today?")]}, token_size=8)
    return World(model, settings=base_settings())



streamed_answer = Scenario("streamed_answer", _streamed_world, _submits("Hello"))


def _tool_world(clock: Any) -> World:
    model = by_input({
        "Buy the book": [
            reply("Let me check.", tool_calls=[call("lookup", {"q": "book"}), call("charge_card", {"amount": 5})]),
            reply("Bought it for 5 EUR."),
        ],
    }, token_size=8)
    return World(model, tools=[lookup_tool(), charge_tool()], settings=base_settings())


tool_round = Scenario("tool_round", _tool_world, _submits("Buy the book"))


def _long_output_world(clock: Any) -> World:
    model = by_input({"Dump the log": [reply("", tool_calls=[call("dump")]), reply("Dumped.")]}, token_size=8)
    return World(model, tools=[long_output_tool(clock)], settings=base_settings())


long_tool_output = Scenario("long_tool_output", _long_output_world, _submits("Dump the log"))


def _retry_world(clock: Any) -> World:
    def first_fails(request: Any) -> Any:
        if request.attempt == 1:
            return error("Overloaded", kind="overloaded", status_code=529, partial="Hel")
        return reply("Hello after a retry")

    model = by_input({"Hi": [first_fails]}, token_size=8)
    return World(model, settings=base_settings())


retry_after_provider_error = Scenario("retry_after_provider_error", _retry_world, _submits("Hi"))


def _deferred_world(clock: Any) -> World:
    model = by_input({"Question": [reply("A deferred answer")]}, deferred=True, polls=2, poll_after=1.0)
    return World(model, settings=base_settings(stream=StreamSettings(deferred=True)))


deferred_answer = Scenario("deferred_answer", _deferred_world, _submits("Question"))


def _abort_world(clock: Any) -> World:
    model = by_input({
        "Go": [reply("Working on it", tool_calls=[call("slow_safe"), call("slow_unsafe")]), reply("Finished")],
    }, token_size=8)
    tools = [slow_tool("slow_safe", clock, replay="safe"), slow_tool("slow_unsafe", clock, replay="unsafe")]
    return World(model, tools=tools, settings=base_settings())


async def _drive_abort(d: Driver) -> None:
    await d.submit("Go")
    await d.until(lambda live: any(slot.output for slot in live.tools))
    await d.abort()


abort_in_tool_round = Scenario("abort_in_tool_round", _abort_world, _drive_abort)


async def _drive_abort_in_backoff(d: Driver) -> None:
    await d.submit("Hi")
    await d.until(lambda live: live.generation is not None and live.generation.retry is not None)
    await d.abort()


abort_in_backoff = Scenario("abort_in_backoff", _retry_world, _drive_abort_in_backoff)


def _compaction_world(clock: Any) -> World:
    model = by_input({
        "One": [reply("First answer")],
        "Two": [reply("Second answer")],
        "Three": [reply("Third answer")],
    }, summary="We talked about one, two and three.")
    return World(model, settings=base_settings(compaction=Compaction(keep_last=2)))


async def _drive_compaction(d: Driver) -> None:
    for text in ("One", "Two", "Three"):
        sub = await d.submit(text)
        await sub.wait()
    await d.compact()


compaction = Scenario("compaction", _compaction_world, _drive_compaction)


def _client_world(clock: Any) -> World:
    model = by_input({"Pick a file": [reply("", tool_calls=[call("pick_file")]), reply("You picked it")]})
    picker = define_tool("pick_file", "Ask the user to pick a file", client=True)
    return World(model, tools=[picker], settings=base_settings(), answer=lambda c: "/home/me/notes.txt")


client_tool = Scenario("client_tool", _client_world, _submits("Pick a file"))


def _queued_world(clock: Any) -> World:
    model = by_input({"First": [reply("First answer, streamed")], "Second": [reply("Second answer")]}, token_size=8)
    return World(model, settings=base_settings())


async def _drive_queued(d: Driver) -> None:
    await d.submit("First")
    await d.submit("Second")


queued_inputs = Scenario("queued_inputs", _queued_world, _drive_queued)


def _big(args: Any, ctx: Any) -> bool:
    return bool(args.get("amount", 0) > 100)


def _pay_decision(slot: ApprovalSlot) -> Approve:
    """Approve every call; a transfer of more than 100 EUR is cut down to 100 first."""
    args = json.loads(slot.arguments)
    return Approve({**args, "amount": 100}) if slot.tool == "transfer" and args.get("amount", 0) > 100 else Approve()


def _approved_world(clock: Any) -> World:
    model = by_input({
        "Pay the bill": [
            reply("Paying.", tool_calls=[call("lookup", {"q": "bill"}), call("transfer", {"to": "shop", "amount": 120}),
                                         call("transfer", {"to": "shop", "amount": 5})]),
            reply("Paid."),
        ],
    }, token_size=8)
    lookup = attrs.evolve(lookup_tool(), approval=True)
    return World(model, tools=[lookup, transfer_tool(approval=_big)], settings=base_settings(), decide=_pay_decision)


async def _drive_approved(d: Driver) -> None:
    await d.submit("Pay the bill")
    live = await d.until(lambda live: len(live.approvals) == 2)
    for slot in live.approvals:
        await d.approve(slot.call_id, _pay_decision(slot).arguments)


approved_tool = Scenario("approved_tool", _approved_world, _drive_approved)


def _denied_world(clock: Any) -> World:
    model = by_input({"Pay bob": [reply("", tool_calls=[call("transfer", {"to": "bob", "amount": 500})]),
                                  reply("I did not send it.")]}, token_size=8)
    return World(model, tools=[transfer_tool()], settings=base_settings(), decide=lambda slot: Deny("not bob"))


async def _drive_denied(d: Driver) -> None:
    await d.submit("Pay bob")
    live = await d.until(lambda live: bool(live.approvals))
    await d.deny(live.approvals[0].call_id, "not bob")


denied_tool = Scenario("denied_tool", _denied_world, _drive_denied)


def _undecided_world(clock: Any) -> World:
    world = _denied_world(clock)
    return attrs.evolve(world, settings=base_settings(approval_timeout=60.0), decide=None)


approval_timeout = Scenario("approval_timeout", _undecided_world, _submits("Pay bob"))


def _timeout_world(clock: Any) -> World:
    model = by_input({"Go slow": [reply("", tool_calls=[call("slow_safe"), call("slow_unsafe")]),
                                  reply("Both timed out.")]}, token_size=8)
    tools = [slow_tool("slow_safe", clock, replay="safe", timeout=30.0),
             slow_tool("slow_unsafe", clock, replay="unsafe", timeout=30.0)]
    return World(model, tools=tools, settings=base_settings())


tool_timeout = Scenario("tool_timeout", _timeout_world, _submits("Go slow"))


def _retry_tool_world(clock: Any) -> World:
    model = by_input({"Weather in Paris?": [reply("", tool_calls=[call("weather", {"city": "Pariss"})]),
                                            reply("", tool_calls=[call("weather", {"city": "Paris"})]),
                                            reply("Sunny.")]}, token_size=8)
    return World(model, tools=[weather_tool()], settings=base_settings())


tool_retry = Scenario("tool_retry", _retry_tool_world, _submits("Weather in Paris?"))


async def _day_section(ctx: Any) -> str:
    """A dynamic instruction section: what the run is about, read from its context."""
    return f"Today's plan is for: {', '.join(ctx.inputs)}."


def _instructions_world(clock: Any) -> World:
    def busy_first(request: Any) -> Any:
        if request.attempt == 1:
            return error("Overloaded", kind="overloaded", status_code=529, partial="Let")
        return reply("Let me look.", tool_calls=[call("lookup", {"q": "calendar"})])

    model = by_input({"Plan my day": [busy_first, reply("Meetings at 10 and 3.")]}, token_size=8)
    return World(model, tools=[lookup_tool()], settings=base_settings(), instructions=["Be brief.", _day_section])


dynamic_instructions = Scenario("dynamic_instructions", _instructions_world, _submits("Plan my day"))


@attrs.frozen
class Forecast:
    """The answer of `structured_output_retry`."""

    city: str
    celsius: int


def _structured_world(clock: Any) -> World:
    def corrected(request: Any) -> Any:  # the turn that follows the problems sent back
        return reply('{"city": "Paris", "celsius": 18}')

    model = by_input({"Weather in Paris?": [reply("Sunny, 18 C")]}, default=corrected, token_size=8)
    return World(model, settings=base_settings())


async def _drive_structured(d: Driver) -> None:
    await d.submit("Weather in Paris?", output=Forecast)


structured_output_retry = Scenario("structured_output_retry", _structured_world, _drive_structured)


def _limit_world(clock: Any) -> World:
    model = by_input({"Walk": [reply("", tool_calls=[call("lookup", {"q": "1"})]),
                               reply("", tool_calls=[call("lookup", {"q": "2"})])]})
    return World(model, tools=[lookup_tool()], settings=base_settings(usage_limits=UsageLimits(request_limit=2)))


usage_limit = Scenario("usage_limit", _limit_world, _submits("Walk"))


def _reasoning_world(clock: Any) -> World:
    model = by_input({"Weather?": [
        reply("", tool_calls=[call("lookup", {"q": "weather"})], reasoning="Look it up first."),
        reply("Sunny.", reasoning="It says sunny."),
    ]}, token_size=8)
    return World(model, tools=[lookup_tool()], settings=base_settings())


reasoning_tool_loop = Scenario("reasoning_tool_loop", _reasoning_world, _submits("Weather?"))


def _fallback_model(deferred: bool) -> FallbackModel:
    primary = by_input(default=error("Invalid API key", kind="auth", status_code=401), name="openai:gpt-4o")
    secondary = by_input({"Price?": [reply("Checking.", tool_calls=[call("lookup", {"q": "book"})]),
                                     reply("It costs 5 EUR.")]},
                         token_size=8, name="anthropic:claude-sonnet-4-5", deferred=deferred, polls=2)
    return FallbackModel([primary, secondary])


def _fallback_world(clock: Any) -> World:
    return World(_fallback_model(False), tools=[lookup_tool()], settings=base_settings())


def _fallback_deferred_world(clock: Any) -> World:
    return World(_fallback_model(True), tools=[lookup_tool()],
                 settings=base_settings(stream=StreamSettings(deferred=True)))


fallback_tool_round = Scenario("fallback_tool_round", _fallback_world, _submits("Price?"))
fallback_deferred_secondary = Scenario("fallback_deferred_secondary", _fallback_deferred_world, _submits("Price?"))


def _subagent_world(clock: Any) -> World:
    model = by_input({
        "Research and buy": [reply("Asking two helpers.", tool_calls=[call("researcher", {"task": "Find the price"}),
                                                                      call("buyer", {"task": "Buy the book"})]),
                             reply("The book cost 5 EUR and is bought.")],
        "Find the price": [reply("", tool_calls=[call("lookup", {"q": "book"})]), reply("5 EUR")],
        "Buy the book": [reply("Paying.", tool_calls=[call("charge_card", {"amount": 5})]), reply("Bought.")],
        "Slow job": [reply("", tool_calls=[call("slow_unsafe")]), reply("Never read")],
        "Delegate": [reply("", tool_calls=[call("worker", {"task": "Slow job"})]), reply("Never read")],
    }, token_size=8)
    tools = [subagent("researcher", "Finds prices", instructions="Be exact.", tools=[lookup_tool()]),
             subagent("buyer", "Buys things", tools=[charge_tool()]),
             subagent("worker", "Works slowly", tools=[slow_tool("slow_unsafe", clock, replay="unsafe")])]
    return World(model, tools=tools, settings=base_settings())


subagents = Scenario("subagents", _subagent_world, _submits("Research and buy"))


async def _drive_abort_subagent(d: Driver) -> None:
    await d.submit("Delegate")
    await d.until(lambda live: any(slot.output for slot in live.tools), conversation="root/worker-2")
    await d.abort()


abort_subagent = Scenario("abort_subagent", _subagent_world, _drive_abort_subagent)


REQUIRED = (streamed_answer, tool_round, retry_after_provider_error, deferred_answer, abort_in_tool_round, compaction)
TOOL_OPTIONS = (approved_tool, denied_tool, approval_timeout, tool_timeout, tool_retry)
AGENT_LOOP = (dynamic_instructions, structured_output_retry, usage_limit)
MODELS = (fallback_tool_round, fallback_deferred_secondary)
SUBAGENTS = (subagents, abort_subagent)
ALL = (*REQUIRED, long_tool_output, client_tool, queued_inputs, abort_in_backoff, *TOOL_OPTIONS, *AGENT_LOOP,
       reasoning_tool_loop, *MODELS, *SUBAGENTS)
BY_NAME = {s.name: s for s in ALL}
