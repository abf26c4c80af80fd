"""What a submission's stream uses of its harness (`StreamHost`), apart from the stream itself
(`durable.engine.streaming`): a conversation's handle names it, and imports the streaming
machinery only when a stream is asked for (`SubmissionHandle.stream`), so that opening a session
and recovering it do not import it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..storage.protocol import Storage
    from .session import Session


class StreamHost(Protocol):
    """What a stream uses of its harness (a part of `durable.engine.conversation.Host`)."""

    storage: Storage

    @property
    def session(self) -> Session: ...

    async def resume(self) -> None: ...

    def _check_open(self) -> None: ...

    def _raise_if_broken(self) -> None: ...


__all__ = ["StreamHost"]
