"""Helpers for harness tests: a host that opens crashable harnesses on one real SQLite file
with a fake clock, records reports, and reads transcripts."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, Callable

import pytest

import durable
from durable import records as r
from durable.storage import SQLiteStorage
from durable.testing import CrashableStorage, FakeClock
from durable.testing.crash import entry_kind as kind_of


@pytest.fixture
def anyio_backend():
    return "trio"


class Host:
    def __init__(self, path: str) -> None:
        self.path = path
        self.clock = FakeClock()
        self.reports: list[Any] = []
        self.storage: CrashableStorage | None = None
        self.inbox_poll: float | None = 0.25  # None on a mock clock (see SQLiteStorage)

    @asynccontextmanager
    async def open(self, model: Any, *, tools: Any = (), settings: Any = None, crash_after: int | None = None,
                   crash_before: int | None = None, clock: Any = None, **options: Any):
        """A harness on the file; `options` go to `open_harness` (deps, instructions, output)."""
        store = CrashableStorage(SQLiteStorage(self.path, inbox_poll_seconds=self.inbox_poll), crash_after=crash_after,
                                 crash_before=crash_before)
        self.storage = store
        h = durable.open_harness(store, model=model, tools=tools, settings=settings,
                                 clock=clock or self.clock, report=self.reports.append, **options)
        try:
            async with h:
                yield h
        finally:
            if store.crashed.is_set():
                await store.release()

    async def transcript(self) -> list[str]:
        store = SQLiteStorage(self.path)
        await store.open()
        try:
            return [kind_of(e.entry) for e in await store.get_entries("root")]
        finally:
            await store.close()

    async def entries(self) -> list[Any]:
        store = SQLiteStorage(self.path)
        await store.open()
        try:
            return [e.entry for e in await store.get_entries("root")]
        finally:
            await store.close()


@pytest.fixture
def host(tmp_path) -> Host:
    return Host(str(tmp_path / "session.sqlite"))


async def until_live(h: Any, predicate: Callable[[r.Live], bool], conversation: str = "root") -> r.Live:
    """Wait (on commits, not on time) until the committed live document satisfies `predicate`."""
    async for live in h.conversation(conversation).follow():
        if predicate(live):
            return live
    raise AssertionError("the harness closed before the live document matched")


def partial_is(text: str) -> Callable[[r.Live], bool]:
    return lambda live: live.generation is not None and live.generation.message.text == text


def settings(**kw: Any) -> durable.Settings:
    """Test settings: every delta committed, 1 s base backoff."""
    retry = kw.pop("retry", durable.RetryPolicy(base_delay=1.0))
    progress = kw.pop("progress", durable.Progress(persist_within=0, output_interval=0))
    return durable.Settings(retry=retry, progress=progress, **kw)


def used(requests: int = 0, input_tokens: int = 0, output_tokens: int = 0, *, model: str = "faux",
         tool_calls: int = 0, tool_seconds: float = 0.0) -> r.UsageTotals:
    """Usage totals of one model (the faux model by default)."""
    models = (r.ModelUsage(model, requests, input_tokens, output_tokens),) if requests or input_tokens or output_tokens \
        else ()
    return r.UsageTotals(models, tool_calls, tool_seconds)
