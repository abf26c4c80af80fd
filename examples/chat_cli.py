"""A terminal chat that survives `kill -9`.

    python examples/chat_cli.py [PATH]
    printf 'hello\\nhow are you?\\n' | python examples/chat_cli.py chat.sqlite

Each line read from stdin is one input; the answer streams below it. PATH is the session file
(default: chat.sqlite in the current directory). Kill the process at any moment (`kill -9`,
closing the terminal) and start it again on the same file: it reopens the file, shows the work
the dead process left unsettled (the input being answered, an answer that ended unanswered) and
finishes it before reading more. Ctrl-C or the end of stdin is a clean close.

The model is a small echo model written against durable's model protocol (no key needed). With
OPENAI_API_KEY set it uses OpenAI (OPENAI_BASE_URL for a compatible server; CHAT_MODEL names the
model), with ANTHROPIC_API_KEY set it uses Anthropic, with GEMINI_API_KEY set Gemini.

What is printed comes from committed state only: `submission.stream()` yields the answer's text
as its partial is committed (at most every 100 ms), a retry and an attempt that starts over (after
a crash: the partial the dead process committed, then the new attempt's text), and the result.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio

import durable
from durable.models import FinalMessage, ModelRequest, TextDelta, UsageEvent


class EchoModel:
    """A model in a dozen lines: streams back what the user said. Shows the model protocol."""

    name = "echo"
    context_window = 100_000
    deferred = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        said = next((m.text for m in reversed(request.messages) if isinstance(m, durable.UserEntry)), "")
        text = f"You said: {said!r}. (This is the echo model; set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one.)"
        for i in range(0, len(text), 4):
            await anyio.sleep(0.02)
            yield TextDelta(text[i:i + 4])
        usage = durable.Usage(len(said) // 4 + 1, len(text) // 4 + 1)
        yield UsageEvent(usage)
        yield FinalMessage(text, "stop", usage=usage)


def choose_model() -> Any:
    if os.environ.get("OPENAI_API_KEY"):
        from durable.models.openai import OpenAIModel

        return OpenAIModel(os.environ.get("CHAT_MODEL", "gpt-4o-mini"))
    if os.environ.get("ANTHROPIC_API_KEY"):
        from durable.models.anthropic import AnthropicModel

        return AnthropicModel(os.environ.get("CHAT_MODEL", "claude-3-5-haiku-latest"))
    if os.environ.get("GEMINI_API_KEY"):
        from durable.models.gemini import GeminiModel

        return GeminiModel(os.environ.get("CHAT_MODEL", "gemini-2.5-flash"))
    return EchoModel()


class Screen:
    """Where the cursor is: reports and notes start on a fresh line."""

    mid_line = False

    @classmethod
    def write(cls, text: str) -> None:
        print(text, end="", flush=True)
        if text:
            cls.mid_line = not text.endswith("\n")

    @classmethod
    def line(cls, text: str) -> None:
        cls.write(("\n" if cls.mid_line else "") + text + "\n")


async def answer(submission: durable.SubmissionHandle) -> None:
    """Print one input's answer as it is committed (`submission.stream()`), until it settles."""
    Screen.write("assistant> ")
    async for event in submission.stream():
        if isinstance(event, durable.TextDeltaEvent):
            Screen.write(event.text)
        elif isinstance(event, durable.RetryWaitingEvent):
            Screen.line(f"  [attempt {event.retry.attempt} failed: {event.retry.error}; retrying]")
        elif isinstance(event, durable.AttemptRestartedEvent):  # its text comes again from the start
            Screen.write(("\n" if Screen.mid_line else "") + "assistant> ")
        elif isinstance(event, durable.SettledEvent) and isinstance(event.status, durable.Unanswered):
            Screen.line(f"  [not answered ({event.status.reason}): {event.status.detail}]")
    if Screen.mid_line:
        Screen.write("\n")


async def resume_unsettled(harness: durable.Harness) -> None:
    """Show and finish what the previous process left: a run that ended unanswered, and the run it
    was answering, streamed from the partial answer it had committed."""
    live = harness.root.live()
    if live.run_failure is not None:
        failure = live.run_failure
        Screen.line(f"(last time, {failure.first!r} was not answered: {failure.reason}: {failure.detail})")
    if live.run is None:
        return
    for sid in live.run.inputs:
        sub = await harness.root.submission(sid).get()
        Screen.line(f"(the last process stopped before answering) you> {sub.text}")
    await answer(harness.root.submission(live.run.inputs[-1]))


async def read_line(interactive: bool) -> str | None:
    if interactive:
        Screen.write("you> ")
    line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    return line if line else None  # "" is the end of stdin


async def main(path: str) -> None:
    interactive = sys.stdin.isatty()
    reports: list[Any] = []

    def report(rep: Any) -> None:  # crash handling tells the host what it did
        if isinstance(rep, (durable.TaskInterrupted, durable.TaskFaulted)):
            Screen.line(f"(recovery: task {rep.task.id} ({rep.task.kind}): {rep.detail})")
        reports.append(rep)

    existed = os.path.exists(path)
    async with durable.open_harness(path, model=choose_model(), report=report) as harness:
        count = len(await harness.root.entries())
        Screen.line(f"durable chat on {path}" + (f" (reopened: {count} entries)" if existed else " (new)")
                    + ("; Ctrl-D or Ctrl-C to leave" if interactive else ""))
        await resume_unsettled(harness)
        while True:
            line = await read_line(interactive)
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if not interactive:
                Screen.line(f"you> {text}")
            submission = await harness.root.submit(text)  # committed: survives a kill from here on
            await answer(submission)
    Screen.line("bye (the conversation is in the file; run again to continue it)")


if __name__ == "__main__":
    try:
        anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "chat.sqlite", backend="trio")
    except KeyboardInterrupt:
        print("\nbye (a clean close: nothing was lost)")
