"""An input from another process (`durable.remote`) into an archived conversation of a running
owner is not lost nor left queued: the owner commits it answered `unanswered{archived}`, consuming
its inbox row; a worker finds no work in an archived conversation."""

from __future__ import annotations

import uuid

import anyio
import pytest

from durable import open_harness
from durable.models import FauxModel
from durable.records import Unanswered
from durable.remote import RemoteSpace
from durable.settings import Settings
from durable.storage import PostgresStorage
from durable.worker import find_spaces

from .test_postgres_remote import inbox_rows

pytestmark = pytest.mark.anyio


async def test_a_remote_input_into_an_archived_conversation_is_answered_archived(postgres_dsn):
    space = f"archived-{uuid.uuid4().hex[:10]}"
    settings = Settings(check_integrity=False)
    async with open_harness(PostgresStorage(postgres_dsn, space), model=FauxModel([]), settings=settings) as h, \
            RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        await h.root.archive()
        sid = await remote.submit("hello?")
        with anyio.fail_after(10):
            status = await remote.wait(sid)
        assert status == Unanswered("archived", f"Conversation 'root' in {h.storage.location} is archived; the input "
                                                f"was not accepted (unarchive it first)")
        assert await h.root.entries() == [] and inbox_rows(postgres_dsn, space) == 0
    assert find_spaces(postgres_dsn, space_pattern=space) == []  # nothing for a worker to do
