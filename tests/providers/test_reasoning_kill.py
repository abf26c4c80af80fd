"""SIGKILL while a reasoning stream is being written: a real child process streams a reasoning
model's thinking from the local server (Anthropic thinking, OpenAI Responses summary, Chat
`reasoning_content`), commits it coalesced into live, and is killed with SIGKILL in the middle of
it, the server still holding the stream open. Reopened: the partial reasoning is on the aborted
entry (marked partial, unsigned), the retried request does not carry it, and every invariant of
docs/spec.md §6 holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import durable
from durable import records as r
from durable.engine.reports import TaskInterrupted, TaskRef
from durable.tasks.generation.records import HOST_STOPPED_STREAM
from durable.testing import FakeClock, check_invariants

from .conftest import ANTHROPIC_KEY, OPENAI_KEY
from .reasoning_wire import anthropic_thinking, chat_reasoning, responses_reasoning
from .test_harness_integration import NAME
from .test_reasoning_harness import PATH, conversation, reasoning_model

pytestmark = pytest.mark.anyio

CHILD = """
import json, sys, anyio, durable
from durable.models.anthropic import AnthropicModel
from durable.models.openai import OpenAIModel

path, url, api, expected = sys.argv[1:5]
if api == "anthropic":
    model = AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, base_url=url,
                           thinking={"type": "enabled", "budget_tokens": 2048})
elif api == "responses":
    model = OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=url + "/v1", store=False)
else:
    model = OpenAIModel("llama", api="chat", api_key=OPENAI_KEY, base_url=url + "/v1")

async def main():
    settings = durable.Settings(system_prompt="Be brief.")  # the default coalescing: 100 ms
    async with durable.open_harness(path, model=model, settings=settings) as h:
        sub = await h.root.submit("Weather in Paris?")
        async for live in h.root.follow():
            if live.generation is not None and live.generation.message.reasoning == expected:
                print(json.dumps({"submission": sub.id, "reasoning": live.generation.message.reasoning,
                                  "text": live.generation.message.text}), flush=True)
                await anyio.sleep_forever()

anyio.run(main, backend="trio")
""".replace("ANTHROPIC_KEY", repr(ANTHROPIC_KEY)).replace("OPENAI_KEY", repr(OPENAI_KEY))

THOUGHT = ["Paris in December. ", "The user wants ", "the weather, so "]
SEEN = "".join(THOUGHT)


def held_mid_reasoning(api: str) -> Any:
    """The reasoning so far, then nothing: the stream stays open (no signature, no end)."""
    if api == "anthropic":
        return anthropic_thinking([("think", THOUGHT, None)], [], stop=None, end="hold")
    if api == "responses":
        return responses_reasoning([("rs_1", [THOUGHT], "enc-1")], [], complete=False, end="hold")
    return chat_reasoning([("reasoning_content", t) for t in THOUGHT], [], end="hold", done=False)


def answered(api: str) -> Any:
    if api == "anthropic":
        return anthropic_thinking([("think", ["Sunny there."], "sig-2")], ["Sunny."])
    if api == "responses":
        return responses_reasoning([("rs_2", [["Sunny there."]], "enc-2")], ["Sunny."])
    return chat_reasoning([("reasoning", "Sunny there.")], ["Sunny."])


BLOCK = {"anthropic": r.Reasoning("Sunny there.", "anthropic", signature="sig-2"),
         "responses": r.Reasoning("", "openai", id="rs_2", encrypted="enc-2", summary=("Sunny there.",)),
         "chat": r.Reasoning("Sunny there.")}
STARTED = {"anthropic": r.Usage(40, 1), "responses": r.Usage(), "chat": r.Usage()}  # what the partial had


async def run_child_until_reasoning_then_kill(path: Path, url: str, api: str) -> dict:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), url, api, SEEN], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None
    try:
        with anyio.fail_after(30):
            line = await anyio.to_thread.run_sync(child.stdout.readline)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        await anyio.to_thread.run_sync(child.wait)
    assert child.returncode == -signal.SIGKILL
    return json.loads(line)


@pytest.mark.parametrize("api", ["anthropic", "responses", "chat"])
async def test_a_sigkill_mid_reasoning_keeps_the_partial_on_the_aborted_entry_and_never_resends_it(
        server, tmp_path, api):
    path = tmp_path / "session.sqlite"
    server.script("POST", PATH[api], held_mid_reasoning(api), answered(api))
    seen = await run_child_until_reasoning_then_kill(path, server.url, api)
    assert seen == {"submission": seen["submission"], "reasoning": SEEN, "text": ""}  # committed, then killed
    await server.wait_for(server.disconnected)  # the kill closed the held stream

    clock, reports = FakeClock(), []
    settings = durable.Settings(system_prompt="Be brief.", retry=durable.RetryPolicy(base_delay=1.0))
    with anyio.fail_after(15):
        async with durable.open_harness(path, model=reasoning_model(server, api), settings=settings, clock=clock,
                                        report=reports.append) as h:
            await h.resume()  # charges the request the kill cut off: attempt 1 failed, a backoff
            await clock.wait_for_timer("retry:1")
            clock.advance(1.0)
            assert await h.root.submission(seen["submission"]).wait() == r.Answered("Sunny.", 3)
    detail = HOST_STOPPED_STREAM.format(attempt=1)
    assert reports == [TaskInterrupted(TaskRef(1, "generation", "root"), "interrupted", 1, detail)]
    store = durable.SQLiteStorage(path)
    await store.open()
    try:
        entries = [e.entry for e in await store.get_entries("root")]
    finally:
        await store.close()
    assert entries[1] == r.AssistantEntry("", "aborted", (), STARTED[api], detail, 1, interrupted=True,
                                          reasoning=(r.Reasoning(SEEN, partial=True),), model=NAME[api])
    assert (entries[2].text, entries[2].stop_reason, entries[2].attempt, entries[2].reasoning) == (
        "Sunny.", "stop", 2, (BLOCK[api],))
    first, retried = (q.body for q in server.requests_to("POST", PATH[api]))
    question = {"role": "user", "content": "Weather in Paris?"}
    if api == "anthropic":  # the newest user turn carries a cache breakpoint
        question["content"] = [{"type": "text", "text": "Weather in Paris?", "cache_control": {"type": "ephemeral"}}]
    assert conversation(api, retried) == conversation(api, first) == [question]
    assert "Paris in December" not in json.dumps(retried)
    assert check_invariants(path, settings=settings, acknowledged=[seen["submission"]], clean_close=True,
                            quiescent=True) == []
