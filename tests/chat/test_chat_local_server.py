"""`durable chat --model URL/NAME` against a fake OpenAI-compatible server on 127.0.0.1 (the way
Ollama, llama.cpp, vLLM and LM Studio are reached): the exact request the chat sends (model,
instructions with the folder's AGENTS.md and git status, the six tools) and the answer printed."""

from __future__ import annotations

import subprocess
import sys

from providers.conftest import FakeServer, sse_reply


def chunk(delta=None, finish=None, usage=None):
    choices = [] if delta is None and finish is None else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "qwen/qwen3-8b", "choices": choices,
            **({"usage": usage} if usage is not None else {})}


def test_a_local_server_through_its_url(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "AGENTS.md").write_text("Always answer in one line.\n")
    server = FakeServer()
    server.start()
    server.script("POST", "/v1/chat/completions", sse_reply([
        chunk({"role": "assistant", "content": "Hello from "}), chunk({"content": "the local server."}),
        chunk(finish="stop"), chunk(usage={"prompt_tokens": 900, "completion_tokens": 7, "total_tokens": 907})],
        named=False, done=True))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "durable", "chat", "--session", str(tmp_path / "chat.sqlite"), "--cwd", str(work),
             "--model", f"{server.url}/v1/qwen/qwen3-8b"], input="hi\n/usage\n/quit\n", capture_output=True,
            text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": str(tmp_path)})
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2:6] == ["you> hi", "agent: Hello from the local server.", "you> /usage",
                          "openai:qwen/qwen3-8b: 1 request, 900 input tokens (0 cached), 7 output tokens "
                          "(0 reasoning), cost unknown (no price)"]
    [request] = server.requests_to("POST", "/v1/chat/completions")
    body = request.body
    assert body["model"] == "qwen/qwen3-8b"
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file", "list_files", "grep", "write_file",
                                                              "edit_file", "bash"]
    system = body["messages"][0]
    assert system["role"] == "system"
    assert system["content"].split("\n\n")[1:] == [
        "The folder's AGENTS.md (the user's instructions for agents):", "Always answer in one line.",
        f"The working folder is {work.resolve()}.\nIt is not a git repository."]
    assert body["messages"][1:] == [{"role": "user", "content": "hi"}]
