"""The real harness with the real provider adapters, against the local 127.0.0.1 server speaking
the OpenAI (Responses, Chat Completions) and Anthropic (Messages, Message Batches) wire formats:
streamed answers, tool rounds, every error class and its retry decision, background jobs polled,
cut off by a crash and cancelled, and a silent stream aborted and retried (docs/spec.md §3-§5).

Each test opens `durable.open_harness` on a real SQLite file through a `CrashableStorage`, with a
`FakeClock` for the durable deadlines (backoffs, poll times); it waits on the harness's timers
and on the server's own signals, never on hopeful sleeps."""

from __future__ import annotations

import base64
import re
import threading
import zlib
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import durable.tasks.generation.attempts
import pytest

import durable
from durable import records as r
from durable.engine.reports import ErrorReport, TaskInterrupted, TaskRef
from durable.models import ModelRequest
from durable.models.anthropic import AnthropicModel
from durable.models.openai import SUMMARY_PREFIX, OpenAIModel
from durable.storage import SQLiteStorage
from durable.storage.sqlite.reader import SessionReader
from durable.tasks.compaction import SUMMARY_PROMPT, CompactionInput
from durable.tasks.generation.records import Poll
from durable.testing import CrashableStorage, FakeClock, crash
from durable.testing.crash import entry_kind

from .conftest import ANTHROPIC_KEY, OPENAI_KEY, Reply, json_reply, jsonl_reply
from .held_time import HeldTime
from .test_anthropic import batch, error_body, message_events, result_line
from .test_openai import chat_chunk, chat_stream, response_object, responses_stream

MODEL_TOPIC = "model"  # a failed attempt's report is about the model provider

pytestmark = pytest.mark.anyio

APIS = ["responses", "chat", "anthropic"]
PATH = {"responses": "/v1/responses", "chat": "/v1/chat/completions", "anthropic": "/v1/messages"}
USAGE = {"responses": r.Usage(12, 7), "chat": r.Usage(20, 9), "anthropic": r.Usage(25, 11, cache_read_tokens=5)}
NAME = {"responses": "openai:gpt-test", "chat": "openai:llama", "anthropic": "anthropic:claude-test"}
KEY = {"responses": OPENAI_KEY, "chat": OPENAI_KEY, "anthropic": ANTHROPIC_KEY}
ROOT_GEN = TaskRef(1, "generation", "root")


def used(api: str, requests: int, *answers: r.Usage) -> r.UsageTotals:
    """The usage totals of `requests` sent to `api`'s model and the `answers`' tokens."""
    return r.UsageTotals().add(NAME[api], requests=requests, tokens=sum(answers, r.Usage()))
FETCH_STOPPED_1 = "The host stopped while the deferred answer was fetched, on attempt 1"
CALL = r.ToolCall("call_1", "get_weather", '{"city": "Paris"}')
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


# --------------------------------------------------------------------------- the host


class Host:
    """Opens crashable harnesses, one after another, on one session file with one fake clock,
    and records every report."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = FakeClock()
        self.reports: list[Any] = []

    @asynccontextmanager
    async def open(self, model: Any, *, tools: Any = (), settings: durable.Settings | None = None):
        store = CrashableStorage(SQLiteStorage(str(self.path)))
        h = durable.open_harness(store, model=model, tools=tools, settings=settings or make_settings(),
                                 clock=self.clock, report=self.reports.append)
        try:
            # a hang fails the test before the global timeout (an SDK's first use alone took 10 s under load)
            with anyio.fail_after(120):
                async with h:
                    yield h
        finally:
            if store.crashed.is_set():
                await store.release()

    async def entries(self) -> list[Any]:
        store = SQLiteStorage(str(self.path))
        await store.open()
        try:
            return [e.entry for e in await store.get_entries("root")]
        finally:
            await store.close()

    async def transcript(self) -> list[str]:
        return [entry_kind(e) for e in await self.entries()]

    def file_bytes(self) -> bytes:
        """Everything on disk for the session (the file and any WAL / journal beside it), and the
        text of its long bodies, which are stored packed (`durable.storage.packing`): each packed
        run found in the bytes inflated as far as it goes (a stale copy, or the first page of one
        that spans pages), and every row as it reads now."""
        raw = b"".join(p.read_bytes() for p in self.path.parent.glob(self.path.name + "*"))
        if not self.path.exists():
            return raw
        with SessionReader(str(self.path)) as reader:
            rows = reader.rows()
        bodies = [row[-1] for table in (rows.tasks, rows.entries, rows.submissions, rows.documents) for row in table]
        return b"\n".join([raw, *map(_inflated, _PACKED.findall(raw)), "\n".join(bodies).encode()])


_PACKED = re.compile(rb"z1:([A-Za-z0-9+/]+)")


def _inflated(run: bytes) -> bytes:
    """What a run of a packed body's base64 inflates to, as far as it goes."""
    try:
        return zlib.decompressobj().decompress(base64.b64decode(run[:len(run) // 4 * 4]))
    except (ValueError, zlib.error):
        return b""


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path / "session.sqlite")


def make_settings(**kw: Any) -> durable.Settings:
    """Every delta committed, 1 s base backoff, a short system prompt."""
    kw.setdefault("retry", durable.RetryPolicy(base_delay=1.0))
    kw.setdefault("progress", durable.Progress(persist_within=0, output_interval=0))
    kw.setdefault("system_prompt", "Be brief.")
    return durable.Settings(**kw)



def deferred_settings(**kw: Any) -> durable.Settings:
    return make_settings(stream=durable.StreamSettings(deferred=True), **kw)


def model(server: Any, api: str, **options: Any) -> Any:
    if api == "anthropic":
        m: Any = AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, base_url=server.url, **options)
    elif api == "chat":
        m = OpenAIModel("llama", api="chat", api_key=OPENAI_KEY, base_url=server.url + "/v1", **options)
    else:
        m = OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=server.url + "/v1", **options)
    server.models.append(m)
    return m


async def until_live(h: Any, predicate: Any) -> r.Live:
    """Wait (on commits, not on time) until the committed live document satisfies `predicate`."""
    async for live in h.root.follow():
        if predicate(live):
            return live
    raise AssertionError("the harness closed before the live document matched")


def routes(server: Any) -> list[tuple[str, str]]:
    return [(q.method, q.path) for q in server.requests]


# --------------------------------------------------------------------------- wire formats


def answer(api: str, deltas: list[str], calls: tuple[r.ToolCall, ...] = ()) -> Reply:
    """A streamed answer in `api`'s wire format, with `USAGE[api]`."""
    if api == "responses":
        return responses_stream(deltas, calls)
    if api == "anthropic":
        return message_events(deltas, calls, stop="tool_use" if calls else "end_turn")
    chunks = [chat_chunk({"role": "assistant", "content": ""})]
    chunks += [chat_chunk({"content": d}) for d in deltas]
    chunks += [chat_chunk({"tool_calls": [{"index": i, "id": c.id, "type": "function",
                                           "function": {"name": c.name, "arguments": c.arguments}}]})
               for i, c in enumerate(calls)]
    chunks.append(chat_chunk({}, finish="tool_calls" if calls else "stop"))
    chunks.append(chat_chunk(usage={"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}))
    return chat_stream(*chunks)


def silent(api: str, deltas: list[str]) -> Reply:
    """A stream that sends `deltas`, then nothing, holding the connection open."""
    if api == "responses":
        return responses_stream(deltas, terminal=None, end="hold")
    if api == "anthropic":
        return message_events(deltas, stop=None, end="hold")
    return chat_stream(chat_chunk({"role": "assistant", "content": ""}), *[chat_chunk({"content": d}) for d in deltas],
                       end="hold", done=False)


def sent_messages(api: str, body: dict) -> list:
    """The conversation part of a request body."""
    return body["input"] if api == "responses" else body["messages"]


def user(api: str, text: str) -> dict:
    return {"role": "user", "content": text}


EPHEMERAL = {"type": "ephemeral"}


def cached_user(text: str) -> dict:
    """An Anthropic user message holding a cache breakpoint (`durable.models.caching`)."""
    return {"role": "user", "content": [{"type": "text", "text": text, "cache_control": EPHEMERAL}]}


# --------------------------------------------------------------------------- a streamed answer


@pytest.mark.parametrize("api", APIS)
async def test_a_streamed_answer_through_the_harness(server, host, api):
    reply = answer(api, ["Hello ", "there!"])
    first_delta = next(i for i, chunk in enumerate(reply.chunks) if b'"Hello "' in chunk)
    reply.pause_after, reply.resume = first_delta + 1, threading.Event()  # stop right after "Hello "
    server.script("POST", PATH[api], reply)
    m = model(server, api)
    async with host.open(m) as h:
        sub = await h.root.submit("Hello")
        live = await until_live(h, lambda live: live.generation is not None and live.generation.message.text)
        assert (live.generation.attempt, live.generation.message.text) == (1, "Hello ")  # streamed, committed
        reply.resume.set()
        assert await sub.wait() == r.Answered("Hello there!", 2)
        assert h.root.live() == r.Live(usage=used(api, 1, USAGE[api]))
        assert (await h.task(1)).state == r.Terminal(r.Done({"seq": 2}))
    assert await host.transcript() == ["user", "assistant:stop"]
    assert await host.entries() == [r.UserEntry("Hello", sub.id),
                                    r.AssistantEntry("Hello there!", "stop", (), USAGE[api], None, 1, model=NAME[api])]
    [sent] = server.requests
    assert (sent.method, sent.path) == ("POST", PATH[api])
    assert sent.headers["authorization"] == f"Bearer {KEY[api]}"
    expected = {
        "responses": {"model": "gpt-test", "stream": True, "instructions": "Be brief.",
                      "input": [user(api, "Hello")]},  # no prompt_cache_key for a server not OpenAI's
        "chat": {"model": "llama", "stream": True, "stream_options": {"include_usage": True},
                 "messages": [{"role": "system", "content": "Be brief."}, user(api, "Hello")]},
        "anthropic": {"model": "claude-test", "max_tokens": 8192, "stream": True,
                      "system": [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}],
                      "messages": [cached_user("Hello")]},  # prompt caching: breakpoints, on by default
    }
    assert sent.body == expected[api]
    assert host.reports == []


# --------------------------------------------------------------------------- a tool round


@pytest.mark.parametrize("api", APIS)
async def test_a_tool_round_sends_the_tool_result_in_the_providers_wire_format(server, host, api):
    executed = []

    async def get_weather(args, api_, ctx):
        executed.append((ctx.call_id, args))
        return "18 C"

    weather = durable.define_tool("get_weather", "The weather in a city", WEATHER_SCHEMA, execute=get_weather)
    server.script("POST", PATH[api], answer(api, [], (CALL,)), answer(api, ["Sunny, 18 C."]))
    async with host.open(model(server, api), tools=[weather]) as h:
        assert await (await h.root.submit("Weather in Paris?")).wait() == r.Answered("Sunny, 18 C.", 4)
    assert executed == [("call_1", {"city": "Paris"})]
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result", "assistant:stop"]
    entries = await host.entries()
    assert entries[1:] == [r.AssistantEntry("", "tool_use", (CALL,), USAGE[api], None, 1, model=NAME[api]),
                           r.ToolResultEntry("call_1", "get_weather", "18 C"),
                           r.AssistantEntry("Sunny, 18 C.", "stop", (), USAGE[api], None, 1, model=NAME[api])]
    first, second = server.requests_to("POST", PATH[api])
    assert len(server.requests) == 2
    question = user(api, "Weather in Paris?")
    if api == "responses":
        assert first.body["tools"] == [{"type": "function", "name": "get_weather", "description": "The weather in a city",
                                        "parameters": WEATHER_SCHEMA, "strict": False}]
        assert second.body["input"] == [
            question,
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "18 C"},
        ]
    elif api == "chat":
        assert first.body["tools"] == [{"type": "function", "function": {
            "name": "get_weather", "description": "The weather in a city", "parameters": WEATHER_SCHEMA}}]
        assert second.body["messages"] == [
            {"role": "system", "content": "Be brief."},
            question,
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18 C"},
        ]
    else:
        assert first.body["tools"] == [{"name": "get_weather", "description": "The weather in a city",
                                        "input_schema": WEATHER_SCHEMA, "cache_control": EPHEMERAL}]
        assert second.body["messages"] == [
            cached_user("Weather in Paris?"),  # where the first request's cached prefix ends
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "is_error": False, "content": "18 C",
                 "cache_control": EPHEMERAL}]},
        ]
        question = cached_user("Weather in Paris?")
    assert sent_messages(api, first.body)[-1] == question


# --------------------------------------------------------------------------- errors and retries


def sdk_body(api, body):
    """The error body as each SDK hands it over: OpenAI's SDK unwraps the "error" object."""
    return body["error"] if api != "anthropic" else body


OPENAI_429 = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
OPENAI_529 = {"error": {"message": "Overloaded", "type": "overloaded_error"}}
OPENAI_500 = {"error": {"message": "Internal error", "type": "server_error"}}

RETRIED = [
    # api, status, body, headers, kind, provider, readable message, backoff
    ("responses", 429, OPENAI_429, {"retry-after": "7"}, "rate_limit", "openai",
     "OpenAI rate limit reached (HTTP 429): Rate limit reached", 7.0),
    ("chat", 429, OPENAI_429, {"retry-after": "7"}, "rate_limit", "openai",
     "OpenAI rate limit reached (HTTP 429): Rate limit reached", 7.0),
    ("anthropic", 429, error_body("rate_limit_error", "Rate limited"), {"retry-after": "7"}, "rate_limit",
     "anthropic", "Anthropic rate limit reached (HTTP 429): Rate limited", 7.0),
    ("responses", 529, OPENAI_529, {}, "overloaded", "openai", "OpenAI is overloaded (HTTP 529): Overloaded", 1.0),
    ("anthropic", 529, error_body("overloaded_error", "Overloaded"), {}, "overloaded", "anthropic",
     "Anthropic is overloaded (HTTP 529): Overloaded", 1.0),
    ("responses", 500, OPENAI_500, {}, "server", "openai", "OpenAI server error (HTTP 500): Internal error", 1.0),
    ("chat", 500, OPENAI_500, {}, "server", "openai", "OpenAI server error (HTTP 500): Internal error", 1.0),
    ("anthropic", 500, error_body("api_error", "Internal server error"), {}, "server", "anthropic",
     "Anthropic server error (HTTP 500): Internal server error", 1.0),
]


@pytest.mark.parametrize("api, status, body, headers, kind, provider, message, backoff", RETRIED)
async def test_a_retryable_error_is_retried_after_its_backoff_and_attempt_2_answers(
    server, host, api, status, body, headers, kind, provider, message, backoff
):
    server.script("POST", PATH[api], json_reply(body, status, headers), answer(api, ["Fine."]))
    async with host.open(model(server, api)) as h:
        sub = await h.root.submit("Hello")
        at = await host.clock.wait_for_timer("retry:1")
        assert at == host.clock.now() + backoff  # the retry-after (7 s) beats the 1 s base delay
        assert h.root.live().generation == r.GenerationLive(
            1, retry=r.RetryLive(1, at, message, kind, provider, status))
        assert len(server.requests) == 1  # nothing is sent while the backoff runs
        host.clock.advance(backoff)
        assert await sub.wait() == r.Answered("Fine.", 2)
    assert routes(server) == [("POST", PATH[api])] * 2
    assert await host.transcript() == ["user", "assistant:stop"]
    assert (await host.entries())[1] == r.AssistantEntry("Fine.", "stop", (), USAGE[api], None, 2, model=NAME[api])
    # The provider's raw error (status and body as the SDK parsed it) reaches the report.
    assert host.reports == [ErrorReport(f"Attempt 1 of task 1 failed: {message}", ROOT_GEN,
                                        {"status_code": status, "body": sdk_body(api, body)}, MODEL_TOPIC)]


async def test_an_overloaded_error_inside_an_anthropic_stream_keeps_the_partial_and_is_retried(server, host):
    server.script("POST", "/v1/messages",
                  message_events(["Hel"], error={"type": "overloaded_error", "message": "Overloaded"}),
                  answer("anthropic", ["Hello."]))
    message = "Anthropic is overloaded (HTTP 529): Overloaded"
    async with host.open(model(server, "anthropic")) as h:
        sub = await h.root.submit("Hello")
        at = await host.clock.wait_for_timer("retry:1")
        assert h.root.live().generation == r.GenerationLive(
            1, retry=r.RetryLive(1, at, message, "overloaded", "anthropic", 529))
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Hello.", 3)
    assert await host.transcript() == ["user", "assistant:error", "assistant:stop"]
    assert (await host.entries())[1] == r.AssistantEntry("Hel", "error", (), r.Usage(25, 1, cache_read_tokens=5), message, 1, model=NAME["anthropic"])
    # the failed partial stays in the conversation but is not sent again
    assert server.requests[1].body["messages"] == [cached_user("Hello")]


UNAUTHORIZED = {
    "responses": ({"error": {"message": f"Incorrect API key provided: {OPENAI_KEY}.", "code": "invalid_api_key"}},
                  "OpenAI rejected the credentials (HTTP 401): Incorrect API key provided: ***."),
    "chat": ({"error": {"message": f"Incorrect API key provided: {OPENAI_KEY}.", "code": "invalid_api_key"}},
             "OpenAI rejected the credentials (HTTP 401): Incorrect API key provided: ***."),
    "anthropic": (error_body("authentication_error", f"invalid x-api-key {ANTHROPIC_KEY}"),
                  "Anthropic rejected the credentials (HTTP 401): invalid x-api-key ***"),
}


@pytest.mark.parametrize("api", APIS)
async def test_a_401_ends_the_run_unanswered_without_a_retry_and_the_key_is_nowhere(server, host, api):
    body, message = UNAUTHORIZED[api]
    server.script("POST", PATH[api], json_reply(body, 401))
    async with host.open(model(server, api)) as h:
        sub = await h.root.submit("Hello")
        assert await sub.wait() == r.Unanswered("model_error", message)
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sub.id,), "model_error", message, "Hello"),
                                       usage=used(api, 1))
        assert (await h.task(1)).state == r.Terminal(r.Failed(r.ErrorInfo(message, r.ErrorDetail("model_error"))))
        assert host.clock.timers == {}
    assert routes(server) == [("POST", PATH[api])]  # exactly one request: not retried
    assert await host.transcript() == ["user"]
    [report] = host.reports
    assert (report.message, report.task, report.raw["status_code"]) == (
        f"Attempt 1 of task 1 failed: {message}", ROOT_GEN, 401)
    # the key reaches neither the report, nor the session file
    assert KEY[api] not in repr(host.reports)
    assert KEY[api].encode() not in host.file_bytes()
    assert b"***" in host.file_bytes()


async def test_the_providers_raw_error_body_reaches_the_report(server, host):
    body, message = UNAUTHORIZED["responses"]
    server.script("POST", "/v1/responses", json_reply(body, 401))
    async with host.open(model(server, "responses")) as h:
        assert await (await h.root.submit("Hello")).wait() == r.Unanswered("model_error", message)
    [report] = host.reports
    assert report == ErrorReport(f"Attempt 1 of task 1 failed: {message}", ROOT_GEN, {
        "status_code": 401,
        "body": {"message": "Incorrect API key provided: ***.", "code": "invalid_api_key"},
    }, MODEL_TOPIC)


OVERFLOW = {
    "responses": ({"error": {"message": "This model's maximum context length is 128000 tokens.",
                             "code": "context_length_exceeded"}},
                  "The prompt is too long for the OpenAI model's context window (HTTP 400): "
                  "This model's maximum context length is 128000 tokens."),
    "chat": ({"error": {"message": "This model's maximum context length is 128000 tokens.",
                        "code": "context_length_exceeded"}},
             "The prompt is too long for the OpenAI model's context window (HTTP 400): "
             "This model's maximum context length is 128000 tokens."),
    "anthropic": (error_body("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
                  "The prompt is too long for the Anthropic model's context window (HTTP 400): "
                  "prompt is too long: 210000 tokens > 200000 maximum"),
}


@pytest.mark.parametrize("api", APIS)
async def test_a_context_overflow_with_nothing_to_compact_ends_the_run_as_a_model_error(server, host, api):
    body, message = OVERFLOW[api]
    server.script("POST", PATH[api], json_reply(body, 400))
    async with host.open(model(server, api)) as h:
        sub = await h.root.submit("A very long question")
        assert await sub.wait() == r.Unanswered("model_error", message)
        assert host.clock.timers == {}
        assert await h.tasks(kind="compaction") == []
    assert routes(server) == [("POST", PATH[api])]
    assert await host.transcript() == ["user"]
    assert [(x.type, x.message) for x in host.reports] == [("error", f"Attempt 1 of task 1 failed: {message}")]


@pytest.mark.parametrize("api", ["responses", "anthropic"])
async def test_a_context_overflow_compacts_and_the_same_attempt_answers(server, host, api):
    body, _ = OVERFLOW[api]
    server.script("POST", PATH[api], answer(api, ["First answer."]), json_reply(body, 400),
                  answer(api, ["We talked."]), answer(api, ["Second answer."]))
    st = make_settings(compaction=durable.Compaction(keep_last=2))
    async with host.open(model(server, api), settings=st) as h:
        assert await (await h.root.submit("First question")).wait() == r.Answered("First answer.", 2)
        sub = await h.root.submit("Second question")
        assert await sub.wait() == r.Answered("Second answer.", 5)
        assert host.clock.timers == {}
        [compaction] = await h.tasks(kind="compaction")
        assert (compaction.id, compaction.input, compaction.state) == (
            3, CompactionInput("overflow"), r.Terminal(r.Done({"first_kept_seq": 2})))
        # Requests: the first answer, the one that overflowed, the summary and the one sent again.
        assert h.root.live() == r.Live(usage=used(api, 4, USAGE[api], USAGE[api], USAGE[api]))
    assert await host.transcript() == ["user", "assistant:stop", "user", "compaction", "assistant:stop"]
    entries = await host.entries()
    assert entries[3] == r.CompactionEntry("We talked.", 2, USAGE[api])
    assert entries[4] == r.AssistantEntry("Second answer.", "stop", (), USAGE[api], None, 1, model=NAME[api])  # not charged
    summary_request, after = [q.body for q in server.requests[2:]]
    assert len(server.requests) == 4
    if api == "responses":
        assert (summary_request["instructions"], summary_request["input"]) == (
            "You write summaries of conversations.", [user(api, "First question"), user(api, SUMMARY_PROMPT)])
        assert after["input"] == [user(api, SUMMARY_PREFIX + "We talked."),
                                  {"role": "assistant", "content": "First answer."},
                                  user(api, "Second question")]
    else:
        assert (summary_request["system"], summary_request["messages"]) == (
            "You write summaries of conversations.",
            [{"role": "user", "content": [{"type": "text", "text": "First question"},
                                          {"type": "text", "text": SUMMARY_PROMPT}]}])
        assert after["messages"] == [cached_user(SUMMARY_PREFIX + "We talked."),
                                     {"role": "assistant", "content": [{"type": "text", "text": "First answer."}]},
                                     cached_user("Second question")]


# --------------------------------------------------------------------------- a silent stream


HELD = HeldTime()


@pytest.mark.parametrize("anyio_backend", HELD.backends()[:1])
@pytest.mark.parametrize("api", APIS)
async def test_a_silent_stream_times_out_and_attempt_2_answers(server, host, api, anyio_backend):
    server.script("POST", PATH[api], silent(api, ["Hel"]), answer(api, ["Hello."]))
    st = make_settings(stream=durable.StreamSettings(stream_silence=0.2))  # real seconds: anyio's clock
    message = "The model stream was silent for 0.2 s"
    m, attempts = model(server, api), []
    stream = m.stream

    def held_until_hel(request: ModelRequest) -> Any:
        # Time stands still until attempt 1 yields "Hel" (the SDK's first use must not count
        # against the 0.2 s), then runs: the silent wait after it runs out. Held again for attempt 2.
        attempts.append(request)
        return HELD.release_after_text(stream(request)) if len(attempts) == 1 else stream(request)

    m.stream = held_until_hel
    HELD.hold()
    async with host.open(m, settings=st) as h:
        sub = await h.root.submit("Hello")
        at = await host.clock.wait_for_timer("retry:1")
        HELD.hold()
        assert at == host.clock.now() + 1.0
        # the harness's own silence guard names the model (its `name`), not just the provider
        assert h.root.live().generation == r.GenerationLive(
            1, retry=r.RetryLive(1, at, message, "timeout", NAME[api].split(":")[0], None))
        await server.wait_for(server.disconnected)  # the silent connection was closed
        host.clock.advance(1.0)
        assert await sub.wait() == r.Answered("Hello.", 3)
    assert await host.transcript() == ["user", "assistant:error", "assistant:stop"]
    partial_usage = r.Usage(25, 1, cache_read_tokens=5) if api == "anthropic" else r.Usage()
    assert (await host.entries())[1:] == [r.AssistantEntry("Hel", "error", (), partial_usage, message, 1, model=NAME[api]),
                                          r.AssistantEntry("Hello.", "stop", (), USAGE[api], None, 2, model=NAME[api])]
    assert routes(server) == [("POST", PATH[api])] * 2
    last = cached_user("Hello") if api == "anthropic" else user(api, "Hello")
    assert sent_messages(api, server.requests[1].body)[-1:] == [last]
    assert [(x.type, x.message) for x in host.reports] == [("error", f"Attempt 1 of task 1 failed: {message}")]


# --------------------------------------------------------------------------- background jobs


class Jobs:
    """One provider's background-job routes, replies and expected create body."""

    def __init__(self, server: Any, api: str) -> None:
        self.server, self.api = server, api
        if api == "responses":
            self.id = "resp_bg"
            self.create = ("POST", "/v1/responses")
            self.retrieve = ("GET", "/v1/responses/resp_bg")
            self.cancel = ("POST", "/v1/responses/resp_bg/cancel")
        else:
            self.id = "msgbatch_1"
            self.create = ("POST", "/v1/messages/batches")
            self.retrieve = ("GET", "/v1/messages/batches/msgbatch_1")
            self.cancel = ("POST", "/v1/messages/batches/msgbatch_1/cancel")
            self.results = ("GET", "/v1/messages/batches/msgbatch_1/results")

    def model(self) -> Any:
        return model(self.server, self.api, deferred=True, poll_interval=2.0)

    def script_create(self) -> None:
        if self.api == "responses":
            self.server.script(*self.create, json_reply(response_object("queued", usage=None, rid=self.id)))
        else:
            self.server.script(*self.create, json_reply(batch(self.server)))

    def running(self) -> Reply:
        if self.api == "responses":
            return json_reply(response_object("in_progress", usage=None, rid=self.id))
        return json_reply(batch(self.server))

    def script_done(self, text: str) -> list[tuple[str, str]]:
        """Script the replies for a fetch that finds the job done; returns the routes it uses."""
        if self.api == "responses":
            self.server.script(*self.retrieve, json_reply(response_object(text=text, rid=self.id)))
            return [self.retrieve]
        ended = json_reply(batch(self.server, "ended"))
        self.server.script(*self.retrieve, ended, ended)  # the SDK's `results` retrieves the batch again
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                   "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                   "usage": {"input_tokens": 30, "output_tokens": 8}}
        self.server.script(*self.results, jsonl_reply([result_line("g1-s1-a1", {"type": "succeeded",
                                                                                "message": message})]))
        return [self.retrieve, self.retrieve, self.results]

    def script_cancel(self) -> None:
        if self.api == "responses":
            self.server.script(*self.cancel, json_reply(response_object("cancelled", rid=self.id)))
        else:
            self.server.script(*self.cancel, json_reply(batch(self.server, "canceling")))

    @property
    def usage(self) -> r.Usage:
        return r.Usage(12, 7) if self.api == "responses" else r.Usage(30, 8)

    def create_body(self) -> dict:
        if self.api == "responses":
            return {"model": "gpt-test", "instructions": "Be brief.", "input": [user(self.api, "Think hard")],
                    "background": True, "metadata": {"durable_key": "g1-s1-a1"}}
        return {"requests": [{"custom_id": "g1-s1-a1", "params": {
            "model": "claude-test", "max_tokens": 8192,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}],
            "messages": [cached_user("Think hard")]}}]}


@pytest.mark.parametrize("api", ["responses", "anthropic"])
async def test_a_background_job_is_created_once_and_polled_to_completion(server, host, api):
    jobs = Jobs(server, api)
    jobs.script_create()
    server.script(*jobs.retrieve, jobs.running())
    done_routes = jobs.script_done("Deep answer")
    async with host.open(jobs.model(), settings=deferred_settings()) as h:
        sub = await h.root.submit("Think hard")
        for fetches in (0, 1):
            poll_at = await host.clock.wait_for_timer("poll:1")
            assert poll_at == host.clock.now() + 2.0
            assert h.root.live().generation == r.GenerationLive(1, deferred=r.DeferredLive(poll_at))
            assert (await h.task(1)).checkpoint == Poll(1, r.DeferredJob("g1-s1-a1", jobs.id), poll_at)
            assert routes(server) == [jobs.create] + [jobs.retrieve] * fetches  # no fetch before poll_at
            host.clock.advance(2.0)
        assert await sub.wait() == r.Answered("Deep answer", 2)
    assert routes(server) == [jobs.create, jobs.retrieve] + done_routes
    assert server.requests[0].body == jobs.create_body()
    assert await host.transcript() == ["user", "assistant:stop"]
    assert (await host.entries())[1] == r.AssistantEntry("Deep answer", "stop", (), jobs.usage, None, 1, model=NAME[api])
    assert host.reports == []


async def crash_during_a_poll(server: Any, host: Host, jobs: Jobs, st: durable.Settings) -> str:
    """Create a job, let the first poll reach the server and hang there, crash the harness."""
    jobs.script_create()
    arrived = threading.Event()
    server.script(*jobs.retrieve, Reply(hold_before=True, arrived=arrived))
    async with host.open(jobs.model(), settings=st) as h:
        sub = await h.root.submit("Think hard")
        await host.clock.wait_for_timer("poll:1")
        host.clock.advance(2.0)
        await server.wait_for(arrived)  # the fetch is at the server, which does not answer
        task = await h.task(1)
        assert (task.state, task.checkpoint.job) == (r.Running(), r.DeferredJob("g1-s1-a1", jobs.id))
        crash(h)
    assert routes(server) == [jobs.create, jobs.retrieve]
    return sub.id


@pytest.mark.parametrize("api", ["responses", "anthropic"])
async def test_a_crash_during_a_poll_polls_the_same_job_after_reopen(server, host, api):
    jobs = Jobs(server, api)
    sid = await crash_during_a_poll(server, host, jobs, deferred_settings())
    done_routes = jobs.script_done("Deep answer")
    async with host.open(jobs.model(), settings=deferred_settings()) as h:  # a new process, a new model
        await h.resume()
        at = await host.clock.wait_for_timer("retry:1")
        assert at == host.clock.now() + 1.0
        assert h.root.live().generation == r.GenerationLive(
            1, retry=r.RetryLive(1, at, FETCH_STOPPED_1, "interrupted"))
        assert host.reports == [TaskInterrupted(ROOT_GEN, "interrupted", 1, FETCH_STOPPED_1)]
        assert routes(server) == [jobs.create, jobs.retrieve]  # nothing sent during the backoff
        host.clock.advance(1.0)
        assert await h.root.submission(sid).wait() == r.Answered("Deep answer", 2)
    # the same job polled again; no second create, no cancel
    assert routes(server) == [jobs.create, jobs.retrieve] + done_routes
    assert await host.transcript() == ["user", "assistant:stop"]
    assert (await host.entries())[1] == r.AssistantEntry("Deep answer", "stop", (), jobs.usage, None, 2, model=NAME[api])
    assert host.reports == [TaskInterrupted(ROOT_GEN, "interrupted", 1, FETCH_STOPPED_1)]


@pytest.mark.parametrize("api", ["responses", "anthropic"])
async def test_without_retries_a_crash_during_a_poll_ends_the_run_and_cancels_the_job_once(server, host, api):
    jobs = Jobs(server, api)
    st = deferred_settings(retry=durable.RetryPolicy(enabled=False))
    sid = await crash_during_a_poll(server, host, jobs, st)
    jobs.script_cancel()
    async with host.open(jobs.model(), settings=st) as h:
        assert await h.root.submission(sid).wait() == r.Unanswered("interrupted", FETCH_STOPPED_1)
        assert h.root.live() == r.Live(run_failure=r.RunFailure(1, (sid,), "interrupted", FETCH_STOPPED_1,
                                                                "Think hard"), usage=used(api, 1))
        assert (await h.task(1)).state == r.Terminal(r.Failed(r.ErrorInfo(FETCH_STOPPED_1,
                                                                          r.ErrorDetail("interrupted"))))
        # The run ended at once; its job's cancel is owed, and carried out as task 2.
        assert (await h.wait_for_task(2)).state == r.Terminal(r.Done({"cancelled": True}))
    assert routes(server) == [jobs.create, jobs.retrieve, jobs.cancel]  # exactly one cancel, no new poll
    assert await host.transcript() == ["user"]
    assert host.reports == [TaskInterrupted(ROOT_GEN, "interrupted", 1, FETCH_STOPPED_1)]
