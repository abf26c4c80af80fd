"""A request cut off by SIGKILL is sent again with the settings its run was given: the harness, the
conversation handle and the input of the killed process, stored with the input and the run, not
the settings of the process that reopens the file (which differ here). Both requests, byte for
byte the same body, against the local fake server; every invariant holds afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest

import durable
from durable import ModelSettings, records as r
from durable.models.anthropic import AnthropicModel
from durable.models.caching import cache_key
from durable.models.openai import OpenAIModel
from durable.testing import check_invariants

from .conftest import ANTHROPIC_KEY, OPENAI_KEY, Reply
from .test_anthropic import message_events
from .test_openai import chat_chunk, chat_stream

pytestmark = pytest.mark.anyio

CHILD = """
import sys, anyio, durable
from durable import ModelSettings
from durable.models.anthropic import AnthropicModel
from durable.models.openai import OpenAIModel

async def main():
    path, url, api, key = sys.argv[1:5]
    if api == "anthropic":
        model = AnthropicModel("claude-test", api_key=key, base_url=url)
        mine = ModelSettings(stop=["END"], extra={"metadata": {"user_id": "u-1"}})
    else:
        model = OpenAIModel("llama", api="chat", api_key=key, base_url=url + "/v1")
        mine = ModelSettings(seed=7, stop=["END"], prompt_cache=True, extra={"user": "u-1"})
    settings = durable.Settings(system_prompt="Be brief.",
                                model_settings=ModelSettings(temperature=0.3, max_tokens=300))
    async with durable.open_harness(path, model=model, settings=settings) as h:
        sub = await h.conversation("root", model_settings=ModelSettings(top_p=0.9)).submit("Hello", model_settings=mine)
        print(sub.id, flush=True)
        await sub.wait()

anyio.run(main, backend="trio")
"""


def expected_body(api: str, location: str) -> dict:
    if api == "anthropic":
        return {"model": "claude-test", "max_tokens": 300, "stream": True, "temperature": 0.3, "top_p": 0.9,
                "stop_sequences": ["END"], "metadata": {"user_id": "u-1"},
                "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
                "messages": [{"role": "user", "content": [
                    {"type": "text", "text": "Hello", "cache_control": {"type": "ephemeral"}}]}]}
    return {"model": "llama", "stream": True, "stream_options": {"include_usage": True}, "max_tokens": 300,
            "temperature": 0.3, "top_p": 0.9, "stop": ["END"], "seed": 7, "user": "u-1",
            "prompt_cache_key": cache_key(location, "root"),  # asked for: the server is not OpenAI's
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]}


@pytest.mark.parametrize("api", ["chat", "anthropic"])
async def test_a_request_cut_off_by_sigkill_is_sent_again_with_the_settings_stored_with_its_run(
        server, tmp_path: Path, api: str):
    path = tmp_path / "session.sqlite"
    path_, route = ("/v1/messages", "anthropic") if api == "anthropic" else ("/v1/chat/completions", "chat")
    arrived = threading.Event()
    answer = message_events(["Hi."]) if api == "anthropic" else chat_stream(
        chat_chunk({"role": "assistant", "content": "Hi."}), chat_chunk({}, finish="stop"))
    server.script("POST", path_, Reply(arrived=arrived, hold_before=True), answer)
    key = ANTHROPIC_KEY if api == "anthropic" else OPENAI_KEY
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), server.url, route, key], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None
    try:
        submission = child.stdout.readline().strip()
        await server.wait_for(arrived, timeout=20)  # the request is at the provider: kill the host now
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
    if api == "anthropic":
        model: object = AnthropicModel("claude-test", api_key=key, base_url=server.url)
    else:
        model = OpenAIModel("llama", api="chat", api_key=key, base_url=server.url + "/v1")
    server.models.append(model)
    other = durable.Settings(system_prompt="Be brief.", model_settings=ModelSettings(temperature=0.9, max_tokens=50))
    with anyio.fail_after(20):
        async with durable.open_harness(path, model=model, settings=other) as h:  # type: ignore[arg-type]
            await h.resume()
            # nothing was streamed before the kill: no aborted partial
            assert await h.root.submission(submission).wait() == r.Answered("Hi.", 2)
            location = h.storage.location
    first, again = (q.body for q in server.requests)
    assert first == again == expected_body(api, location)
    assert check_invariants(str(path)) == []
