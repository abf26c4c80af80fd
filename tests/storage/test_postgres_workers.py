"""The engine under leases, and workers (`durable worker`) taking over PostgreSQL spaces.

In process: a lost lease breaks the harness (every wait ends with `LockLost`); nothing external
starts past the lease deadline. Real processes (pg_worker_app.py as host and as the worker's app,
`python -m durable.cli worker`): a SIGKILLed host's space is taken over by a worker that finishes
its work, the interrupted tool charged once; N workers on K spaces with one killed, each
interrupted task charged exactly once; a host SIGSTOPped mid-tool while a worker finishes its work
learns after SIGCONT that it lost the lease and writes nothing (the store alone:
test_postgres_leases). Leases of 1 s; waits are for lines the processes print or rows the server
holds, never for time to pass.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import uuid

import anyio
import anyio.to_thread
import psycopg
import pytest

from durable import open_harness
from durable.tools import define_tool
from durable.errors import LockLost
from durable.models.faux import FauxModel, call, hang, reply
from durable.records import Answered
from durable.settings import Settings
from durable.storage import PostgresStorage
from durable.testing.invariants import check_invariants, load_session

HERE = os.path.dirname(__file__)
APP = os.path.join(HERE, "pg_worker_app.py")
LEASE = 1.0

pytestmark = pytest.mark.anyio


class Proc:
    """A child process whose stdout is read line by line."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, bufsize=1,
                                     env={**os.environ, "PYTHONPATH": HERE, **env})
        self.lines: list[str] = []

    async def expect(self, prefix: str, within: float = 30) -> str:
        """The next line starting with `prefix` (others are kept in `lines`)."""
        with anyio.fail_after(within, reason=f"no line {prefix!r} from {self.proc.pid}: {self.lines}"):
            while True:
                line = await anyio.to_thread.run_sync(self.proc.stdout.readline)  # type: ignore[union-attr]
                assert line, f"process {self.proc.pid} ended ({self.proc.poll()}) before {prefix!r}: {self.lines}"
                self.lines.append(line.rstrip("\n"))
                if line.startswith(prefix):
                    return line.rstrip("\n")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def procs():
    made: list[Proc] = []
    yield made
    for p in made:
        p.kill()


def worker(dsn: str, pattern: str, calls: str, *, hang_tools: bool) -> Proc:
    return Proc([sys.executable, "-m", "durable.cli", "worker", "--dsn", dsn, "--app", "pg_worker_app:make_app",
                 "--space-pattern", pattern, "--lease", str(LEASE), "--poll", "0.1"],
                {"DURABLE_TEST_CALLS": calls, "DURABLE_TEST_HANG": "1" if hang_tools else "0"})


async def answered(dsn: str, spaces: list[str]) -> None:
    """Until every submission of `spaces` is answered (`done` on the server)."""
    with psycopg.connect(dsn, autocommit=True) as conn, anyio.fail_after(60):
        while conn.execute("SELECT count(*) FROM durable.submissions WHERE space = ANY(%s) AND status = 'done'",
                           (spaces,)).fetchone()[0] < len(spaces):
            await anyio.sleep(0.05)


async def host_in_a_tool(dsn: str, space: str, calls: str, procs: list[Proc]) -> tuple[Proc, str]:
    """A host process (pg_worker_app.py) on `space` once its submission's first tool is running
    (it hangs); returns the process and the submission's id."""
    host = Proc([sys.executable, APP, "host", dsn, space, str(LEASE)],
                {"DURABLE_TEST_CALLS": calls, "DURABLE_TEST_HANG": "1"})
    procs.append(host)
    sid = (await host.expect("submitted")).split()[1]
    await host.expect(f"tool started {space} 1")
    return host, sid


def charged(space_image, kind: str) -> list[int]:
    return [t.restarts for t in sorted(space_image.tasks.values(), key=lambda t: t.id) if t.kind == kind]


# ----------------------------------------------------------------------------- in process


async def test_a_lost_lease_stops_the_harness_and_ends_every_wait_with_lock_lost(postgres_dsn):
    space = f"eng-{uuid.uuid4().hex[:10]}"
    started = anyio.Event()

    async def slow(args, api, ctx):
        started.set()
        await anyio.sleep_forever()

    tool = define_tool("slow", "", {"type": "object"}, replay="safe", execute=slow)
    model = FauxModel([reply("", tool_calls=[call("slow", {})]), reply("done")])
    store = PostgresStorage(postgres_dsn, space, lease_seconds=LEASE)
    with pytest.raises(LockLost) as at_close:  # the clean close cannot write its tasks back either
        async with open_harness(store, model=model, tools=[tool], settings=Settings(check_integrity=False)) as h:
            handle = await h.root.submit("go")
            await started.wait()
            with psycopg.connect(postgres_dsn, autocommit=True) as conn:  # another owner took the space over
                conn.execute("UPDATE durable.leases SET epoch = epoch + 1 WHERE space = %s", (space,))
            with anyio.fail_after(10), pytest.raises(LockLost) as lost:
                await handle.wait()
    assert at_close.value is store.lease_lost is lost.value
    # (the epoch was bumped in place: the row still names this store as holder)
    assert str(lost.value) == (f"This store lost its lease on {store.location}: it was taken over by {store.owner} "
                               f"(process {os.getpid()} on host {socket.gethostname()}, epoch 2). It commits "
                               f"nothing more; open the space again to go on")


async def test_no_model_request_starts_past_the_lease_deadline_and_the_wait_ends_when_the_lease_is_lost(
        postgres_dsn):
    space = f"eng-{uuid.uuid4().hex[:10]}"
    model = FauxModel([reply("never sent")])
    store = PostgresStorage(postgres_dsn, space, lease_seconds=LEASE)
    with pytest.raises(LockLost):  # the clean close cannot write its tasks back either
        async with open_harness(store, model=model, settings=Settings(check_integrity=False)) as h:
            store.lease_deadline = lambda: 0.0  # type: ignore[method-assign]  # as if renewals stopped landing
            handle = await h.root.submit("go")
            with psycopg.connect(postgres_dsn, autocommit=True) as conn:
                conn.execute("UPDATE durable.leases SET epoch = epoch + 1 WHERE space = %s", (space,))
            with anyio.fail_after(10), pytest.raises(LockLost):
                await handle.wait()
    assert model.calls == 0


# ----------------------------------------------------------------------------- processes


async def test_a_killed_host_s_space_is_taken_over_by_a_worker_that_finishes_its_work(postgres_dsn, tmp_path, procs):
    prefix = f"w1-{uuid.uuid4().hex[:8]}-"
    space, calls = prefix + "a", str(tmp_path / "calls")
    host, sid = await host_in_a_tool(postgres_dsn, space, calls, procs)
    host.kill()  # SIGKILL mid-tool
    w = worker(postgres_dsn, prefix + "%", calls, hang_tools=False)
    procs.append(w)
    await w.expect(f"taken {space}")
    await w.expect(f"released {space}")
    await answered(postgres_dsn, [space])
    image = load_session(PostgresStorage(postgres_dsn, space))
    assert check_invariants(image, acknowledged=[sid], clean_close=True, quiescent=True) == []
    assert isinstance(image.submissions[sid].status, Answered)
    # The interrupted (safe) tool: charged once by the takeover (its second run is attempt 2), run
    # again; the generation that waited for it: not charged (restarts clear on progress, so the
    # attempts the tool saw are the witness).
    with open(calls, encoding="utf-8") as f:
        assert f.read().splitlines() == [f"{host.proc.pid} {space} 1 1", f"{w.proc.pid} {space} 1 2"]
    assert charged(image, "generation") == [0]


async def test_of_n_workers_on_k_spaces_one_killed_each_interrupted_task_is_charged_exactly_once(
        postgres_dsn, tmp_path, procs):
    prefix = f"wk-{uuid.uuid4().hex[:8]}-"
    spaces, calls = [f"{prefix}{i}" for i in range(3)], str(tmp_path / "calls")
    for space in spaces:  # a released space with a queued input: work for the workers
        async with open_harness(PostgresStorage(postgres_dsn, space), model=FauxModel([hang()]),
                                settings=Settings(check_integrity=False)) as h:
            await h.root.submit(f"work {space}")
    first = worker(postgres_dsn, prefix + "%", calls, hang_tools=True)
    procs.append(first)
    for _ in spaces:
        await first.expect("tool started")
    others = [worker(postgres_dsn, prefix + "%", calls, hang_tools=False) for _ in range(2)]
    procs.extend(others)
    first.kill()  # SIGKILL with a tool running in each space
    await answered(postgres_dsn, spaces)
    for space in spaces:
        image = load_session(PostgresStorage(postgres_dsn, space))
        assert check_invariants(image, quiescent=True) == [], space
        assert charged(image, "generation") == [0], space
    with open(calls, encoding="utf-8") as f:
        lines = [line.split() for line in f.read().splitlines()]
    for space in spaces:  # run by the killed worker (attempt 1), then once more, charged once (attempt 2)
        runs = [(pid, attempt) for pid, s, _, attempt in lines if s == space]
        assert len(runs) == 2 and runs[0] == (str(first.proc.pid), "1"), (space, lines)
        assert runs[1][0] in {str(o.proc.pid) for o in others} and runs[1][1] == "2", (space, lines)


async def test_a_host_stopped_past_its_lease_while_a_worker_finishes_its_work_writes_nothing_when_continued(
        postgres_dsn, tmp_path, procs):
    prefix = f"ws-{uuid.uuid4().hex[:8]}-"
    space, calls = prefix + "a", str(tmp_path / "calls")
    host, sid = await host_in_a_tool(postgres_dsn, space, calls, procs)
    os.kill(host.proc.pid, signal.SIGSTOP)  # paused mid-tool, past its lease
    try:
        w = worker(postgres_dsn, prefix + "%", calls, hang_tools=False)
        procs.append(w)
        await w.expect(f"released {space}")
        store = PostgresStorage(postgres_dsn, space)
        finished = store.stored_rows()
    finally:
        os.kill(host.proc.pid, signal.SIGCONT)
    lost = await host.expect("lost ")
    assert lost.startswith(f"lost This store lost its lease on {store.location}: it was taken over by ")
    assert await host.expect("closed") == "closed without writing"  # its clean close was refused too
    assert host.proc.wait() == 0
    assert store.stored_rows() == finished  # the old owner committed nothing after it was continued
    image = load_session(store)
    assert check_invariants(image, acknowledged=[sid], clean_close=True, quiescent=True) == []
    assert isinstance(image.submissions[sid].status, Answered)
