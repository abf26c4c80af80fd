"""`durable demo --model openai|anthropic|google` against a server on 127.0.0.1 speaking each
provider's streaming wire format (OpenAI Chat Completions and Responses, Anthropic Messages,
Gemini streamGenerateContent), reached through
the usual base-URL variables. The server answers every request with a short streamed text, so
the demo's four inputs are each answered and the demo exits 0."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .conftest import FAST, inspect_json, run_durable, transcript


def sse(events):
    return "".join((f"event: {name}\n" if name else "") + f"data: {json.dumps(data) if not isinstance(data, str) else data}\n\n"
                   for name, data in events).encode()


def chat_stream(text):
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return sse([
        (None, {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]}),
        (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        (None, {**chunk, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}),
        (None, "[DONE]"),
    ])


def responses_stream(text):
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
    response = {"id": "resp_1", "object": "response", "created_at": 0, "model": "m", "status": "completed",
                "output": [item], "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7},
                "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
    return sse([
        ("response.created", {"type": "response.created", "sequence_number": 0,
                              "response": {**response, "status": "in_progress", "output": []}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_1",
                                        "output_index": 0, "content_index": 0, "delta": text, "logprobs": []}),
        ("response.completed", {"type": "response.completed", "sequence_number": 2, "response": response}),
    ])


def messages_stream(text):
    return sse([
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 0}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 2}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def gemini_stream(text):
    usage = {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}
    candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
    return sse([(None, {"candidates": [candidate], "usageMetadata": usage})])


GEMINI = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
STREAMS = {"/v1/chat/completions": chat_stream, "/v1/responses": responses_stream, "/v1/messages": messages_stream,
           GEMINI: gemini_stream}


@pytest.fixture
def server():
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("content-length", 0)))
            paths.append(self.path)
            body = STREAMS[self.path.split("?")[0]](f"Answer {len(paths)}.")
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", paths
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("model, api, path", [
    ("openai", "chat", "/v1/chat/completions"),
    ("openai", "responses", "/v1/responses"),
    ("anthropic", None, "/v1/messages"),
    ("google", None, GEMINI + "?alt=sse"),
])
def test_the_demo_runs_against_a_real_provider_wire_format_through_a_base_url(tmp_path, server, model, api, path):
    url, paths = server
    env = {"DURABLE_DEMO_SPEED": FAST, "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test",
           "OPENAI_BASE_URL": f"{url}/v1", "ANTHROPIC_BASE_URL": url, "DURABLE_DEMO_OPENAI_API": api or "responses",
           "GEMINI_API_KEY": "AIza-test", "GOOGLE_GEMINI_BASE_URL": url}
    db = tmp_path / "demo.sqlite"
    done = run_durable("demo", "--model", model, "--db", str(db), "--plain", cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert paths == [path] * 4  # one streamed request per input: no retry, no deferred job
    data = inspect_json(db)
    assert transcript(data) == ["user", "assistant:stop"] * 4
    assert [s["status"] for s in data["submissions"]] == ["done"] * 4
