"""`durable.remote`: the host API from a process that does not own the space (issue 16).

A remote submission into a space a running harness owns is placed by that harness and answered
(`wait` returns the same `Answered(text, seq)` as the owner's handle); into a space nobody owns,
a worker finds it (an inbox input is live work) and answers it; an inbox row is placed exactly
once: taken but not committed (a crash) it is placed by the next owner, already placed it is
deleted, and each submit gives one user entry; an owner process SIGKILLed right before or right
after the commit that places an input leaves it answered once by a worker. Waits are for lines
the processes print and states the server holds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import anyio
import anyio.to_thread
import psycopg
import pytest

from durable import open_harness
from durable.errors import ServerUnavailable, UnknownSubmission
from durable.models.faux import reply
from durable.records import EMPTY_LIVE, Answered, Queued, UserEntry
from durable.remote import RemoteSpace
from durable.settings import Settings
from durable.storage import PostgresStorage
from durable.testing.scripts import by_input
from durable.worker import WorkerApp, find_spaces, run_space

HERE = os.path.dirname(__file__)
NO_CHECK = Settings(check_integrity=False)

pytestmark = pytest.mark.anyio


def new_space() -> str:
    return f"remote-{uuid.uuid4().hex[:10]}"


def model():  # answers "ping N" with "pong N"
    return by_input({f"ping {n}": [reply(f"pong {n}")] for n in range(20)})


def inbox_rows(dsn: str, space: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return int(conn.execute("SELECT count(*) FROM durable.inbox WHERE space = %s", (space,)).fetchone()[0])


async def lease_expired(dsn: str, space: str) -> None:
    """Until the space's lease has run out on the server's clock."""
    with psycopg.connect(dsn, autocommit=True) as conn, anyio.fail_after(10):
        while not conn.execute("SELECT expires_at < clock_timestamp() FROM durable.leases WHERE space = %s",
                               (space,)).fetchone()[0]:
            await anyio.sleep(0.05)


def user_entries(entries) -> list[str]:
    return [e.entry.text for e in entries if isinstance(e.entry, UserEntry)]


async def test_a_remote_submission_into_an_owned_space_is_answered_as_the_owner_sees_it(postgres_dsn):
    space = new_space()
    async with open_harness(PostgresStorage(postgres_dsn, space), model=model(), settings=NO_CHECK) as h, \
            RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        await h.resume()
        sid = await remote.submit("ping 1")
        with anyio.fail_after(10):
            status = await remote.wait(sid)
        owner_status = await h.root.submission(sid).wait()
        entries = await h.root.entries()
        assert status == owner_status == Answered("pong 1", entries[-1].seq)
        assert await remote.answer(sid) == "pong 1"
        assert user_entries(entries) == ["ping 1"]
        assert await remote.live() == h.root.live()
        assert inbox_rows(postgres_dsn, space) == 0


async def test_a_remote_client_in_another_process_gets_the_exact_answer(postgres_dsn):
    space = new_space()
    async with open_harness(PostgresStorage(postgres_dsn, space), model=model(), settings=NO_CHECK) as h:
        await h.resume()
        proc = await anyio.run_process([sys.executable, os.path.join(HERE, "pg_remote_child.py"), "submit",
                                        postgres_dsn, space, "ping 2"], check=False)
        out = proc.stdout.decode().splitlines()
        assert proc.returncode == 0, proc.stderr.decode()
        sid = out[0].removeprefix("submitted ")
        entries = await h.root.entries()
        assert out == [f"submitted {sid}", f"settled {Answered('pong 2', entries[-1].seq)!r}"]
        assert (await h.root.submission(sid).get()).text == "ping 2"


async def test_a_submission_to_a_space_nobody_owns_is_queued_then_answered_by_a_worker(postgres_dsn):
    space = new_space()
    async with RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        sid = await remote.submit("ping 3", conversation_id="side")
        assert await remote.status(sid) == Queued()
        assert (space, 0) in await anyio.to_thread.run_sync(find_spaces, postgres_dsn, space)
        with anyio.fail_after(20):
            await run_space(postgres_dsn, space, WorkerApp(model(), settings=NO_CHECK), idle_seconds=0.1)
            status = await remote.wait(sid)
        assert inbox_rows(postgres_dsn, space) == 0
        async with open_harness(PostgresStorage(postgres_dsn, space), model=model(), settings=NO_CHECK) as h:
            entries = await h.conversation("side").entries()
        assert status == Answered("pong 3", entries[-1].seq)
        assert user_entries(entries) == ["ping 3"]
        assert (await remote.live("side")).run is None
        assert await anyio.to_thread.run_sync(find_spaces, postgres_dsn, space) == []


async def test_every_submit_gives_one_user_entry_across_an_owner_crash_between_take_and_commit(postgres_dsn):
    space = new_space()
    async with RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        sids = [await remote.submit(f"ping {n}") for n in range(5)]
        # An owner takes the inbox and dies before placing anything: the rows stay.
        crashed = PostgresStorage(postgres_dsn, space, lease_seconds=0.5)
        await crashed.open()
        assert [s.id for s in await crashed.take_inbox(10)] == sids
        await crashed._stop(release=False)  # no release: the lease runs out, as a killed owner's would
        assert inbox_rows(postgres_dsn, space) == 5
        await lease_expired(postgres_dsn, space)
        # A retry of an input already placed must not place it twice (the owner deletes the row).
        async with open_harness(PostgresStorage(postgres_dsn, space), model=model(), settings=NO_CHECK) as h:
            await h.resume()
            more = [await remote.submit(f"ping {n}") for n in range(5, 8)]
            with anyio.fail_after(20):
                statuses = [await remote.wait(sid) for sid in [*sids, *more]]
            with psycopg.connect(postgres_dsn, autocommit=True) as conn:
                conn.execute("INSERT INTO durable.inbox (space, id, conversation_id, text, created_at) "
                             "VALUES (%s, %s, 'root', 'ping 0', 0)", (space, sids[0]))
            assert await h.storage.take_inbox(10) == []  # type: ignore[attr-defined]
            entries = await h.root.entries()
            # (inputs queued behind a run are answered together by the next run: same status)
            assert statuses == [await h.root.submission(sid).wait() for sid in [*sids, *more]]
        assert user_entries(entries) == [f"ping {n}" for n in range(8)]
        assert all(isinstance(s, Answered) for s in statuses)
        assert inbox_rows(postgres_dsn, space) == 0


async def test_remote_errors_name_the_space_and_the_server(postgres_dsn):
    space = new_space()
    async with RemoteSpace(postgres_dsn, space) as remote:
        with pytest.raises(UnknownSubmission) as unknown:
            await remote.status("sub_nope")
        assert str(unknown.value) == f"Submission sub_nope does not exist in {remote.location}"
        assert remote.location == f"space {space!r} on postgresql://{remote.server}"


async def test_follow_yields_the_document_now_then_the_changes_it_sees(postgres_dsn):
    space = new_space()
    async with open_harness(PostgresStorage(postgres_dsn, space), model=model(), settings=NO_CHECK) as h, \
            RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
        await h.resume()
        seen = []
        with anyio.fail_after(10):
            async for live in remote.follow():
                seen.append(live)
                if len(seen) == 1:
                    await remote.wait(await remote.submit("ping 4"))
                elif live == h.root.live():
                    break
        assert seen[0] == EMPTY_LIVE and seen[-1].run is None and len(seen) >= 2


async def test_a_server_that_cannot_be_reached_is_named_without_the_password():
    remote = RemoteSpace("postgresql://someone:s3cret@127.0.0.1:1/agents?connect_timeout=2", "tenant-1")
    with pytest.raises(ServerUnavailable) as refused:
        await remote.submit("hello")
    message = str(refused.value)
    assert message.startswith("Cannot connect to the PostgreSQL server 127.0.0.1:1/agents for space 'tenant-1': ")
    assert "s3cret" not in message and refused.value.location == "space 'tenant-1' on postgresql://127.0.0.1:1/agents"


@pytest.mark.parametrize("point", ["before_commit", "after_commit"])
async def test_an_owner_killed_around_the_commit_that_places_an_input_leaves_it_placed_once(postgres_dsn, point):
    space = new_space()
    child = subprocess.Popen([sys.executable, os.path.join(HERE, "pg_remote_child.py"), "owner", postgres_dsn, space,
                              point], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        assert child.stdout is not None
        with anyio.fail_after(20):
            assert await anyio.to_thread.run_sync(child.stdout.readline) == "ready\n"
            async with RemoteSpace(postgres_dsn, space, poll_seconds=0.02) as remote:
                sid = await remote.submit("ping 5")
                assert await anyio.to_thread.run_sync(child.stdout.readline) == f"dying {point}\n"
                assert await anyio.to_thread.run_sync(child.wait) == -signal.SIGKILL
                assert inbox_rows(postgres_dsn, space) == (1 if point == "before_commit" else 0)
                await lease_expired(postgres_dsn, space)
                # (killed after it, the placing commit's run was `running`: recovery charges it as
                # an interrupted model request, retried after a backoff the worker waits for)
                await run_space(postgres_dsn, space, WorkerApp(model(), settings=NO_CHECK), idle_seconds=10)
                status = await remote.wait(sid)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
    async with open_harness(PostgresStorage(postgres_dsn, space), model=model(), settings=NO_CHECK) as h:
        entries = await h.root.entries()
    assert status == Answered("pong 5", entries[-1].seq)
    assert user_entries(entries) == ["ping 5"]
    assert inbox_rows(postgres_dsn, space) == 0
