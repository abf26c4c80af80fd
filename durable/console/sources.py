"""Where the console reads a session from: a file another process owns, or a running harness.

`FileSource(path)` (standalone, `durable console PATH`) reads through `SessionReader`: read-only,
without the lock, a reader per look, so that the owner's clean close still folds its WAL back.
It notices commits by the file's and its WAL's size and time (`version`: no connection held
between looks), and opens one connection to a file at a time (`_one_at_a_time`: closing any
descriptor of a file drops every POSIX lock the process holds on it). A decision goes into the
file's inbox (`durable.storage.sqlite.inbox`), in a short transaction of its own, the only write
the console ever makes to a session file.
`HarnessSource(h)` (embedded, `durable.console.app(h)`) reads what the harness committed and
decides through `h.approve` / `h.deny`. Both give the page the same data (`durable.console.views`)
and both raise `ApprovalRejected` when a decision is refused (decided meanwhile), `EditRejected`
when edited arguments do not match the tool's schema (kept with the waiting call, `ApprovalSlot.
parameters`): checked here, before anything is sent, with the validator tools' calls are checked with.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

import anyio
import anyio.to_thread

from .. import codec, records as r
from ..errors import ApprovalRejected
from ..storage import rows
from ..storage.sqlite import inbox
from ..storage.sqlite.lock import wal_write_locked
from ..storage.sqlite.reader import SessionReader, owner_of
from ..tools.arguments import check_value
from .views import Recovery, entry_data, session_state

T = TypeVar("T")
_RECENT_NS = 50_000_000  # a file changed this recently is looked at again (longer than a kernel tick)
ENDED_SHOWN = 20  # ended tasks shown besides the live ones
FIRST_SHOWN = 500  # entries a page is sent at once: the newest (a long conversation is not sent whole)


class Source(Protocol):
    """What the web app needs of a session."""

    name: str

    async def version(self) -> object:
        """Something that changes when the session commits (cheap: polled)."""
        ...

    async def state(self) -> dict[str, Any]:
        ...

    async def entries(self, conversation_id: str, after: int) -> list[dict[str, Any]]:
        ...

    async def decide(self, call_id: str, *, approve: bool, arguments: str | None, reason: str) -> None:
        ...


class EditRejected(ApprovalRejected):
    """Edited arguments of a tool call do not match the tool's schema (or are no JSON object):
    refused by the console before anything is sent (HTTP 400); the message names the call, the
    tool and each problem (the JSON path and the failed keyword)."""


def check_edit(slot: r.ApprovalSlot | None, call_id: str, arguments: str | None) -> Mapping[str, Any] | None:
    """The edited `arguments` (JSON text, None: the model's) of the waiting call `slot` as an
    object, once valid against the tool's schema kept with it (when it is; rows written before
    it was kept are checked by the owner alone). Raises `EditRejected`."""
    value = _arguments(arguments, call_id)
    if value is None or slot is None or slot.parameters is None:
        return value
    _, problems = check_value(json.loads(slot.parameters), json.dumps(value, ensure_ascii=False))
    if problems:
        raise EditRejected(f"Tool call {call_id} ({slot.tool}) was not approved: Tool {slot.tool}: invalid "
                           f"arguments: " + "; ".join(problems), call_id=call_id, tool=slot.tool)
    return value


def waiting_slot(lives: Iterable[r.Live], call_id: str) -> r.ApprovalSlot | None:
    """The approval slot of call `call_id` in the live documents `lives`, if one waits."""
    return next((slot for live in lives for slot in live.approvals if slot.call_id == call_id), None)


def _arguments(arguments: str | None, call_id: str) -> Mapping[str, Any] | None:
    if arguments is None:
        return None
    try:
        value = json.loads(arguments)
    except ValueError as exc:
        raise EditRejected(f"Tool call {call_id} was not approved: the edited arguments are not JSON ({exc})",
                           call_id=call_id) from None
    if not isinstance(value, dict):
        raise EditRejected(f"Tool call {call_id} was not approved: the edited arguments are not a JSON object",
                           call_id=call_id)
    return value


_FILE_LOCKS: dict[str, threading.Lock] = {}


def _one_at_a_time(path: str, fn: Callable[[], T]) -> T:
    """`fn()` (which opens connections to the file at `path`) while no other thread of this
    process has one open: opening a reader reads the file's header with a descriptor of its own,
    and closing it would drop the read locks of another connection to the file (POSIX locks are
    the process's), letting the owner reuse WAL frames that connection is reading."""
    with _FILE_LOCKS.setdefault(path, threading.Lock()):
        return fn()


class FileSource:
    """A session file another process owns (or nobody does), read-only but for its inbox."""

    def __init__(self, path: str) -> None:
        self.path = os.path.realpath(path) if os.path.islink(path) else path
        self.name = os.path.basename(path)
        self._recovery: dict[str, tuple[int, Recovery]] = {}  # conversation -> last seq read, its notes
        self._cached: tuple[object, dict[str, Any]] | None = None
        self._lock: anyio.Lock | None = None  # made on the loop that serves
        self._docs: dict[str, tuple[object, r.Live, Any]] = {}  # conversation -> its row, decoded, as data
        self._counts: dict[str, int] = {}
        self._spans_at = 0.0
        self._owner: tuple[float, str] | None = None
        with SessionReader(self.path):  # refused now, naming the file, when it is no session
            pass

    async def version(self) -> object:
        return self._version()

    def _version(self) -> object:
        """The file's, its WAL's and its partials' time and size; and, while any changed within the
        last `_RECENT_NS` or a commit is being written, a value new at each look: a file's time is
        a kernel tick and a WAL written again from its start keeps its size, so a commit in the
        tick of the last look would otherwise look like no change, and not be shown until the
        next commit; and a commit's frames change the WAL before the commit is visible."""
        def stat(p: str) -> tuple[int, int]:
            try:
                st = os.stat(p)
            except OSError:
                return (0, 0)
            return (st.st_mtime_ns, st.st_size)
        # a streamed answer's partials may grow only in `<file>-partials` (`storage.sqlite.partials`)
        db, wal, partials = stat(self.path), stat(self.path + "-wal"), stat(self.path + "-partials")
        recent = time.time_ns() - max(db[0], wal[0], partials[0]) < _RECENT_NS
        # A commit's frames change the WAL before it is fsynced and visible (the owner's barrier
        # commits are at FULL): while a write transaction holds the WAL lock, a read may miss the
        # commit the WAL shows, so the look after it reads again.
        unsettled = recent or wal_write_locked(self.path) is True
        return (db, wal, partials, time.monotonic_ns() if unsettled else 0)

    async def state(self) -> dict[str, Any]:
        self._lock = self._lock or anyio.Lock()
        async with self._lock:  # one read per version, however many pages look
            version = self._version()
            if self._cached is None or self._cached[0] != version:
                self._cached = (version, await anyio.to_thread.run_sync(_one_at_a_time, self.path,
                                                                        self._read_state))
            return self._cached[1]

    def _live(self, reader: SessionReader) -> list[str]:
        """Read the live documents, each decoded again only when its row changed; returns the
        conversations whose document changed."""
        changed = []
        for cid, body, texts in reader.live_rows():
            key = (body, tuple(sorted(texts.items())) if texts else None)
            known = self._docs.get(cid)
            if known is None or known[0] != key:
                doc = rows.live(body, cid, self.path, texts)
                self._docs[cid] = (key, doc, codec.to_data(doc))
                changed.append(cid)
        return changed

    def _read_state(self) -> dict[str, Any]:
        now = time.monotonic()
        if self._owner is None or now - self._owner[0] > 1.0:
            owner = owner_of(self.path)
            who = "not open" if owner is None else (
                "owned by another process" if owner < 0 else f"owned by process {owner}")
            self._owner = (now, who)
        with SessionReader(self.path) as reader, reader.snapshot():
            changed = self._live(reader)
            # Entries are counted again for the conversations whose live document changed; for all
            # of them when none changed (a commit that only appended entries) or once a second.
            every = not changed or now - self._spans_at > 1.0
            if every:
                self._spans_at = now
            story = Recovery()
            for cid in (reader.conversation_ids() if every else changed):
                count, last_seq = reader.entry_span(cid)
                self._counts[cid] = count
                seen, notes = self._recovery.get(cid, (0, Recovery()))
                if last_seq > seen:
                    notes.read(reader.entries(cid, seen + 1))
                    self._recovery[cid] = (last_seq, notes)
            for _, notes in self._recovery.values():
                story.notes += notes.notes
            return session_state(name=self.name, location=self.path, owner=self._owner[1],
                                 live={cid: d[1] for cid, d in self._docs.items()},
                                 live_data={cid: d[2] for cid, d in self._docs.items()},
                                 tasks=reader.tasks(ended_last=ENDED_SHOWN), entry_counts=self._counts,
                                 recovery=story)

    async def entries(self, conversation_id: str, after: int) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            with SessionReader(self.path) as reader:
                return [entry_data(e) for e in reader.entries(conversation_id, after + 1, last=FIRST_SHOWN)]
        return await anyio.to_thread.run_sync(_one_at_a_time, self.path, read)

    async def decide(self, call_id: str, *, approve: bool, arguments: str | None, reason: str) -> None:
        if approve and arguments is not None:
            await self.state()  # the live documents as committed now
            check_edit(waiting_slot((d[1] for d in self._docs.values()), call_id), call_id, arguments)
        await anyio.to_thread.run_sync(_one_at_a_time, self.path, lambda: inbox.put_decision(
            self.path, call_id, approve=approve, arguments=arguments, reason=reason))


class HarnessSource:
    """A running harness of this process (`durable.console.app(h)`)."""

    def __init__(self, h: Any, name: str | None = None) -> None:
        self.h = h
        self.name = name or os.path.basename(h.storage.location)
        self._recovery: dict[str, tuple[int, Recovery]] = {}
        self._lock: anyio.Lock | None = None

    async def version(self) -> object:
        session = self.h.session
        convs = tuple((cid, c.last_seq, id(c.committed_live)) for cid, c in session.convs.items())
        return (session.commit_count, convs)

    async def state(self) -> dict[str, Any]:
        h = self.h
        self._lock = self._lock or anyio.Lock()
        async with self._lock:
            counts: dict[str, int] = {}
            story = Recovery()
            live: dict[str, r.Live] = {}
            for cid, conv in list(h.session.convs.items()):
                live[cid] = conv.committed_live
                seen, notes = self._recovery.get(cid, (0, Recovery()))
                if conv.last_seq > seen:
                    found = await h.conversation(cid).entries(seen + 1)
                    notes.read(found)
                    seen = found[-1].seq if found else seen
                    self._recovery[cid] = (seen, notes)
                counts[cid] = seen
                story.notes += notes.notes
            live_tasks = list(h.session.tasks.values())
            ended = await h.tasks(state="terminal")
            tasks = sorted({t.id: t for t in [*ended[-ENDED_SHOWN:], *live_tasks]}.values(), key=lambda t: t.id)
            schemas = {tool.name: tool.parameters for tool in h.tools}
            return session_state(name=self.name, location=h.storage.location, owner=f"this process ({os.getpid()})",
                                 live=live, tasks=tasks, entry_counts=counts, recovery=story, schemas=schemas,
                                 prices=h.settings.prices)

    async def entries(self, conversation_id: str, after: int) -> list[dict[str, Any]]:
        conv = self.h.session.convs.get(conversation_id)
        first = max(after + 1, conv.last_seq - FIRST_SHOWN + 1) if conv is not None else after + 1
        return [entry_data(e) for e in await self.h.conversation(conversation_id).entries(first)]

    async def decide(self, call_id: str, *, approve: bool, arguments: str | None, reason: str) -> None:
        if approve:
            lives = (c.committed_live for c in list(self.h.session.convs.values()))
            await self.h.approve(call_id, check_edit(waiting_slot(lives, call_id), call_id, arguments))
        else:
            await self.h.deny(call_id, reason)


__all__ = ["EditRejected", "FileSource", "HarnessSource", "Source", "check_edit", "waiting_slot"]
