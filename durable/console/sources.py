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
parameters`): checked before anything is sent, with the validator tools' calls are checked with
(`durable.tools.arguments.check_edit`, which `durable.remote` uses too).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

import anyio
import anyio.to_thread
from attrs import define

from .. import codec, records as r
from .._frozen import evolve
from ..errors import EditRejected
from ..storage import rows
from ..storage.sqlite import inbox
from ..storage.sqlite.lock import wal_write_locked
from ..storage.sqlite.reader import SessionReader, owner_of
from ..storage.texts import join_json, join_live
from ..tools.arguments import check_edit
from .views import Recovery, entry_data, session_state, task_data, warm_prices

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


def waiting_slot(lives: Iterable[r.Live], call_id: str) -> r.ApprovalSlot | None:
    """The approval slot of call `call_id` in the live documents `lives`, if one waits."""
    return next((slot for live in lives for slot in live.approvals if slot.call_id == call_id), None)


# where an answer's text starts in a live document's JSON as the codec writes it (an object's keys
# in their fields' order, no spaces): its opening quote is the match's last character
_ANSWER_TEXT = re.compile(r'"generation":\{"attempt":\d+,"message":\{"text":"')
_DECODER = json.JSONDecoder()
_MARK = "\x00durable console\x00"


def _string_at(body: str, start: int) -> tuple[str, int] | None:
    """The JSON string whose opening quote is at `start` in `body`, and where it ends."""
    try:
        value, end = _DECODER.raw_decode(body, start)
    except ValueError:
        return None
    return (value, end) if isinstance(value, str) else None


def _answer_span(body: str, doc: r.Live) -> tuple[int, int] | None:
    """Where the JSON string of the answer's text (`generation.message.text`) is in `body`, the
    row `doc` was decoded from: (its opening quote, past its closing one); None when there is no
    answer or the place is not sure. The place found is checked: the row with another string
    there decodes to that string as the answer's text."""
    if doc.generation is None or not body.startswith("{"):  # a sealed row: decoded whole
        return None
    match = _ANSWER_TEXT.search(body)
    found = _string_at(body, match.end() - 1) if match is not None else None
    if match is None or found is None or found[0] != doc.generation.message.text or found[0] == _MARK:
        return None
    start, end = match.end() - 1, found[1]
    try:
        marked = json.loads(body[:start] + json.dumps(_MARK) + body[end:])
        return (start, end) if marked["generation"]["message"]["text"] == _MARK else None
    except (ValueError, LookupError, TypeError):
        return None


def _grown_text(old: str, span: tuple[int, int], new: str) -> tuple[str, int] | None:
    """When the row `new` is the row `old` but for the JSON string at `span` (the answer's text,
    `_answer_span`): that string's new value and where it ends in `new`; else None."""
    start, end = span
    stop = len(new) - (len(old) - end)  # where the string would end in `new`
    if stop <= start or new[:start] != old[:start] or new[stop:] != old[end:] or new[start] != '"':
        return None
    found = _string_at(new, start)
    return found if found is not None and found[1] == stop else None


def _joined_data(data: Mapping[str, Any], texts: Mapping[str, str]) -> dict[str, Any]:
    """A live document's data (`codec.to_data`) with its long texts joined back: `join_json` on
    a copy of the parts it changes (`data` is left as it is)."""
    out = dict(data)
    gen = out.get("generation")
    if isinstance(gen, dict) and isinstance(gen.get("message"), dict):
        out["generation"] = {**gen, "message": dict(gen["message"])}
    if out.get("tools"):
        out["tools"] = [dict(slot) if isinstance(slot, dict) else slot for slot in out["tools"]]
    result: dict[str, Any] = join_json(out, "live", texts)
    return result


@define
class _Doc:
    """A conversation's live document as last read."""

    key: tuple[str, object]  # its row: body and long texts
    doc: r.Live
    data: Any  # `codec.to_data(doc)`
    span: tuple[int, int] | None = None  # the answer's text in the body (`_answer_span`), when inline
    base: tuple[r.Live, Any] | None = None  # with long texts kept apart: the body alone, decoded and as data


class LiveDocs:
    """The live documents of a session file as the console last read them: each decoded and
    turned into data only when its row changed, and then only as much as changed. A partial
    answer is committed every 0.1 s, and its row changes only in the answer's text: inline (a
    short answer), that text alone is read and put in place of the old one (`_grown_text`); kept
    apart (`durable.storage.texts`), the row's body is the same and only the texts are joined
    again. Either way the document and its data are the same as decoding the row whole gives."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.docs: dict[str, _Doc] = {}  # by conversation
        self.decoded = 0  # rows decoded whole
        self._usage: r.UsageTotals | None = None

    def usage(self) -> r.UsageTotals:
        """The documents' usage summed (in the order of their conversations), summed again only
        when one changed."""
        if self._usage is None:
            self._usage = sum((self.docs[cid].doc.usage for cid in sorted(self.docs)), r.EMPTY_USAGE)
        return self._usage

    def update(self, found: Iterable[tuple[str, str, dict[str, str] | None]]) -> list[str]:
        """Take the rows (conversation, body, long texts) read now, every one the file holds;
        returns the conversations whose document changed (a deleted one's is dropped)."""
        changed = []
        found = list(found)
        gone = self.docs.keys() - {cid for cid, _, _ in found}
        for cid in gone:
            del self.docs[cid]
            self._usage = None
        for cid, body, texts in found:
            key = (body, tuple(sorted(texts.items())) if texts else None)
            known = self.docs.get(cid)
            if known is not None and known.key == key:
                continue
            changed.append(cid)
            fresh = self._again(known, key, texts) if known is not None else None
            if fresh is None:
                fresh = self._decoded(cid, key, texts)
                if known is None or known.doc.usage != fresh.doc.usage:
                    self._usage = None
            self.docs[cid] = fresh
        return changed

    def _again(self, known: _Doc, key: tuple[str, object], texts: dict[str, str] | None) -> _Doc | None:
        """The document of the row `key` from `known`, when the row changed only in its answer's
        text (inline) or in its long texts (kept apart); None when it must be decoded whole."""
        body = key[0]
        if texts and known.base is not None and known.key[0] == body:
            doc, data = known.base
            return _Doc(key, join_live(doc, texts), _joined_data(data, texts), base=known.base)
        gen = known.doc.generation
        grown = (_grown_text(known.key[0], known.span, body)
                 if known.span is not None and texts is None and known.key[1] is None else None)
        if grown is None or gen is None or known.span is None:
            return None
        text, stop = grown
        data = dict(known.data)
        data["generation"] = gen_data = dict(data["generation"])
        gen_data["message"] = {**gen_data["message"], "text": text}
        return _Doc(key, evolve(known.doc, generation=evolve(gen, message=evolve(gen.message, text=text))), data,
                    span=(known.span[0], stop))

    def _decoded(self, cid: str, key: tuple[str, object], texts: dict[str, str] | None) -> _Doc:
        self.decoded += 1
        body = key[0]
        if not texts:
            doc = rows.live(body, cid, self.location)
            return _Doc(key, doc, codec.to_data(doc), span=_answer_span(body, doc))
        base = rows.live(body, cid, self.location)
        doc = join_live(base, texts)  # as `rows.live(body, cid, location, texts)`
        return _Doc(key, doc, codec.to_data(doc), base=(base, codec.to_data(base)))


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

    def __init__(self, path: str, *, key: bytes | str | None = None) -> None:
        self.path = os.path.realpath(path) if os.path.islink(path) else path
        self._key = key  # an encrypted file's (`durable console --key-file`); a plain file ignores it
        self.name = os.path.basename(path)
        self._recovery: dict[str, tuple[int, Recovery]] = {}  # conversation -> last seq read, its notes
        self._cached: tuple[object, dict[str, Any]] | None = None
        self._lock: anyio.Lock | None = None  # made on the loop that serves
        self._docs = LiveDocs(self.path)
        self._tasks: dict[int, tuple[object, dict[str, Any]]] = {}  # task -> its row, as data
        self._counts: dict[str, int] = {}
        self._spans_at = 0.0
        self._owner: tuple[float, str] | None = None
        self._settled: object = None  # the files' times and sizes when the WAL lock was last seen free
        with self._reader():  # refused now, naming the file, when it is no session (or the key is wrong)
            pass
        warm_prices()

    def _reader(self) -> SessionReader:
        """A reader of the file (with its key, when it is encrypted)."""
        return SessionReader(self.path, key=self._key)

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
        # commit the WAL shows, so the look after it reads again. /proc/locks is read only when
        # the files changed since the lock was last seen free: a commit written since then has
        # changed them, in a later tick (the lock is looked at only `_RECENT_NS` past a change).
        files = (db, wal, partials)
        unsettled = recent
        if not recent and files != self._settled:
            locked = wal_write_locked(self.path)
            unsettled = locked is True
            self._settled = files if locked is False else None
        return (*files, time.monotonic_ns() if unsettled else 0)

    async def state(self) -> dict[str, Any]:
        self._lock = self._lock or anyio.Lock()
        async with self._lock:  # one read per version, however many pages look
            version = self._version()
            if self._cached is None or self._cached[0] != version:
                self._cached = (version, await anyio.to_thread.run_sync(_one_at_a_time, self.path,
                                                                        self._read_state))
            return self._cached[1]

    def _live(self, reader: SessionReader) -> list[str]:
        """Read the live documents (`LiveDocs`); returns the conversations whose document changed."""
        return self._docs.update(reader.live_rows())

    def _task_rows(self, reader: SessionReader) -> list[dict[str, Any]]:
        """The tasks shown (`task_data`), each decoded again only when its row changed."""
        found: dict[int, tuple[object, dict[str, Any]]] = {}
        for tid, body, texts in reader.task_rows(ended_last=ENDED_SHOWN):
            key = (body, tuple(sorted(texts.items())) if texts else None)
            known = self._tasks.get(tid)
            found[tid] = known if known is not None and known[0] == key else (
                key, task_data(rows.task(body, tid, self.path, texts)))
        self._tasks = found
        return [data for _, data in found.values()]

    def _read_state(self) -> dict[str, Any]:
        now = time.monotonic()
        if self._owner is None or now - self._owner[0] > 1.0:
            owner = owner_of(self.path)
            who = "not open" if owner is None else (
                "owned by another process" if owner < 0 else f"owned by process {owner}")
            self._owner = (now, who)
        with self._reader() as reader, reader.snapshot():
            changed = self._live(reader)
            # Entries are counted again for the conversations whose live document changed; for all
            # of them when none changed (a commit that only appended entries) or once a second.
            every = not changed or now - self._spans_at > 1.0
            if every:
                self._spans_at = now
            story = Recovery()
            looked = reader.conversation_ids() if every else changed
            if every:  # conversations deleted from the file leave the page and memory
                for gone in self._counts.keys() - set(looked):
                    del self._counts[gone]
                    self._recovery.pop(gone, None)
            for cid in looked:
                count, last_seq = reader.entry_span(cid)
                self._counts[cid] = count
                seen, notes = self._recovery.get(cid, (0, Recovery()))
                if last_seq > seen:
                    notes.read(reader.entries(cid, seen + 1))
                    self._recovery[cid] = (last_seq, notes)
            for _, notes in self._recovery.values():
                story.notes += notes.notes
            docs = self._docs.docs
            return session_state(name=self.name, location=self.path, owner=self._owner[1],
                                 live={cid: d.doc for cid, d in docs.items()},
                                 live_data={cid: d.data for cid, d in docs.items()},
                                 tasks=(), task_rows=self._task_rows(reader), usage=self._docs.usage(),
                                 entry_counts=self._counts, recovery=story)

    async def entries(self, conversation_id: str, after: int) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            with self._reader() as reader:
                return [entry_data(e) for e in reader.entries(conversation_id, after + 1, last=FIRST_SHOWN)]
        return await anyio.to_thread.run_sync(_one_at_a_time, self.path, read)

    async def decide(self, call_id: str, *, approve: bool, arguments: str | None, reason: str) -> None:
        if approve and arguments is not None:
            await self.state()  # the live documents as committed now
            check_edit(waiting_slot((d.doc for d in self._docs.docs.values()), call_id), call_id, arguments)
        def put() -> None:
            with self._reader():  # an encrypted file's key registered while the decision is put
                inbox.put_decision(self.path, call_id, approve=approve, arguments=arguments, reason=reason)
        await anyio.to_thread.run_sync(_one_at_a_time, self.path, put)


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
