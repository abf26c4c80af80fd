"""The owner's side of `durable.remote`: placing the inputs other processes put in a store's inbox.

A store that implements `durable.storage.protocol.Inbox` (`PostgresStorage`) keeps inputs that
another process submitted while this harness owns the space. Once the harness is resumed, `watch`
waits for the inbox, takes its inputs oldest first and hands each to `place` (the harness's normal
submit path, queueing behind an active run, with the inbox id as the submission id). The store
deletes an inbox row in the commit that writes its submission, so a crash before that commit
leaves the row for the next owner, and a row is never placed twice. Decisions on tool calls
waiting for approval go to `decide` the same way: the commit that applies one (or drops it,
refused) consumes its row. A session file's inbox holds decisions only (`durable console`); a
store without an inbox (memory) is never watched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from ..errors import DurableError, HarnessClosed, LockLost, StorageClosed
from ..records import Submission
from ..storage.protocol import Inbox, InboxDecision, Storage
from .reports import ErrorReport, Reporter

_TAKEN = 32  # inputs taken per round
_BACKOFF = 1.0  # seconds before trying again after an input could not be placed


async def watch(storage: Storage, place: Callable[[Submission], Awaitable[object]], report: Reporter,
                decide: Callable[[InboxDecision], Awaitable[object]] | None = None) -> None:
    """Place every input of `storage`'s inbox, and apply every decision (`decide`), forever
    (cancel it); returns at once for a store without an inbox, or when the harness stops
    accepting inputs."""
    if not isinstance(storage, Inbox):
        return
    while True:
        try:
            await storage.wait_inbox()
            for sub in await storage.take_inbox(_TAKEN):
                await place(sub)
            if decide is not None:
                for decision in await storage.take_decisions(_TAKEN):
                    await decide(decision)
        except (HarnessClosed, StorageClosed, LockLost):
            return  # closing, or the store lost its space: the harness breaks on its own
        except DurableError as exc:  # a read failed, or the submit path refused an input: said, tried again
            report(ErrorReport(f"An input from the inbox of {storage.location} could not be placed: {exc}",
                               raw=exc, topic="storage"))
            await anyio.sleep(_BACKOFF)


__all__ = ["watch"]
