"""Submissions: the inputs the host handed to a conversation, and what became of each."""

from __future__ import annotations

from typing import Any, Union

from attrs import field

from .._frozen import OMITTED_WHEN_DEFAULT, frozen
from .content import Part
from .model_settings import ModelSettings
from .reasons import UnansweredReason


@frozen
class Queued:
    """Submission status: accepted and committed; waiting for a run to answer it."""

    pass


@frozen
class Answered:
    """The run that took this input ended with an answer (`done`): its `text` and the `seq` of
    its assistant entry. `output`: for an input submitted with an output type, the answer as
    the validated JSON value (`SubmissionHandle.answer(T)` converts it to a `T`)."""

    text: str = ""
    seq: int | None = None
    output: Any = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@frozen
class Unanswered:
    """Submission status: the run that took this input ended without an answer; `reason` says why
    (`UnansweredReason`) and `detail` in a sentence."""

    reason: UnansweredReason
    detail: str


SubmissionStatus = Union[Queued, Answered, Unanswered]
"""Where a submission stands: queued until its run settles it, then answered or unanswered."""


@frozen
class Submission:
    """An input the host submitted to a conversation, and what became of it (`status`).

    `seq` is the seq of its user entry once a run took it; `task_id` the run (generation task)
    that took it. `settled` is true once it is answered or unanswered: it settles exactly once.
    `output`: the JSON schema its answer must match (structured output), None for a text answer;
    stored with the input, so a later process enforces the same one. `parts`: an input of several
    parts (text, images, files), in order; `text` is then its text parts joined. `model_settings`:
    the conversation handle's and the submission's `ModelSettings`, merged (None: none given); its
    run merges the harness's under them and stores the result with the generation."""

    id: str
    conversation_id: str
    text: str
    seq: int | None = None  # the user entry's seq, once its run started
    status: SubmissionStatus = Queued()
    task_id: int | None = None
    created_at: float = 0.0
    output: dict[str, Any] | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    parts: tuple[Part, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)
    model_settings: ModelSettings | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def settled(self) -> bool:
        return not isinstance(self.status, Queued)


__all__ = ["Answered", "Queued", "Submission", "SubmissionStatus", "Unanswered"]
