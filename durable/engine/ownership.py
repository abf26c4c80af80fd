"""The engine under a lease: what a harness does when its store may lose ownership while open.

A store owned by a lease (`durable.storage.protocol.Leased`: `PostgresStorage`) can lose it while
the harness runs: a renewal refused (another process took the space over after a pause or a
partition), a commit's fence refused. Two rules follow, both through the storage protocol only
(a store without a lease, a locked SQLite file, answers "owned until closed" and nothing waits):

- `watch`: the harness waits for the store to learn it lost the lease, then breaks (every runner
  stops, every wait ends with that `LockLost`), as it does when a commit meets `LockLost`.
- `before_external_work`: called right before work with an effect outside the process starts (a
  model request is sent, a deferred job submitted, a tool's `execute` called). It returns at once
  while the lease surely holds (`ownership_deadline`, a local monotonic bound shorter than the
  lease); past it, the lease may have lapsed without the store knowing yet (the server cannot be
  reached), so it waits until a renewal moves the deadline again, or raises the `LockLost` the
  store learns. Nothing outside the process starts on behalf of an owner that may be gone.

What a takeover charges is recovery's business (durable.engine.recovery): the new owner reads the
tasks left `running` and charges them exactly as a reopened file does.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio

from ..errors import LockLost, StorageError
from ..storage.protocol import Leased, Storage, ownership_deadline, ownership_lost

_POLL = 0.05  # how often a wait past the deadline looks at it again (seconds)


async def watch(storage: Storage, on_lost: Callable[[StorageError], None]) -> None:
    """Call `on_lost(err)` once the store learns it lost its lease; never returns for a store
    without a lease (cancel it)."""
    if not isinstance(storage, Leased):
        await anyio.sleep_forever()
        return
    err = await storage.wait_lease_lost()
    on_lost(err)


async def before_external_work(storage: Storage, what: str) -> None:
    """Return once the store surely owns its space (at once, normally); raise its `LockLost` if it
    learns it lost it meanwhile. `what` names the work in that error."""
    while time.monotonic() >= (deadline := ownership_deadline(storage)):
        lost = ownership_lost(storage)
        if lost is not None or deadline == float("-inf"):  # lost, or not open any more
            raise LockLost(f"{what} was not started: {lost or f'{storage.location} is not owned'}",
                           location=storage.location)
        await anyio.sleep(_POLL)


__all__ = ["before_external_work", "watch"]
