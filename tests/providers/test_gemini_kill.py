"""SIGKILL of a real agent process while `GeminiModel` streams from the local 127.0.0.1 server
speaking Gemini's wire format: the crash toolkit (`durable.testing.kill_test`) kills the child at
exact commit boundaries (each streamed delta is one) and at random times, reopens the file in new
processes until it settles, and checks every invariant; every request the server got, resent
after a kill included, is the same body (a cut-off partial is never sent back).

The children import this module (`python -m durable.testing.child tests.providers...`): the
scenario reads the server's address from `DURABLE_TEST_GEMINI_URL`."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from durable.models.gemini import GeminiModel
from durable.testing import kill_test
from durable.testing.explore import Driver, Scenario, World
from durable.testing.scenarios import base_settings

URL = "DURABLE_TEST_GEMINI_URL"
KILLS = max(3, int(os.environ.get("DURABLE_KILLS", "35")) // 8)
SEED = int(os.environ.get("DURABLE_KILL_SEED", "1"))
DELTAS = ["Hello", " there!", " How", " can I", " help?"]


def _world(clock: Any) -> World:
    return World(GeminiModel("gemini-test", api_key="AIzaSy-kill-test-0123456789", base_url=os.environ[URL]),
                 settings=base_settings())


async def _drive(d: Driver) -> None:
    await d.submit("Hello")


gemini_streamed = Scenario("gemini_streamed", _world, _drive)


def _answer() -> bytes:
    chunks = []
    for i, delta in enumerate(DELTAS):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": delta}]}}
        if i == len(DELTAS) - 1:
            candidate["finishReason"] = "STOP"
        chunks.append({"candidates": [candidate],
                       "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": i + 1}})
    return b"".join(f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks)


@pytest.fixture
def gemini_server() -> Iterator[tuple[str, list[Any]]]:
    """A server that answers every `streamGenerateContent` with the same streamed answer."""
    bodies: list[Any] = []
    body = _answer()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            bodies.append((self.path, json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", bodies
    httpd.shutdown()
    httpd.server_close()


def test_sigkill_while_gemini_streams_keeps_every_invariant_and_resends_the_same_request(gemini_server, monkeypatch):
    url, bodies = gemini_server
    monkeypatch.setenv(URL, url)
    report = kill_test("tests.providers.test_gemini_kill:gemini_streamed", kills=KILLS, seed=SEED, spawn="exec",
                       workers=1)
    print(f"\n{report.summary()}")
    report.assert_ok()
    assert report.kills >= KILLS
    expected = ("/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
                {"contents": [{"parts": [{"text": "Hello"}], "role": "user"}],
                 "systemInstruction": {"parts": [{"text": "You are a helpful assistant."}], "role": "user"},
                 "generationConfig": {}})
    assert bodies and all(sent == expected for sent in bodies), bodies
