"""The real harness with `GeminiModel`, against the local 127.0.0.1 server speaking Gemini's REST
wire format: a streamed answer (live partial, exact entries and usage), a tool loop (function
call and response with their ids), a 429 retried after its `RetryInfo` delay, a rejected key
ending the run without a retry, and a crash mid-stream resent with the same body (docs/spec.md
§3-§5). A key echoed in any form is checked end to end with the other providers in test_secrets."""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any

import pytest

import durable
from durable import records as r
from durable.engine.reports import ErrorReport, TaskInterrupted, TaskRef
from durable.models.gemini import GeminiModel
from durable.testing import check_invariants, crash

from .conftest import GEMINI_KEY, json_reply
from .test_gemini import KEY_INVALID, PATH, RETRY_INFO, SYSTEM, error_body, gemini_stream, user_text
from .test_harness_integration import Host, until_live

pytestmark = pytest.mark.anyio

NAME = "google:gemini-test"
USAGE = r.Usage(25, 11, reasoning_tokens=4, cache_read_tokens=5)
CALL = r.ToolCall("call_1", "get_weather", '{"city": "Paris"}')
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ROOT_GEN = TaskRef(1, "generation", "root")


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path / "session.sqlite")


def model(server: Any) -> GeminiModel:
    server.models.append(GeminiModel("gemini-test", api_key=GEMINI_KEY, base_url=server.url))
    return server.models[-1]


def used(requests: int, *answers: r.Usage) -> r.UsageTotals:
    return r.UsageTotals().add(NAME, requests=requests, tokens=sum(answers, r.Usage()))


async def test_a_streamed_answer_through_the_harness(server, host):
    reply = gemini_stream(["Hello ", "there!"])
    reply.pause_after, reply.resume = 1, threading.Event()  # stop right after "Hello "
    server.script("POST", PATH, reply)
    async with host.open(model(server)) as h:
        sub = await h.root.submit("Hello")
        live = await until_live(h, lambda live: live.generation is not None and live.generation.message.text)
        assert (live.generation.attempt, live.generation.message.text) == (1, "Hello ")  # streamed, committed
        reply.resume.set()
        assert await sub.wait() == r.Answered("Hello there!", 2)
        assert h.root.live() == r.Live(usage=used(1, USAGE))
    assert await host.entries() == [r.UserEntry("Hello", sub.id),
                                    r.AssistantEntry("Hello there!", "stop", (), USAGE, None, 1, model=NAME)]
    [sent] = server.requests
    assert sent.body == {"contents": [user_text("Hello")], "systemInstruction": SYSTEM, "generationConfig": {}}
    assert host.reports == []


async def test_a_tool_loop_sends_the_function_response_with_the_calls_id(server, host):
    executed = []

    async def get_weather(args, api, ctx):
        executed.append((ctx.call_id, args))
        return "18 C"

    weather = durable.define_tool("get_weather", "The weather in a city", WEATHER_SCHEMA, execute=get_weather)
    server.script("POST", PATH, gemini_stream([], [CALL]), gemini_stream(["Sunny, 18 C."]))
    async with host.open(model(server), tools=[weather]) as h:
        assert await (await h.root.submit("Weather in Paris?")).wait() == r.Answered("Sunny, 18 C.", 4)
    assert executed == [("call_1", {"city": "Paris"})]
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result", "assistant:stop"]
    first, second = server.requests
    assert first.body["tools"] == [{"functionDeclarations": [{
        "description": "The weather in a city", "name": "get_weather", "parameters_json_schema": WEATHER_SCHEMA}]}]
    assert second.body["contents"] == [
        user_text("Weather in Paris?"),
        {"role": "model", "parts": [{"functionCall": {"id": "call_1", "args": {"city": "Paris"},
                                                      "name": "get_weather"}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "get_weather",
                                                         "response": {"output": "18 C"}}}]},
    ]


async def test_a_429_is_retried_after_its_retry_info_delay_and_attempt_2_answers(server, host):
    body = error_body(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", RETRY_INFO)
    message = "Gemini rate limit reached (HTTP 429): You exceeded your current quota."
    server.script("POST", PATH, json_reply(body, 429), gemini_stream(["Fine."]))
    async with host.open(model(server)) as h:
        sub = await h.root.submit("Hello")
        at = await host.clock.wait_for_timer("retry:1")
        assert at == host.clock.now() + 13.0  # RetryInfo's 13 s beats the 1 s base delay
        assert h.root.live().generation == r.GenerationLive(
            1, retry=r.RetryLive(1, at, message, "rate_limit", "google", 429))
        assert len(server.requests) == 1  # nothing is sent while the backoff runs
        host.clock.advance(13.0)
        assert await sub.wait() == r.Answered("Fine.", 2)
    assert await host.transcript() == ["user", "assistant:stop"]
    assert host.reports == [ErrorReport(f"Attempt 1 of task 1 failed: {message}", ROOT_GEN,
                                        {"status_code": 429, "body": body}, "model")]


async def test_a_rejected_key_ends_the_run_unanswered_without_a_retry(server, host):
    body = error_body(400, "INVALID_ARGUMENT", f"API key not valid: {GEMINI_KEY}", KEY_INVALID)
    message = "Gemini rejected the credentials (HTTP 400): API key not valid: ***"
    server.script("POST", PATH, json_reply(body, 400))
    async with host.open(model(server)) as h:
        sub = await h.root.submit("Hello")
        assert await sub.wait() == r.Unanswered("model_error", message)
        assert host.clock.timers == {}
    assert len(server.requests) == 1
    assert await host.transcript() == ["user"]
    assert GEMINI_KEY not in repr(host.reports)
    assert GEMINI_KEY.encode() not in host.file_bytes()


async def test_a_crash_mid_stream_keeps_the_partial_aborted_and_resends_the_same_request(server, host):
    cut = gemini_stream(["Hel", "lo"], finish=None, end="hold")
    cut.pause_after, cut.resume = 1, threading.Event()
    server.script("POST", PATH, cut, gemini_stream(["Hello again."]))
    async with host.open(model(server)) as h:
        sub = await h.root.submit("Hello")
        await until_live(h, lambda live: live.generation is not None and live.generation.message.text == "Hel")
        crash(h)
    async with host.open(model(server)) as h:  # a new process, a new model
        await h.resume()
        at = await host.clock.wait_for_timer("retry:1")
        assert len(server.requests) == 1  # nothing is sent during the backoff
        host.clock.advance(at - host.clock.now())
        assert await h.root.submission(sub.id).wait() == r.Answered("Hello again.", 3)
    stopped = "The host stopped while the model was answering, on attempt 1"
    assert await host.entries() == [
        r.UserEntry("Hello", sub.id),
        r.AssistantEntry("Hel", "aborted", (), r.Usage(25, 0, cache_read_tokens=5), stopped, 1, interrupted=True,
                         model=NAME),
        r.AssistantEntry("Hello again.", "stop", (), USAGE, None, 2, model=NAME),
    ]
    assert host.reports == [TaskInterrupted(ROOT_GEN, "interrupted", 1, stopped)]
    first, second = server.requests
    assert second.body == first.body  # the partial is not sent back: the same request again
    assert check_invariants(host.path) == []


async def test_an_image_input_and_a_tool_returning_an_image_are_sent_as_inline_data(server, host, tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    shot = b"\x89PNG\r\n\x1a\n" + b"screen" * 20
    pdf = b"%PDF-1.7\n" + b"report" * 10
    (tmp_path / "report.pdf").write_bytes(pdf)

    async def screenshot(args, api, ctx):
        return ["Screen captured", durable.Image(shot)]

    call = r.ToolCall("call_1", "screenshot", "{}")
    tool = durable.define_tool("screenshot", "Take a screenshot", execute=screenshot)
    server.script("POST", PATH, gemini_stream([], [call]), gemini_stream(["A login form."]))
    async with host.open(model(server), tools=[tool]) as h:
        sub = await h.root.submit(["What is this?", durable.Image(png), durable.File(tmp_path / "report.pdf")])
        assert await sub.answer() == "A login form."
    # The SDK writes bytes in base64url and keeps `mime_type` as given: the API reads both forms.
    b64 = {name: base64.urlsafe_b64encode(data).decode() for name, data in (("png", png), ("shot", shot), ("pdf", pdf))}
    user = {"role": "user", "parts": [
        {"text": "What is this?"},
        {"inlineData": {"mime_type": "image/png", "data": b64["png"]}},
        {"inlineData": {"mime_type": "application/pdf", "data": b64["pdf"]}},
    ]}
    first, second = server.requests
    assert first.body["contents"] == [user]
    assert second.body["contents"] == [
        user,
        {"role": "model", "parts": [{"functionCall": {"id": "call_1", "args": {}, "name": "screenshot"}}]},
        {"role": "user", "parts": [  # the result's text (its image as a placeholder), then the image itself
            {"functionResponse": {"id": "call_1", "name": "screenshot",
                                  "response": {"output": "Screen captured\n\n[image: image/png, 128 B]"}}},
            {"inlineData": {"mime_type": "image/png", "data": b64["shot"]}},
        ]},
    ]
