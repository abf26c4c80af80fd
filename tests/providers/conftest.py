"""A real HTTP server on 127.0.0.1 that speaks the providers' wire formats, for the provider tests.

Tests script replies per route (`server.script("POST", "/v1/responses", reply, ...)`), each
consumed once and in order, or answer a route with a function (`server.responders[route]`, see
`cache_server`); the server records every request it gets. Replies are JSON bodies
with a status and headers, or SSE streams sent as HTTP/1.1 chunks that can end cleanly, be
dropped mid-body, or hold the connection open (a silent stream) until the client goes away or
the test ends. A reply can also signal that its request arrived (`arrived`) and pause a stream
after some chunks until the test sets `resume`. Nothing here touches any other network.
"""

from __future__ import annotations

import json
import select
import socket
import threading
from collections import deque
from collections.abc import AsyncIterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import anyio
import attrs
import pytest

from durable.models.protocol import ModelRequest, ToolSpec
from durable.records import UserEntry

OPENAI_KEY = "sk-test-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef"
GEMINI_KEY = "AIzaSyTest-0123456789abcdefghijklmnop"
WEATHER = ToolSpec("get_weather", "The weather in a city",
                   {"type": "object", "properties": {"city": {"type": "string"}}})
HELLO = ModelRequest(system="Be brief.", messages=(UserEntry("Hello"),), key="gen-1-a1")


@pytest.fixture
def anyio_backend() -> str:
    return "trio"


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing from the developer's environment reaches the SDKs (keys, endpoints, proxies)."""
    for name in (
        "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ADMIN_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
        "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
        "ANTHROPIC_CUSTOM_HEADERS", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_API_VERSION",
        "GOOGLE_GENAI_HTTP_CLIENT", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
        "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
        "http_proxy", "https_proxy", "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


# --------------------------------------------------------------------------- replies


@attrs.define
class Reply:
    status: int = 200
    headers: dict[str, str] = attrs.field(factory=dict)
    body: bytes | None = None  # a whole body, sent with Content-Length
    chunks: list[bytes] | None = None  # a streamed body, one HTTP chunk each
    end: str = "clean"  # how a streamed body ends: "clean", "drop" or "hold"
    hold_before: bool = False  # never send even the headers
    arrived: threading.Event | None = None  # set when the request this reply answers has arrived
    pause_after: int | None = None  # send this many chunks, then wait for `resume` (or the test's end)
    resume: threading.Event | None = None


def json_reply(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, {"content-type": "application/json", **(headers or {})}, json.dumps(body).encode())


def sse_reply(events: list[dict[str, Any]], *, named: bool = True, done: bool = False, end: str = "clean") -> Reply:
    """An SSE stream of JSON events. `named` adds `event: <type>` lines (Responses, Anthropic);
    `done` ends with `data: [DONE]` (Chat Completions)."""
    chunks = []
    for event in events:
        head = f"event: {event['type']}\n" if named and "type" in event else ""
        chunks.append(f"{head}data: {json.dumps(event)}\n\n".encode())
    if done:
        chunks.append(b"data: [DONE]\n\n")
    return Reply(200, {"content-type": "text/event-stream"}, chunks=chunks, end=end)


def jsonl_reply(lines: list[dict[str, Any]]) -> Reply:
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return Reply(200, {"content-type": "application/binary"}, body)


# --------------------------------------------------------------------------- the server


@attrs.frozen
class Recorded:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any


class FakeServer:
    def __init__(self) -> None:
        self._replies: dict[tuple[str, str], deque[Reply]] = {}
        self.responders: dict[tuple[str, str], Any] = {}  # route -> f(Recorded) -> Reply, when nothing is scripted
        self.requests: list[Recorded] = []
        self.models: list[Any] = []  # closed when the test ends
        self._lock = threading.Condition()
        self.finished = threading.Event()  # set at teardown: held replies end
        self.disconnected = threading.Event()  # a client closed a held connection
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.01,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, method: str, path: str, *replies: Reply) -> None:
        with self._lock:
            self._replies.setdefault((method, path), deque()).extend(replies)

    def requests_to(self, method: str, path: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.method == method and r.path == path]

    def _take(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()
            queue = self._replies.get((request.method, request.path))
            if queue:
                return queue.popleft()
            responder = self.responders.get((request.method, request.path))
            if responder is not None:
                return responder(request)
        return json_reply({"error": {"message": f"nothing scripted for {request.method} {request.path}"}}, 599)

    async def wait_for(self, event: threading.Event, timeout: float = 5.0) -> None:
        """Wait (really, on the server's own signal) for `event`."""
        assert await anyio.to_thread.run_sync(event.wait, timeout), "the server never signalled"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.finished.set()
        self._http.shutdown()
        self._http.server_close()


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # each chunk leaves at once, even after a pause

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def do_DELETE(self) -> None:
            self._serve()

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode()
            parts = urlsplit(self.path)
            reply = server._take(Recorded(self.command, parts.path, parts.query,
                                          {k.lower(): v for k, v in self.headers.items()}, body))
            try:
                self._send(reply)
            except OSError:
                self.close_connection = True  # the client went away; nothing to tell it

        def _send(self, reply: Reply) -> None:
            if reply.arrived is not None:
                reply.arrived.set()
            if reply.hold_before:
                self._hold()
                return
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.chunks is None:
                body = reply.body or b""
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for index, chunk in enumerate(reply.chunks):
                if index == reply.pause_after:
                    self.wfile.flush()
                    while not (reply.resume is not None and reply.resume.wait(0.02)) and not server.finished.is_set():
                        pass
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            if reply.end == "clean":
                self.wfile.write(b"0\r\n\r\n")
            elif reply.end == "drop":
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
            else:
                self._hold()

        def _hold(self) -> None:
            """Send nothing more until the client closes the connection or the test ends."""
            self.wfile.flush()
            self.close_connection = True
            while not server.finished.is_set():
                readable, _, _ = select.select([self.connection], [], [], 0.02)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    server.disconnected.set()
                    return

    return Handler


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    """A started server; models registered in `server.models` are closed after the test."""
    fake = FakeServer()
    fake.start()
    try:
        yield fake
    finally:
        for model in fake.models:
            await model.aclose()
        fake.stop()


@pytest.fixture
def refused_url() -> str:
    """A 127.0.0.1 URL nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def collect(stream: Any) -> list[Any]:
    return [event async for event in stream]


async def collect_until_error(stream: Any) -> tuple[list[Any], BaseException]:
    """The events a stream yielded before it raised, and what it raised."""
    events: list[Any] = []
    try:
        async for event in stream:
            events.append(event)
    except Exception as error:  # noqa: BLE001 - the test inspects it
        return events, error
    raise AssertionError(f"the stream ended without an error after {events!r}")
