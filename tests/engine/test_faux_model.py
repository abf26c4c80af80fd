"""The faux model keeps only its newest requests (a long run must not keep every context)."""

from __future__ import annotations

import pytest

from durable import records as r
from durable.models import FauxModel, faux

from .conftest import settings

pytestmark = pytest.mark.anyio


async def test_the_faux_model_keeps_its_newest_requests_and_counts_them_all(host):
    model = FauxModel([faux.reply(f"answer {i}") for i in range(3)], keep_requests=2)
    async with host.open(model, settings=settings()) as h:
        for i in range(3):
            assert await (await h.root.submit(f"q{i}")).wait() == r.Answered(f"answer {i}", 2 * i + 2)
        assert await model.wait_for_requests(3) is model.requests[-1]
        with pytest.raises(IndexError, match="request 1 is no longer kept"):
            await model.wait_for_requests(1)
    assert model.calls == 3
    assert [req.messages[-1].text for req in model.requests] == ["q1", "q2"]
    assert FauxModel([]).keep_requests == 100  # bounded unless asked to record (None)
