"""Images and files in each provider's wire format, through the real harness against the local
127.0.0.1 server: an input of text and an image (and a PDF), then a tool that returns an image;
the exact request bodies of both requests, per API (OpenAI Responses, OpenAI Chat Completions,
Anthropic Messages)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import attrs
import pytest

import durable
from durable import records as r

from .test_harness_integration import APIS, PATH, Host, answer, make_settings, model

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))  # 264 bytes with a PNG signature
PDF = b"%PDF-1.7\n" + b"report" * 10
SHOT = b"\x89PNG\r\n\x1a\n" + b"screen" * 20  # 128 bytes: what the screenshot tool returns
B64 = {name: base64.b64encode(data).decode() for name, data in (("png", PNG), ("pdf", PDF), ("shot", SHOT))}
CALL = r.ToolCall("call_1", "screenshot", "{}")


def screenshot() -> durable.Tool:
    async def execute(args: Any, api: Any, ctx: Any) -> Any:
        return ["Screen captured", durable.Image(SHOT)]

    return durable.define_tool("screenshot", "Take a screenshot", execute=execute)


SCHEMA = {"type": "object", "properties": {}}
PDF_URL = f"data:application/pdf;base64,{B64['pdf']}"


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path / "session.sqlite")


def expected(api: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The exact bodies of the two requests: the input, then the input and the tool round."""
    if api == "responses":
        first = [{"role": "user", "content": [
            {"type": "input_text", "text": "What is this?"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{B64['png']}", "detail": "auto"},
            {"type": "input_file", "filename": "report.pdf", "file_data": PDF_URL},
        ]}]
        second = [*first,
                  {"type": "function_call", "call_id": "call_1", "name": "screenshot", "arguments": "{}"},
                  {"type": "function_call_output", "call_id": "call_1", "output": [
                      {"type": "input_text", "text": "Screen captured"},
                      {"type": "input_image", "image_url": f"data:image/png;base64,{B64['shot']}", "detail": "auto"},
                  ]}]
        common = {"model": "gpt-test", "stream": True, "instructions": "Be brief.",
                  "tools": [{"type": "function", "name": "screenshot", "description": "Take a screenshot",
                             "parameters": SCHEMA, "strict": False}]}
        return {**common, "input": first}, {**common, "input": second}
    if api == "chat":
        first = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64['png']}"}},
            {"type": "file", "file": {"filename": "report.pdf", "file_data": PDF_URL}},
        ]}]
        # A tool message is text only: the image follows the round's tool messages in a user message.
        second = [*first,
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "call_1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}]},
                  {"role": "tool", "tool_call_id": "call_1", "content": "Screen captured\n\n[image: image/png, 128 B]"},
                  {"role": "user", "content": [
                      {"type": "text", "text": "Attachments of the result of tool call call_1 (screenshot):"},
                      {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64['shot']}"}},
                  ]}]
        common = {"model": "llama", "stream": True, "stream_options": {"include_usage": True},
                  "tools": [{"type": "function", "function": {"name": "screenshot", "description": "Take a screenshot",
                                                              "parameters": SCHEMA}}]}
        return {**common, "messages": first}, {**common, "messages": second}
    user = {"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64["png"]}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": B64["pdf"]}},
    ]}
    result = {"type": "tool_result", "tool_use_id": "call_1", "is_error": False, "content": [
        {"type": "text", "text": "Screen captured"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64["shot"]}},
    ]}
    second = [user,
              {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "screenshot",
                                                 "input": {}}]},
              {"role": "user", "content": [result]}]
    common = {"model": "claude-test", "max_tokens": 8192, "stream": True, "system": "Be brief.",
              "tools": [{"name": "screenshot", "description": "Take a screenshot", "input_schema": SCHEMA}]}
    return {**common, "messages": [user]}, {**common, "messages": second}


@pytest.mark.parametrize("api", APIS)
async def test_an_image_input_and_a_tool_returning_an_image_are_sent_in_the_providers_format(server, host, api,
                                                                                           tmp_path):
    (tmp_path / "report.pdf").write_bytes(PDF)
    server.script("POST", PATH[api], answer(api, [], (CALL,)), answer(api, ["A login form."]))
    # Prompt caching off: this test is about the parts (the breakpoints have tests of their own).
    plain = attrs.evolve(make_settings(), model_settings=durable.ModelSettings(prompt_cache=False))
    async with host.open(model(server, api), tools=[screenshot()], settings=plain) as h:
        sub = await h.root.submit(["What is this?", durable.Image(PNG), durable.File(tmp_path / "report.pdf")])
        assert await sub.answer() == "A login form."
    first, second = expected(api)
    assert [q.body for q in server.requests] == [first, second]
    assert [type(e).__name__ for e in await host.entries()] == ["UserEntry", "AssistantEntry", "ToolResultEntry",
                                                               "AssistantEntry"]
