"""Shared test configuration. `@pytest.mark.anyio` tests run on trio unless a test or a
directory's conftest parametrizes `anyio_backend` itself."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "trio"
