"""The agent-framework peers of `peers.py`: pydantic-ai (its own agent loop, nothing durable, and on
DBOS) and the OpenAI Agents SDK (its agent loop with a `SQLiteSession`), each running the workload
of ours ("3 sequential tool calls": the model asks for one `step` call, gets its result, asks for
the next, three times, then answers) with the framework's own fake or scripted model.

- pydantic-ai, "plain": `Agent(FunctionModel(decide))` with a `step` tool; nothing is stored.
- pydantic-ai, "dbos": the same agent with the `DBOSDurability` capability, run inside a
  `@DBOS.workflow` (the documented way), its `step` tool calling a `@DBOS.step` so each tool call is
  a checkpointed step as ours is; every model request is a DBOS step too (the capability's). DBOS's
  system database on SQLite, its default journal (DELETE, synchronous FULL).
- OpenAI Agents SDK, "sqlite": `Agent(model=Scripted())` with a `@function_tool` step, run by
  `Runner.run(..., session=SQLiteSession(id, file))`: the session stores every item of the run
  (the user input, calls, results, the answer) in SQLite. It is conversation memory, not durable
  execution (nothing resumes a cut-off run), and the nearest thing that SDK offers.

Each runs `conc` asyncio tasks, each its share of the workflows one after another, after `warmup`
workflows; it returns the fields `peers.py` prints (wall, CPU, journal and synchronous level).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any


def _measure(run: Callable[[int], Awaitable[None]], n: int, conc: int, warmup: int) -> dict[str, float]:
    async def main() -> dict[str, float]:
        for k in range(warmup):
            await run(-1 - k)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t = time.perf_counter()

        async def worker(w: int) -> None:
            for k in range(w, n, conc):
                await run(k)

        await asyncio.gather(*(worker(w) for w in range(max(1, conc))))
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        return {"wall": wall, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)}

    return asyncio.run(main())


def _pragmas(path: str) -> tuple[str, str]:
    c = sqlite3.connect(path)
    try:
        journal = c.execute("PRAGMA journal_mode").fetchone()[0]
        # synchronous is per connection; the frameworks leave SQLite's default (FULL) on theirs
        return journal, "FULL (SQLite's default, not changed by the framework)"
    finally:
        c.close()


def pydantic_ai(variant: str, n: int, conc: int, warmup: int) -> dict[str, Any]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
    from pydantic_ai.models.function import FunctionModel

    def decide(messages: list[Any], info: Any) -> ModelResponse:
        done = 0
        for m in reversed(messages):
            parts = getattr(m, "parts", [])
            if any(isinstance(p, UserPromptPart) for p in parts):
                break
            done += sum(isinstance(p, ToolReturnPart) for p in parts)
        if done < 3:
            return ModelResponse(parts=[ToolCallPart("step", {"i": done}, tool_call_id=f"step{done}")])
        return ModelResponse(parts=[TextPart("done")])

    if variant == "plain":
        agent = Agent(FunctionModel(decide), name="wf")

        @agent.tool_plain
        def step(i: int) -> str:
            return "ok"

        async def run(k: int) -> None:
            assert (await agent.run("run the workflow")).output == "done"

        out: dict[str, Any] = _measure(run, n, conc, warmup)
        out.update(journal="none (nothing stored)", synchronous="nothing durable")
        return out

    import logging

    from dbos import DBOS
    from pydantic_ai.durable_exec.dbos import DBOSDurability

    logging.getLogger("dbos").setLevel(logging.WARNING)
    path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-pyd-dbos-"), "dbos.sqlite")
    DBOS(config={"name": "durable-bench-pyd", "system_database_url": f"sqlite:///{path}", "log_level": "WARNING",
                 "sys_db_pool_size": max(20, conc + 4)})
    durable_agent = Agent(FunctionModel(decide), name="wf", capabilities=[DBOSDurability()])

    @DBOS.step()
    def step_impl(i: int) -> str:
        return "ok"

    @durable_agent.tool_plain(name="step")
    def step_tool(i: int) -> str:
        return step_impl(i)

    @DBOS.workflow()
    async def workflow(k: int) -> str:
        return (await durable_agent.run("run the workflow")).output

    async def run_dbos(k: int) -> None:
        assert await workflow(k) == "done"

    DBOS.launch()
    try:
        out = _measure(run_dbos, n, conc, warmup)
    finally:
        DBOS.destroy()
    out["journal"], out["synchronous"] = _pragmas(path)
    return out


def openai_agents(variant: str, n: int, conc: int, warmup: int) -> dict[str, Any]:
    from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    set_tracing_disabled(True)

    class Scripted(Model):
        """The workflow's next step, decided from the input (stateless, as ours and pydantic-ai's)."""

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
            done = 0
            for item in reversed(input if isinstance(input, list) else []):
                d = item if isinstance(item, dict) else item.model_dump()
                if d.get("role") == "user":
                    break
                done += d.get("type") == "function_call_output"
            out: list[Any]
            if done < 3:
                out = [ResponseFunctionToolCall(type="function_call", call_id=f"step{done}", name="step",
                                                arguments=json.dumps({"i": done}), id=f"fc{done}")]
            else:
                out = [ResponseOutputMessage(type="message", id="m", role="assistant", status="completed",
                                             content=[ResponseOutputText(type="output_text", text="done",
                                                                         annotations=[])])]
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def step(i: int) -> str:
        """One workflow step."""
        return "ok"

    agent = Agent(name="wf", model=Scripted(), tools=[step])
    path = os.path.join(tempfile.mkdtemp(prefix="durable-bench-oai-"), "sessions.sqlite")

    async def run(k: int) -> None:
        result = await Runner.run(agent, "run the workflow", session=SQLiteSession(f"wf{k}", path))
        assert result.final_output == "done"

    out: dict[str, Any] = _measure(run, n, conc, warmup)
    out["journal"], out["synchronous"] = _pragmas(path)
    return out
