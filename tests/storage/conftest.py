"""Store factories for the conformance suite.

A `Backend` stands for one session "file" and opens stores on it: `backend.store()` is a new
opener of the same file (for `MemoryStorage` the one object, which is its own file). Three
backends run every conformance test:

- `memory`: `MemoryStorage`;
- `sqlite`: `SQLiteStorage` in a temp dir;
- `sqlite-reopen`: `SQLiteStorage` closed and opened again (a new object on the same path) after
  every commit, so every read after a commit is served by what the file holds, not by anything a
  store object kept;
- `postgres` and `postgres-asyncio`: `PostgresStorage` on a new space of the session's throwaway
  server (the `postgres_server` fixture, tests/conftest.py), on trio and on asyncio.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from durable.errors import StorageClosed
from durable.storage import Batch, MemoryStorage, Opened, SQLiteStorage


class ReopeningStorage:
    """An `SQLiteStorage` that closes and reopens the file after every commit (failed or not)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.location = path
        self.reopens = 0
        self._inner = SQLiteStorage(path)
        self._closed = False

    async def open(self) -> Opened:
        return await self._inner.open()

    async def commit(self, batch: Batch) -> None:
        if self._closed:
            raise StorageClosed(f"Session file {self.path} is closed", location=self.path)
        try:
            await self._inner.commit(batch)
        finally:
            await self._inner.close()
            self._inner = SQLiteStorage(self.path)
            await self._inner.open()
            self.reopens += 1

    async def close(self) -> None:
        self._closed = True
        await self._inner.close()

    def __getattr__(self, name: str) -> Any:  # reads: get_task, find_tasks, call_in_writer, ...
        return getattr(self._inner, name)


class Backend:
    def __init__(self, name: str, make: Callable[[], Any]) -> None:
        self.name = name
        self._make = make

    def store(self) -> Any:
        return self._make()

    def __repr__(self) -> str:
        return f"Backend({self.name})"


@pytest.fixture
def anyio_backend(request: pytest.FixtureRequest) -> str:
    callspec = getattr(request.node, "callspec", None)
    return "asyncio" if callspec is not None and callspec.params.get("backend") == "postgres-asyncio" else "trio"


@pytest.fixture(params=["memory", "sqlite", "sqlite-reopen", "postgres", "postgres-asyncio"])
def backend(request: pytest.FixtureRequest, tmp_path) -> Backend:
    if request.param.startswith("postgres"):
        from durable.storage import PostgresStorage

        dsn = request.getfixturevalue("postgres_dsn")
        space = f"conformance-{uuid.uuid4().hex[:12]}"
        return Backend(request.param, lambda: PostgresStorage(dsn, space))
    path = os.fspath(tmp_path / "session.db")
    if request.param == "memory":
        memory = MemoryStorage("conformance")
        return Backend("memory", lambda: memory)
    if request.param == "sqlite":
        return Backend("sqlite", lambda: SQLiteStorage(path))
    return Backend("sqlite-reopen", lambda: ReopeningStorage(path))


@pytest.fixture
async def store(backend: Backend):
    """An opened store on a new file; closed after the test."""
    s = backend.store()
    await s.open()
    yield s
    await s.close()
