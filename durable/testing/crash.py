"""In-process crashes: a storage wrapper that stops the world the way `kill -9` does.

`CrashableStorage(inner)` passes every call through until it crashes: by `crash()`, or by itself
just before or just after its k-th commit (`crash_before=k` / `crash_after=k`). From then on
every call, and the result of every call in flight, hangs: nothing more is written, not even
what a clean close would write. A commit the inner store had already started still completes
on disk (as it would in a killed process whose write reached the file), but its caller never
hears back.

`crash(harness)` crashes the harness's storage and abandons the harness: its runners are
cancelled where they hang, and leaving its `async with` block writes nothing. `release()` then
closes the inner store (freeing the file's lock, as the OS does for a dead process), so the
same file can be reopened by a new harness in the same test.
"""

from __future__ import annotations

from typing import Any

import anyio

from ..storage.protocol import Batch, Opened


class CrashableStorage:
    def __init__(self, inner: Any, *, crash_before: int | None = None, crash_after: int | None = None) -> None:
        self.inner = inner
        self.location = inner.location
        self.crash_before = crash_before
        self.crash_after = crash_after
        self.commit_calls = 0  # commits handed to the inner store
        self.crashed = anyio.Event()

    def crash(self) -> None:
        self.crashed.set()

    async def _hang(self) -> Any:
        await anyio.sleep_forever()

    async def _pass(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.crashed.is_set():
            await self._hang()
        result = await getattr(self.inner, name)(*args, **kwargs)
        if self.crashed.is_set():
            await self._hang()
        return result

    async def open(self) -> Opened:
        return await self._pass("open")

    async def commit(self, batch: Batch) -> None:
        if self.crashed.is_set():
            await self._hang()
        number = self.commit_calls + 1
        if self.crash_before is not None and number >= self.crash_before:
            self.crash()
            await self._hang()
        self.commit_calls = number
        await self.inner.commit(batch)
        if self.crash_after is not None and number >= self.crash_after:
            self.crash()
        if self.crashed.is_set():
            await self._hang()

    async def get_task(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_task", *a, **k)

    async def find_tasks(self, *a: Any, **k: Any) -> Any:
        return await self._pass("find_tasks", *a, **k)

    async def get_entries(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_entries", *a, **k)

    async def get_submission(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_submission", *a, **k)

    async def get_live(self, *a: Any, **k: Any) -> Any:
        return await self._pass("get_live", *a, **k)

    async def close(self) -> None:
        if self.crashed.is_set():
            await self._hang()
        await self.inner.close()

    async def release(self) -> None:
        """After a crash: close the inner store, as the OS does for a killed process."""
        with anyio.CancelScope(shield=True):
            await self.inner.close()


def crash(harness: Any) -> None:
    """Crash `harness` now: its storage hangs and the harness is abandoned (no clean close)."""
    storage = harness.storage
    if isinstance(storage, CrashableStorage):
        storage.crash()
    harness._abandon()
