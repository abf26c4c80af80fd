"""Which model a run talks to: its conversation's model (a sub-agent's own, else the harness's),
or the member of that `FallbackModel` that the run's checkpoint names (`RunNotes.model`; a
deferred job names its own, `DeferredJob.model`).

A run starts on the first member and moves to the next only through a committed fallback
(`attempts.attempt_failed`), so after a crash it resumes on the member it was using.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...models.fallback import member_of, members_of, model_name, provider_of
from ...models.protocol import Model
from ...records import Checkpoint, Task
from .records import job_of, notes_of

if TYPE_CHECKING:
    from ...engine.runtime import Runtime


def index_of(checkpoint: Checkpoint | None) -> int:
    """The member a generation's checkpoint is on: its deferred job's, else its run's."""
    job = job_of(checkpoint)
    return job.model if job is not None else notes_of(checkpoint).model


def current(rt: Runtime, task: Task) -> Model:
    """The model generation `task` sends its requests to (and polls its job at)."""
    return member_of(rt.model_for(task.conversation_id), index_of(task.checkpoint))


def name(rt: Runtime, task: Task) -> str:
    """The name of the model generation `task` is on ("anthropic:claude-sonnet-4-5")."""
    return model_name(current(rt, task))


def provider(rt: Runtime, task: Task) -> str | None:
    return provider_of(current(rt, task))


def deferred(rt: Runtime, model: Model) -> bool:
    """Whether `model` answers through background jobs in this harness (`settings.stream.deferred`)."""
    return rt.settings.stream.deferred and model.deferred


def next_index(rt: Runtime, task: Task) -> int | None:
    """The member after the one generation `task` is on, None when it is on the last."""
    index = notes_of(task.checkpoint).model + 1
    return index if index < len(members_of(rt.model_for(task.conversation_id))) else None


__all__ = ["current", "deferred", "index_of", "model_name", "name", "next_index", "provider"]
