"""The child process of test_disk_full: a 300 kB answer streamed into a session file that may not
grow past a limit, then the limit lifted and the session opened again.

Run as `python disk_full_child.py <session file> <limit in bytes>`. The process's file size limit
(`RLIMIT_FSIZE`, with SIGXFSZ ignored: SQLite then meets EFBIG, as a full disk) stands for a full
disk without root; it is lifted (the soft limit raised to the hard one) for the second harness.
The event loop runs on trio's MockClock (autojump), so `disk_full_patience` (the default, 60 s)
passes in virtual time and the instants printed are exact. Prints one JSON object per line: each
report, the outcome of the first wait, the moment the first harness was closed, then the second
harness's outcome and the invariant checker's violations.
"""

from __future__ import annotations

import base64
import json
import random
import resource
import signal
import sys
from typing import Any

import trio
import trio.testing

import durable
from durable.models import FauxModel, faux
from durable.storage import SQLiteStorage
from durable.testing import FakeClock, check_invariants
from durable.testing.quiesce import settle

# Text that does not compress: a long body of it is stored as it is (`durable.storage.packing`).
ANSWER = base64.b64encode(random.Random(0).randbytes(300_000)).decode()[:300_000]


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def main(path: str, limit: int) -> None:
    model = FauxModel([faux.reply(ANSWER), faux.reply(ANSWER)], tokens_per_second=2000, token_size=1000)
    clock = FakeClock()
    settings = durable.Settings(progress=durable.Progress(persist_within=0.02), check_integrity=False,
                                retry=durable.RetryPolicy(base_delay=1.0))

    def report(event: Any) -> None:
        emit(report=event.message, topic=getattr(event, "topic", None), at=trio.current_time())

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    async with durable.open_harness(SQLiteStorage(path, inbox_poll_seconds=None), model=model, settings=settings,
                                    clock=clock, report=report) as h:
        sub = await h.root.submit("Write a long answer", id="long")
        try:
            status: Any = await sub.wait()
            emit(outcome="answered", status=repr(status), at=trio.current_time())
        except durable.DurableError as exc:
            emit(outcome=type(exc).__name__, message=str(exc), at=trio.current_time())
            try:  # the harness stopped: it starts no more work
                await h.root.submit("Another question")
                emit(then="accepted")
            except durable.DurableError as again:
                emit(then=type(again).__name__, same=str(again) == str(exc))
    emit(closed=True, at=trio.current_time(), requests=len(model.requests))

    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))  # space is back
    async with durable.open_harness(SQLiteStorage(path, inbox_poll_seconds=None), model=model, settings=settings,
                                    clock=clock, report=report) as h:
        settled = await settle(h, clock)
        if not settled.quiescent:  # its wait would never end: the retry's timer is on the FakeClock
            emit(outcome="again", status="not settled", settled=repr(settled))
            return
        status = await h.root.submission("long").wait()
        emit(outcome="again", status=type(status).__name__, text_length=len(getattr(status, "text", "")),
             settled=repr(settled))
    emit(violations=check_invariants(path, acknowledged=["long"], clean_close=True))


if __name__ == "__main__":
    trio.run(main, sys.argv[1], int(sys.argv[2]), clock=trio.testing.MockClock(autojump_threshold=0))
