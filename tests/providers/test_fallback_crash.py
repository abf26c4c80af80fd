"""A `FallbackModel` across a SIGKILL, with the real adapters against the local 127.0.0.1 server:
the primary (OpenAI Responses) rejects the credentials for good, the run moves to the secondary
(Anthropic Messages), whose stream is in flight when the process is killed; reopened, the
interrupted request is charged and sent again to the secondary, never to the primary, and it
answers. Exact transcript, reports (of the killed process and of the reopened one), requests
sent, usage with its cost, and the invariants of docs/spec.md §6."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import anyio
import pytest

import durable
from durable import records as r
from durable.engine.reports import TaskInterrupted, TaskRef
from durable.models.anthropic import AnthropicModel
from durable.models.openai import OpenAIModel
from durable.storage import SQLiteStorage
from durable.testing import FakeClock, check_invariants
from tests.children import first_line_then_kill

from .conftest import ANTHROPIC_KEY, OPENAI_KEY, json_reply
from .test_anthropic import message_events

pytestmark = pytest.mark.anyio

GPT, CLAUDE = "openai:gpt-4o", "anthropic:claude-sonnet-4-5"
GEN = TaskRef(1, "generation", "root")
HOST_STOPPED_1 = "The host stopped while the model was answering, on attempt 1"
REJECTED = "OpenAI rejected the credentials (HTTP 401): Incorrect API key provided: ***."

CHILD = """
import json, sys, anyio, durable
from durable.models.anthropic import AnthropicModel
from durable.models.openai import OpenAIModel

path, url, openai_key, anthropic_key = sys.argv[1:5]
reports = []

def said(report):
    fields = {"type": report.type, "message": getattr(report, "message", None)}
    if report.type == "model_fallback":
        fields.update(from_model=report.from_model, to_model=report.to_model, attempt=report.attempt,
                      error=report.error)
    return fields

async def main():
    model = durable.FallbackModel([OpenAIModel("gpt-4o", api_key=openai_key, base_url=url + "/v1"),
                                   AnthropicModel("claude-sonnet-4-5", api_key=anthropic_key, base_url=url)])
    settings = durable.Settings(progress=durable.Progress(persist_within=0, output_interval=0))
    async with durable.open_harness(path, model=model, settings=settings, report=reports.append) as h:
        sub = await h.root.submit("hi")
        async for live in h.root.follow():
            if live.generation is not None and live.generation.message.text == "Hel":
                print(json.dumps({"submission": sub.id, "reports": [said(x) for x in reports]}), flush=True)
                await anyio.sleep_forever()

anyio.run(main, backend="trio")
"""


def run_until_the_secondary_streams_then_kill(path: Path, url: str) -> dict:
    return json.loads(first_line_then_kill(CHILD, str(path), url, OPENAI_KEY, ANTHROPIC_KEY))


async def test_a_primary_failing_for_good_then_a_kill_mid_stream_on_the_secondary_is_retried_on_the_secondary(
        server, tmp_path):
    path = tmp_path / "session.sqlite"
    unauthorized = {"error": {"message": f"Incorrect API key provided: {OPENAI_KEY}.", "code": "invalid_api_key"}}
    in_flight = message_events(["Hel", "lo"], usage=(25, 11))
    # message_start, ping, content_block_start, "Hel": then the stream holds until `resume` (set
    # once the child is dead, so the server's thread ends its reply into a closed connection).
    in_flight.pause_after, in_flight.resume = 4, threading.Event()
    server.script("POST", "/v1/responses", json_reply(unauthorized, 401))
    server.script("POST", "/v1/messages", in_flight, message_events(["Hello", "."], usage=(25, 11)))

    seen = await anyio.to_thread.run_sync(run_until_the_secondary_streams_then_kill, path, server.url)
    in_flight.resume.set()
    sid = seen["submission"]
    assert seen["reports"] == [
        {"type": "error", "message": f"Attempt 1 of task 1 failed: {REJECTED}"},
        {"type": "model_fallback", "from_model": GPT, "to_model": CLAUDE, "attempt": 1, "error": REJECTED,
         "message": f"Task 1 moved from model {GPT} to {CLAUDE}: attempt 1 failed for good: {REJECTED}"},
    ]

    reports: list = []
    model = durable.FallbackModel([OpenAIModel("gpt-4o", api_key=OPENAI_KEY, base_url=server.url + "/v1"),
                                   AnthropicModel("claude-sonnet-4-5", api_key=ANTHROPIC_KEY, base_url=server.url)])
    server.models.append(model)
    clock = FakeClock()
    settings = durable.Settings(retry=durable.RetryPolicy(base_delay=1.0),
                                progress=durable.Progress(persist_within=0, output_interval=0))
    with anyio.fail_after(15):
        async with durable.open_harness(path, model=model, settings=settings, clock=clock,
                                        report=reports.append) as h:
            await h.resume()
            await clock.wait_for_timer("retry:1")
            clock.advance(1.0)
            assert await h.root.submission(sid).wait() == r.Answered("Hello.", 3)
            usage = h.root.usage()
    assert reports == [TaskInterrupted(GEN, "interrupted", 1, HOST_STOPPED_1)]

    store = SQLiteStorage(str(path))
    await store.open()
    try:
        entries = [e.entry for e in await store.get_entries("root")]
    finally:
        await store.close()
    started = r.Usage(25, 1, cache_read_tokens=5)  # message_start: charged even though the answer was cut off
    assert entries == [
        r.UserEntry("hi", sid),
        r.AssistantEntry("Hel", "aborted", (), started, HOST_STOPPED_1, 1, interrupted=True, model=CLAUDE),
        r.AssistantEntry("Hello.", "stop", (), r.Usage(25, 11, cache_read_tokens=5), None, 2, model=CLAUDE),
    ]
    # One request to the primary; two to the secondary, the second without the aborted partial.
    assert len(server.requests_to("POST", "/v1/responses")) == 1
    sent = server.requests_to("POST", "/v1/messages")
    hi = {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
    assert [q.body["messages"] for q in sent] == [[hi]] * 2  # (the newest user turn: a cache breakpoint)
    assert [q.body["model"] for q in sent] == ["claude-sonnet-4-5"] * 2
    # Costed with genai-prices: Claude Sonnet 4.5 at $3 in, $0.30 cache read, $15 out per million tokens.
    claude_cost = (2 * 20 * 3 + 2 * 5 * 0.3 + 12 * 15) / 1e6
    assert usage == r.UsageTotals((r.ModelUsage(GPT, 1, cost=0.0),
                                   r.ModelUsage(CLAUDE, 2, 50, 12, cache_read_tokens=10,
                                                cost=pytest.approx(claude_cost, abs=1e-12))))
    assert check_invariants(str(path), settings=settings, quiescent=True) == []
