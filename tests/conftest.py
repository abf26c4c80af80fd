"""Shared test configuration. `@pytest.mark.anyio` tests run on trio unless a test or a
directory's conftest parametrizes `anyio_backend` itself."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "trio"


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL server for the whole run (durable.testing.pgcluster): initdb in a
    temp dir (as the `postgres` user when this is root), pg_ctl on a free port of 127.0.0.1,
    stopped (`-m immediate`) and removed at the end. Started only when a test asks for it. Without
    the server binaries it fails, saying to run scripts/ensure-postgres, unless
    DURABLE_SKIP_POSTGRES=1, which skips the PostgreSQL tests instead. fsync is off: the tests
    crash the server process (whose writes the OS keeps), never the machine."""
    from durable.testing.pgcluster import PostgresNotFound, TempCluster

    try:
        cluster = TempCluster(fsync=False)
    except PostgresNotFound as exc:
        if os.environ.get("DURABLE_SKIP_POSTGRES") == "1":
            pytest.skip(f"DURABLE_SKIP_POSTGRES=1: {exc}")
        pytest.fail(str(exc), pytrace=False)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture
def postgres_dsn(postgres_server) -> str:
    return postgres_server.dsn
