"""Crash tests of durable itself: the explorer over our scenarios, process kills, a stateful
exploration and power cuts. Every async test runs on trio."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "trio"
