"""Faux models that answer by where the conversation is, so that crashes cannot derail them.

A plain `FauxModel(script)` answers the n-th request with the n-th step. After a crash the
harness sends a request again (a retry, a safe re-run), which would take the next step meant for
another turn. `by_input` answers from the request itself: the text of the last user input and
how many answers the model already gave to it (assistant entries after it in the context), so a
request sent again gets the same answer, in this process or the next.

    model = by_input({
        "weather?": [reply("", tool_calls=[call("lookup", {"city": "Oslo"})]), reply("Sunny")],
    }, default=reply("OK"))

A step may be a callable `f(request) -> step` (e.g. an error on attempt 1 only:
`lambda req: error("busy", kind="overloaded") if req.attempt == 1 else reply("Fine")`). Tool calls
get a fresh id on every request, as a real provider gives them. Compaction requests (the
harness's summary prompt) are answered with `summary`.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ..models.faux import Error, ErrorStop, FauxModel, Hang, Reply, reply
from ..models.protocol import ModelRequest
from ..records import AssistantEntry, UserEntry

_STEP_TYPES = (Reply, Error, ErrorStop, Hang)


def _summary_prompt() -> str | None:
    try:
        from ..tasks.compaction import SUMMARY_PROMPT
    except ImportError:  # pragma: no cover - the engine renamed it
        return None
    return SUMMARY_PROMPT


def turn_of(request: ModelRequest) -> tuple[str | None, int]:
    """(text of the last user input in the request, answers already given to it)."""
    answers = 0
    for message in reversed(request.messages):
        if isinstance(message, UserEntry):
            return message.text, answers
        if isinstance(message, AssistantEntry):
            answers += 1
    return None, answers


def is_summary_request(request: ModelRequest) -> bool:
    prompt = _summary_prompt()
    last = request.messages[-1] if request.messages else None
    return isinstance(last, UserEntry) and last.submission_id is None and prompt is not None and last.text == prompt


def by_input(
    answers: Mapping[str, Sequence[Any]] | None = None,
    *,
    default: Any = reply("OK"),
    summary: str = "Summary of the conversation so far.",
    **faux_options: Any,
) -> FauxModel:
    """A `FauxModel` answering each request by its turn (see the module docstring).

    `answers[text][n]` answers the n-th request of the turn started by input `text` (n counts
    the answers already in the context, so retries and re-runs get the same step). Past the end
    of its list, or for an input not listed, `default` answers (a step or a callable).
    `faux_options` go to `FauxModel` (e.g. `deferred=True, polls=2`)."""
    table = {text: list(steps) for text, steps in (answers or {}).items()}

    def choose(request: ModelRequest) -> Any:
        if is_summary_request(request):
            return reply(summary)
        text, n = turn_of(request)
        steps = table.get(text, []) if text is not None else []
        step = steps[n] if n < len(steps) else default
        while callable(step) and not isinstance(step, _STEP_TYPES):
            step = step(request)
        return fresh_call_ids(step)

    return FauxModel(_Forever(choose), **faux_options)


def fresh_call_ids(step: Any) -> Any:
    """The step with new tool call ids (a provider never repeats one)."""
    if isinstance(step, Reply) and step.tool_calls:
        calls = tuple(attrs.evolve(c, id=f"call_{uuid.uuid4().hex[:12]}") for c in step.tool_calls)
        return attrs.evolve(step, tool_calls=calls)
    return step


class _Forever(Sequence[Callable[[ModelRequest], Any]]):
    """The same step at every position of a script that never runs out."""

    def __init__(self, step: Callable[[ModelRequest], Any]) -> None:
        self._step = step

    def __len__(self) -> int:
        return 1 << 16

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._step] * len(range(*index.indices(len(self))))
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return self._step

    def __iter__(self) -> Any:
        return itertools.repeat(self._step, len(self))
