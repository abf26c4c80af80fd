"""`FallbackModel`: several models tried in order, the next one when the one in use fails for good.

In a harness the generation task talks to the members itself (docs/spec.md §3): the member a run
uses is committed in its checkpoint, an attempt that fails with an error that is not retryable,
or whose retries ran out, moves the run to the next member (with a fresh retry budget), and a
request cut off by a crash is charged and sent again on the member it was sent to, never silently
on the first. A deferred job is polled and cancelled on the member that started it.

Called directly (outside the generation task, e.g. by compaction), `stream` tries the members in
order and moves on when one raises a `ModelError` before its first event; `submit`, `fetch`,
`cancel` and `find` are the primary's. Depends on the model protocol alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import aclosing

from ..errors import DurableError
from .protocol import DeferredHandle, FetchResult, Model, ModelError, ModelRequest, StreamEvent


class FallbackModel:
    """Models tried in order: `FallbackModel([primary, secondary, ...])`.

    `members` are the models (a nested `FallbackModel` is flattened into its members); keep their
    order across restarts, since a run records the member it uses by its place. `name` is
    "fallback:" and the members' names, joined by ","; `context_window` the smallest of theirs
    (a compaction must fit every member); `deferred` the primary's (each member answers its own
    way in a harness). Raises `ValueError` when given no model."""

    def __init__(self, models: Iterable[Model]) -> None:
        flat: list[Model] = []
        for model in models:
            flat.extend(model.members if isinstance(model, FallbackModel) else (model,))
        if not flat:
            raise ValueError("FallbackModel needs at least one model")
        self.members: tuple[Model, ...] = tuple(flat)
        self.name = "fallback:" + ",".join(model_name(m) for m in flat)
        self.context_window = min(m.context_window for m in flat)
        self.deferred = flat[0].deferred

    def __repr__(self) -> str:
        return f"FallbackModel([{', '.join(model_name(m) for m in self.members)}])"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The first member's answer that starts: a member that raises `ModelError` before its
        first event gives way to the next; the last one's error is raised."""
        for index, member in enumerate(self.members):
            started = False
            try:
                async with aclosing(member.stream(request)) as events:  # type: ignore[type-var]  # an AsyncIterator with aclose
                    async for event in events:
                        started = True
                        yield event
                return
            except ModelError:
                if started or index == len(self.members) - 1:
                    raise

    async def submit(self, request: ModelRequest) -> DeferredHandle:
        return await self.members[0].submit(request)

    async def fetch(self, handle: str) -> FetchResult:
        return await self.members[0].fetch(handle)

    async def cancel(self, handle: str) -> None:
        await self.members[0].cancel(handle)

    async def find(self, key: str) -> str | None:
        return await self.members[0].find(key)

    async def aclose(self) -> None:
        """Close every member that has connections to close."""
        for member in self.members:
            close = getattr(member, "aclose", None)
            if close is not None:
                await close()


class FallbackMemberMissing(DurableError):
    """A run recorded a `FallbackModel` member that the harness's model no longer has (the list
    was shortened between two processes): the run cannot go on with the model it was using."""


def model_name(model: object) -> str:
    """A model's name ("openai:gpt-4o"), or its class name when it has none."""
    name = getattr(model, "name", None)
    return name if isinstance(name, str) and name else type(model).__name__


def members_of(model: Model) -> tuple[Model, ...]:
    """The models a harness's `model` tries in order: a `FallbackModel`'s members, else itself."""
    return model.members if isinstance(model, FallbackModel) else (model,)


def member_of(model: Model, index: int) -> Model:
    """Member `index` of `model` (0: the model itself when it is not a `FallbackModel`). Raises
    `FallbackMemberMissing` naming the model when it has no such member."""
    members = members_of(model)
    if not 0 <= index < len(members):
        raise FallbackMemberMissing(
            f"A run was using member {index + 1} of {model_name(model)}, which has {len(members)} member(s) now: "
            "keep a FallbackModel's members (and their order) while runs that used them are unfinished")
    return members[index]


def provider_of(model: object) -> str | None:
    """The provider part of a model's name ("openai" for "openai:gpt-4o")."""
    name = getattr(model, "name", None)
    return name.split(":", 1)[0] if isinstance(name, str) else None


__all__ = ["FallbackMemberMissing", "FallbackModel", "member_of", "members_of", "model_name", "provider_of"]
