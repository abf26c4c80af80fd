"""Benchmark: the share of input tokens read from the provider's prompt cache over a long conversation.

Run: `python benchmarks/prompt_cache.py [--turns 50] [--warmup 2]`. Not a test: it prints a table
and whether the target is met, and writes `results/prompt_cache.json` and its section of
`results/results.md`.

A 50-turn conversation through the harness and the real adapters (`AnthropicModel`, `OpenAIModel`
on the Responses API) against the local fake servers of the test suite, whose responders model
each provider's prompt cache (`tests/providers/cache_server.py`: Anthropic reads the prefix up to
the newest cache breakpoint an earlier request wrote; OpenAI reads the longest earlier prefix of
the same `prompt_cache_key`, in 128-token steps from 1,024). The harness has ~1,500 tokens of
instructions and 3 tools; each turn sends ~100 tokens of input and gets ~150 back. Printed: the
cache reads over all input tokens, over all turns and after the first `--warmup` turns, with
prompt caching on (the default) and off (`ModelSettings(prompt_cache=False)`). Target: >= 90%
after the first turns, caching on.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import save, table, verdict

import durable
from durable.models.anthropic import AnthropicModel
from durable.models.openai import OpenAIModel
from tests.providers.cache_server import AnthropicCache, OpenAICache
from tests.providers.conftest import FakeServer

TARGET = 0.90
INSTRUCTIONS = " ".join(f"Rule {i}: answer the user about their order {i} politely and precisely." for i in range(90))
SCHEMA = {"type": "object", "properties": {"order": {"type": "string"}}}
ANSWER = "Your order is on its way; " * 22


async def _noop(args: Any, api: Any, ctx: Any) -> str:
    return "ok"


TOOLS = [durable.define_tool(f"tool_{i}", f"Looks up part {i} of an order.", SCHEMA, execute=_noop) for i in range(3)]


async def conversation(provider: str, turns: int, cache: bool) -> list[durable.Usage]:
    """The usage of each answer of a `turns`-turn conversation."""
    server = FakeServer()
    server.start()
    if provider == "anthropic":
        server.responders[("POST", "/v1/messages")] = AnthropicCache(ANSWER)
        model: Any = AnthropicModel("claude-test", api_key="sk-ant-bench", base_url=server.url)
    else:
        server.responders[("POST", "/v1/responses")] = OpenAICache(ANSWER)
        model = OpenAIModel("gpt-test", api_key="sk-bench", base_url=server.url + "/v1")
    # On: the default for Anthropic; OpenAI sends its cache key unasked to api.openai.com only (this
    # fake server is not), so it is asked for here. Off: prompt_cache=False.
    settings = durable.Settings(system_prompt=INSTRUCTIONS, model_settings=durable.ModelSettings(prompt_cache=cache))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with durable.open_harness(Path(tmp) / "s.sqlite", model=model, tools=TOOLS, settings=settings) as h:
                for turn in range(turns):
                    await (await h.root.submit(f"Turn {turn}: where is my order number {turn * 7919}? " * 8)).wait()
                entries = await h.root.entries()
        return [e.entry.usage for e in entries if isinstance(e.entry, durable.AssistantEntry)]
    finally:
        await model.aclose()
        server.stop()


def share(usages: list[durable.Usage]) -> float:
    total = sum(u.input_tokens for u in usages)
    return sum(u.cache_read_tokens for u in usages) / total if total else 0.0


async def main(turns: int, warmup: int) -> None:
    rows, data = [], {}
    for provider in ("anthropic", "openai"):
        for cache in (True, False):
            usages = await conversation(provider, turns, cache)
            name = f"{provider}, caching {'on' if cache else 'off'}"
            later = share(usages[warmup:])
            data[name] = {"turns": len(usages), "input_tokens": sum(u.input_tokens for u in usages),
                          "cache_read_tokens": sum(u.cache_read_tokens for u in usages),
                          "cache_write_tokens": sum(u.cache_write_tokens for u in usages),
                          "read_share": share(usages), "read_share_after_warmup": later}
            rows.append([name, len(usages), data[name]["input_tokens"], data[name]["cache_read_tokens"],
                         data[name]["cache_write_tokens"], f"{share(usages):.1%}", f"{later:.1%}",
                         verdict(later >= TARGET) if cache else "-"])
    text = table(["conversation", "turns", "input tokens", "cache reads", "cache writes", "read share",
                  f"read share after turn {warmup}", f"target >= {TARGET:.0%}"], rows)
    print(text)
    save("prompt_cache", {"turns": turns, "warmup": warmup, "results": data},
         f"## Prompt caching (`prompt_cache.py`)\n\n{turns} turns, ~1,500 tokens of instructions, 3 tools, against "
         f"the fake servers' cache models.\n\n{text}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    anyio.run(main, args.turns, args.warmup, backend="trio")
