"""The demo's script and its faux model: four inputs, and answers decided from each request.

`STEPS` are the four inputs (a streamed answer, a tool round, a 429 retried, a deferred answer);
`DemoProgress` is where a run stands in them (the demo writes it, the watcher reads it).
`make_answer` is the faux model's brain: every answer is decided from the request it gets (which
input it answers, which tool results it sees, which attempt it is), so the script lines up with
the conversation whatever an earlier, killed process already answered. `DemoModel` streams at
about 40 tokens a second and adopts a deferred job an earlier process submitted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import attrs
from attrs import define, frozen

from .. import records as r
from ..models import FauxModel, ModelRequest, faux
from ..models.protocol import FetchResult

TOKENS_PER_SECOND = 40.0


@frozen
class Step:
    number: int  # 1-based
    kind: str  # "stream", "tools", "retry", "deferred"
    text: str


STEPS = (
    Step(1, "stream", "Hi! What is this demo about?"),
    Step(2, "tools", "What is the weather in Lisbon? Save a note about it for me."),
    Step(3, "retry", "Summarize what happened so far."),
    Step(4, "deferred", "Finally, write me a haiku about durability. Take your time."),
)
STREAMED = STEPS[:3]
DEFERRED = STEPS[3:]


@define
class DemoProgress:
    """What the demo knows of its conversation: submission ids by step number, the step being
    answered, and the last entry shown."""

    ids: dict[int, str] = attrs.field(factory=dict)
    current: Step | None = None
    last_seq: int = 0

HAIKU = "Power cut mid-word;\nthe file remembers the rest.\nThe answer goes on."


def scratch_dir(db: str) -> str:
    """Where the unsafe tool writes: `<db without extension>-scratch` next to the file."""
    return os.path.splitext(os.path.abspath(db))[0] + "-scratch"


def _which_step(request: ModelRequest) -> tuple[Step | None, list[Any]]:
    """The scripted step this request answers (from its last user message), and what follows
    that message in the request (tool calls and results of this run)."""
    messages = list(request.messages)
    for i in range(len(messages) - 1, -1, -1):
        entry = messages[i]
        if isinstance(entry, r.UserEntry):
            step = next((s for s in STEPS if s.text == entry.text), None)
            return step, messages[i + 1:]
    return None, []


def make_answer(db: str, speed: float) -> Callable[[ModelRequest], Any]:
    """The faux model's brain: every answer is decided from the request, so the script lines up
    with the conversation whatever an earlier process already answered."""
    note = os.path.join(os.path.basename(scratch_dir(db)), "lisbon.txt")

    def answer(request: ModelRequest) -> Any:
        step, after = _which_step(request)
        if step is None:
            return faux.reply("I only know the demo's script; this input is not part of it.")
        if step.kind == "stream":
            return faux.reply(
                "Hello! I am a scripted agent running on durable. Every step of this conversation is "
                f"committed to the SQLite file {os.path.basename(db)}: your input, my answer as it "
                "streams, each tool call and its output, every retry timer. Kill this process at any "
                "moment (kill -9, or durable demo --kill-after 3) and run durable demo again: the "
                "harness reopens the file, counts what was cut off as a failed attempt, and carries on where it "
                "stopped."
            )
        if step.kind == "tools":
            results = {e.tool_name: e for e in after if isinstance(e, r.ToolResultEntry)}
            if not results:
                key = request.key
                return faux.reply("Let me look that up and write it down.", reasoning=(
                    "Weather first, then a note with it: two tools in one round."), tool_calls=[
                    faux.call("weather", {"city": "Lisbon"}, id=f"weather-{key}"),
                    faux.call("save_note", {"name": "lisbon.txt", "lines": NOTE_LINES}, id=f"note-{key}"),
                ])
            parts = []
            weather = results.get("weather")
            if weather is not None and not weather.is_error:
                parts.append(f"In Lisbon it is {weather.content}.")
            else:
                parts.append("The weather service did not answer, so I cannot tell you the weather.")
            saved = results.get("save_note")
            if saved is not None and not saved.is_error:
                parts.append(f"I saved the note to {note}.")
            else:
                parts.append(
                    "Saving the note was cut off, and since save_note writes a file it is not safe to "
                    f"run twice: the harness did not run it again, so {note} may be incomplete."
                )
            parts.append("(weather is a safe tool: after a crash it simply runs again. save_note is "
                         "unsafe: after a crash it is never run a second time.)")
            return faux.reply(" ".join(parts))
        if step.kind == "retry":
            if request.attempt == 1:
                return faux.error("Rate limit reached: too many requests", kind="rate_limit",
                                  status_code=429, retry_after=2.0 / speed)
            inputs = sum(isinstance(e, r.UserEntry) for e in request.messages)
            return faux.reply(
                f"So far you gave me {inputs} inputs. I answered the first as a stream, then called two "
                "tools for the second. For this one the provider refused attempt 1 with HTTP 429; the "
                "harness slept out the retry-after in a durable timer (it survives a crash too) and "
                f"this is attempt {request.attempt}."
            )
        return faux.reply(HAIKU)

    return answer


NOTE_LINES = [
    "Lisbon, today",
    "21 °C and clear skies",
    "wind 12 km/h from the north-west",
    "a good day for a walk along the river",
    "(written by the durable demo)",
]


class DemoModel(FauxModel):
    """The demo's faux model: `answer` decides every step (any number of requests), and a
    deferred job submitted by an earlier, killed process is still found at the "provider", as a
    real provider keeps it: fetching its handle adopts it with the same answer."""

    def __init__(self, answer: Callable[[ModelRequest], Any], speed: float) -> None:
        # One step per request; the demo makes about a dozen, a long crash loop a few more.
        super().__init__([answer] * 512, tokens_per_second=TOKENS_PER_SECOND * speed, token_size=4,
                         deferred=True, poll_after=1.0 / speed, polls=3)
        self._adopted: dict[str, str] = {}

    async def fetch(self, handle: str) -> FetchResult:
        if handle not in self.submitted and handle not in self._adopted:
            request = ModelRequest("", (r.UserEntry(DEFERRED[0].text),), key=handle)
            self._adopted[handle] = (await self.submit(request)).id
        return await super().fetch(self._adopted.get(handle, handle))
