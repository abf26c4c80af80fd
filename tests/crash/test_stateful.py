"""A stateful exploration: hypothesis draws sequences of host actions (submit an input with a
drawn model script to one of two conversations, possibly asking for structured output, abort,
compact, answer a client tool, approve or deny the calls waiting for approval, advance the clock,
reopen and settle), and every action is one process lifetime that ends in a clean close, a crash
once the harness is idle, or a crash just before or after one of its commits. The harness is
drawn with or without instructions (static, or a section that works on the clock: a crash may
land in prepare) and usage limits. The invariants are checked after every step, and at the end
after a last lifetime settles everything.

Bounded in CI (25 examples of up to 10 steps, derandomized); run it long with
`DURABLE_STATEFUL_EXAMPLES=2000` (then hypothesis explores with fresh randomness)."""

from __future__ import annotations

import os
import shutil
import tempfile

import attrs
import trio
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

import durable
from durable import records as r
from durable.models import faux
from durable.storage import SQLiteStorage
from durable.tasks.tool import Approval
from durable.testing import (
    Approve,
    CrashableStorage,
    Deny,
    ExecutionLog,
    FakeClock,
    FauxJobLedger,
    by_input,
    check_commit_history,
    check_invariants,
    default_decision,
    describe_session,
    settle,
    wait_idle,
)
from durable.testing.explore import _lifetime
from durable.testing.scenarios import charge_tool, lookup_tool, slow_tool, transfer_tool, weather_tool

EXAMPLES = int(os.environ.get("DURABLE_STATEFUL_EXAMPLES", "25"))
LONG = "DURABLE_STATEFUL_EXAMPLES" in os.environ

# Violations of engine bugs that have their own xfail test (test_engine_bugs.py); they are set
# aside here so that the exploration keeps looking for others. Remove an entry with its fix.
KNOWN_ENGINE_BUGS: dict = {}  # every engine bug found so far is fixed (see test_engine_bugs.py)
SET_ASIDE: dict[str, int] = {}


def unknown(problems):
    out = []
    for problem in problems:
        known = next((name for name, pattern in KNOWN_ENGINE_BUGS.items() if pattern.search(problem)), None)
        if known is None:
            out.append(problem)
        else:
            SET_ASIDE[known] = SET_ASIDE.get(known, 0) + 1
    return out

STEPS = st.one_of(
    st.tuples(st.just("reply"), st.sampled_from(["Sure.", "Here is a longer answer, streamed in parts."])),
    # pay: waits for approval; timed: past its timeout unless the clock stays; weather: asks to be
    # called again (RetryTool), then is out of retries.
    st.tuples(st.just("tools"), st.lists(st.sampled_from(["lookup", "charge_card", "slow", "slow_unsafe", "ask",
                                                          "pay", "timed", "weather"]),
                                         min_size=1,
                                         max_size=3)),
    st.tuples(st.just("flaky")),
    st.tuples(st.just("error_stop")),
    st.tuples(st.just("auth")),
    st.tuples(st.just("json")),
)
CONVERSATIONS = st.sampled_from(["root", "side"])
ENDINGS = st.one_of(
    st.tuples(st.just("close")),
    st.tuples(st.just("crash_when_idle")),
    st.tuples(st.sampled_from(["crash_after", "crash_before"]), st.integers(1, 8)),
)


def faux_step(step):
    kind = step[0]
    if kind == "reply":
        return faux.reply(step[1])
    if kind == "tools":
        arguments = {"lookup": {"q": "x"}, "pay": {"to": "bob", "amount": 5}, "weather": {"city": "Pariss"}}
        calls = [faux.call("transfer" if name == "pay" else name, arguments.get(name, {})) for name in step[1]]
        return faux.reply("Let me use my tools.", tool_calls=calls)
    if kind == "flaky":
        return lambda req: (faux.error("Overloaded", kind="overloaded", status_code=529, partial="Par")
                            if req.attempt == 1 else faux.reply("Recovered."))
    if kind == "error_stop":
        return faux.error_stop("The model refused", partial="No")
    if kind == "json":
        return faux.reply('{"answer": "yes"}')
    return faux.error("Invalid API key", kind="auth", status_code=401)


@attrs.frozen
class Structured:
    answer: str


def after_correction(request):
    """What the model says after an answer was sent back (the turn of the correction): the JSON
    on the first correction, prose again on a later one."""
    corrections = sum(1 for m in request.messages if isinstance(m, r.UserEntry) and m.submission_id is None)
    return faux.reply('{"answer": "fixed"}' if corrections == 1 else "Still prose.")


class HarnessLifetimes(RuleBasedStateMachine):
    """Each rule is one process lifetime on the same session file."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="durable-stateful-")
        self.path = os.path.join(self.dir, "session.sqlite")
        self.now = 1_000_000.0
        self.executions = ExecutionLog()
        self.ledger = FauxJobLedger()
        self.answers: dict[str, list] = {}
        self.acknowledged: list[str] = []
        self.batches: list = []
        self.requests: list = []
        self.inputs = 0
        self.log: list[str] = []
        self.settings = durable.Settings()
        self.deferred = False
        self.instructions = "none"

    @initialize(deferred=st.booleans(), restart_limit=st.sampled_from([1, 2, 3]),
                max_retries=st.sampled_from([0, 1, 3]), when_busy=st.sampled_from(["queue", "interrupt"]),
                approval_timeout=st.sampled_from([None, 30.0]),
                instructions=st.sampled_from(["none", "static", "dynamic"]), output_retries=st.sampled_from([0, 1, 2]),
                limits=st.sampled_from([None, "run", "conversation"]))
    def configure(self, deferred, restart_limit, max_retries, when_busy, approval_timeout, instructions,
                  output_retries, limits):
        self.deferred = deferred
        self.instructions = instructions
        self.settings = durable.Settings(
            retry=durable.RetryPolicy(max_retries=max_retries, base_delay=1.0, max_delay=4.0),
            restart_limit=restart_limit,
            progress=durable.Progress(persist_within=0, output_interval=0),
            stream=durable.StreamSettings(deferred=deferred),
            compaction=durable.Compaction(keep_last=2),
            client_tool_timeout=60.0,
            when_busy=when_busy,
            approval_timeout=approval_timeout,
            output_retries=output_retries,
            usage_limits=durable.UsageLimits(request_limit=3) if limits == "run" else None,
            conversation_usage_limits=durable.UsageLimits(total_tokens_limit=400) if limits == "conversation" else None,
        )
        self.log.append(f"configure(deferred={deferred}, restart_limit={restart_limit}, max_retries={max_retries}, "
                        f"when_busy={when_busy}, approval_timeout={approval_timeout}, instructions={instructions}, "
                        f"output_retries={output_retries}, limits={limits})")

    # ------------------------------------------------------------------ one lifetime

    def lifetime(self, action, ending, *, full_settle=False, decide=default_decision):
        """Open a harness, do `action(h, clock)`, wait until idle (or settle), then end as drawn."""
        self.log.append(f"{getattr(action, '__name__', 'reopen')} -> {ending}")

        async def run():
            clock = FakeClock(self.now)
            model = by_input(self.answers, default=after_correction, deferred=self.deferred, polls=2, poll_after=1.0,
                             token_size=8, keep_requests=None)  # record: the invariants check every request
            model = self.ledger.model(model)
            tools = self.executions.wrap_all([
                lookup_tool(), charge_tool(), slow_tool("slow", clock, replay="safe", seconds=30.0),
                slow_tool("slow_unsafe", clock, replay="unsafe", seconds=30.0),
                durable.define_tool("ask", "Ask the user", client=True),
                transfer_tool(), slow_tool("timed", clock, replay="safe", seconds=30.0, timeout=10.0),
                weather_tool()])
            kw = {ending[0]: ending[1]} if ending[0] in ("crash_after", "crash_before") else {}
            store = CrashableStorage(SQLiteStorage(self.path, synchronous="NORMAL"), **kw)
            async def section(ctx):  # works on the clock: a crash may land while it runs, in prepare
                await clock.sleep_until(clock.now() + 2.0, f"section:{ctx.task_id}")
                return f"The run of task {ctx.task_id} answers: {', '.join(ctx.inputs)}."

            instructions = {"none": [], "static": ["Be brief."], "dynamic": ["Be brief.", section]}[self.instructions]
            harness = durable.open_harness(store, model=model, tools=tools, settings=self.settings, clock=clock,
                                           instructions=instructions)

            async def body():
                await action(harness, clock)
                if full_settle:
                    await settle(harness, clock, stuck_after=5.0, decide=decide)
                else:
                    await harness.resume()
                    await wait_idle(harness)
                if ending[0] != "close":
                    store.crash()  # idle, or the planned commit was never reached: die now

            await _lifetime(store, harness, body)
            if store.crashed.is_set():
                await store.release()
            self.batches += store.batches
            self.requests += model.requests
            self.now = clock.now()
            return store.crashed.is_set()

        crashed = trio.run(run)
        problems = check_invariants(self.path, executions=self.executions, jobs=self.ledger, requests=self.requests,
                                    settings=self.settings, acknowledged=self.acknowledged,
                                    clean_close=not crashed)
        problems += check_commit_history(self.batches)
        problems = unknown(problems)
        assert problems == [], self.explain(problems)

    def explain(self, problems):
        return "\n".join(["Violations:", *problems, "Steps:", *self.log, describe_session(self.path)])

    # ------------------------------------------------------------------ rules

    @rule(script=st.lists(STEPS, min_size=1, max_size=3), conversation=CONVERSATIONS, ending=ENDINGS,
          structured=st.booleans())
    def submit(self, script, conversation, ending, structured):
        self.submit_script(script, conversation, ending, structured)

    # The tool options get a rule of their own, so that a run of a few steps meets them too.
    @rule(tools=st.lists(st.sampled_from(["pay", "timed", "weather"]), min_size=1, max_size=2),
          then=st.sampled_from(["reply", "tools"]), conversation=CONVERSATIONS, ending=ENDINGS)
    def submit_with_tool_options(self, tools, then, conversation, ending):
        script = [("tools", tools), ("tools", tools) if then == "tools" else ("reply", "Sure.")]
        self.submit_script(script, conversation, ending, False)

    def submit_script(self, script, conversation, ending, structured):
        self.inputs += 1
        text = f"input {self.inputs}"
        self.answers[text] = [faux_step(s) for s in script]
        self.log.append(f"  script of {text!r} in {conversation!r}{' (structured)' if structured else ''}: {script}")

        async def submit_input(h, clock):
            handle = await h.conversation(conversation).submit(text, output=Structured if structured else None)
            self.acknowledged.append(handle.id)

        self.lifetime(submit_input, ending)

    @precondition(lambda self: self.inputs > 0)
    @rule(conversation=CONVERSATIONS, ending=ENDINGS)
    def abort(self, conversation, ending):
        self.conversation_lifetime(conversation, "abort", lambda c: c.abort(), ending)

    @precondition(lambda self: self.inputs > 0)
    @rule(conversation=CONVERSATIONS, ending=ENDINGS)
    def compact(self, conversation, ending):
        self.conversation_lifetime(conversation, "compact", lambda c: c.compact(), ending)

    def conversation_lifetime(self, conversation, name, act, ending):
        """A lifetime that calls `act` (named `name` in the log) on one conversation's handle."""

        async def on_conversation(h, clock):
            await act(h.conversation(conversation))

        on_conversation.__name__ = f"{name}({conversation!r})"
        self.lifetime(on_conversation, ending)

    @precondition(lambda self: self.inputs > 0)
    @rule(ending=ENDINGS)
    def answer_client_tools(self, ending):
        async def answer(h, clock):
            await h.resume()
            await wait_idle(h)
            for task in await h.tasks(kind="tool", state="waiting"):
                if task.input.client:
                    try:
                        await h.submit_tool_result(task.input.call.id, "the user said yes")
                    except durable.ToolResultRejected:
                        pass

        self.lifetime(answer, ending)

    @precondition(lambda self: self.inputs > 0)
    @rule(approve=st.booleans(), edit=st.booleans(), ending=ENDINGS)
    def decide_approvals(self, approve, edit, ending):
        async def decide(h, clock):
            await h.resume()
            await wait_idle(h)
            for task in await h.tasks(kind="tool", state="waiting"):
                if not isinstance(task.checkpoint, Approval):
                    continue
                try:
                    if approve:
                        await h.approve(task.input.call.id, {"to": "ann", "amount": 1} if edit else None)
                    else:
                        await h.deny(task.input.call.id, "not now")
                except durable.ApprovalRejected:
                    pass

        decide.__name__ = f"decide_approvals(approve={approve}, edit={edit})"
        self.lifetime(decide, ending)

    @rule(seconds=st.sampled_from([0.5, 1.0, 2.0, 30.0, 100.0]), ending=ENDINGS)
    def advance_clock(self, seconds, ending):
        async def advance(h, clock):
            await h.resume()
            await wait_idle(h)
            clock.advance(seconds)

        advance.__name__ = f"advance_clock({seconds})"
        self.lifetime(advance, ending)

    @rule(ending=ENDINGS, decision=st.sampled_from(["approve", "edit", "deny", "leave"]))
    def reopen_and_settle(self, ending, decision):
        async def reopen(h, clock):
            pass

        reopen.__name__ = f"reopen_and_settle(decide={decision})"
        policies = {"approve": default_decision, "edit": lambda slot: Approve({"to": "ann", "amount": 2}),
                    "deny": lambda slot: Deny("not in this lifetime"), "leave": None}
        self.lifetime(reopen, ending, full_settle=True, decide=policies[decision])

    def teardown(self):
        try:
            if os.path.exists(self.path):
                async def nothing(h, clock):
                    pass

                self.lifetime(nothing, ("close",), full_settle=True)
                problems = check_invariants(self.path, executions=self.executions, jobs=self.ledger,
                                            requests=self.requests, settings=self.settings,
                                            acknowledged=self.acknowledged, clean_close=True, quiescent=True)
                problems = unknown(problems)
                assert problems == [], self.explain(problems)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


HarnessLifetimes.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=10,
    deadline=None,
    derandomize=not LONG,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
test_random_lifetimes_of_a_harness_keep_every_invariant_after_every_step = HarnessLifetimes.TestCase


def teardown_module(module):
    if SET_ASIDE:
        print(f"\nviolations of known engine bugs set aside: {SET_ASIDE}")
