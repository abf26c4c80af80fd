"""The in-memory store: the storage protocol without a file, for fast tests.

It keeps the same encoded JSON the SQLite store writes and decodes it the same way, so it
accepts and refuses exactly the same values. One object stands for one "file": it can be closed
and opened again (what a reopen after a crash does), but only one owner may hold it at a time.
A commit applies a whole batch or nothing: the batch is encoded (the only step that can fail)
before anything is changed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import anyio

from .. import _loop, codec
from ..errors import CommitRefused, SessionLocked, StorageClosed
from ..records import Live, StoredEntry, Submission, Task
from ..tokens import NOT_SENT
from . import rows, sweep
from .held import HeldTexts
from .protocol import Batch, ConversationState, Opened, RawContext
from .retention import ROWS_PER_COMMIT, Ended, PruneReport, groups
from .rows import StoredRows, encode_batch, written_texts
from .texts import stream_texts


def _seqs(stored: dict[int, tuple[str, str, int]], lo: int, hi: int) -> list[int]:
    """The seqs of a conversation's `stored` rows from `lo` to `hi`, in order. Walks the shorter of the
    range and the conversation (a range may be far wider)."""
    if hi - lo < len(stored):
        return [s for s in range(lo, hi + 1) if s in stored]
    return sorted(s for s in stored if lo <= s <= hi)


class MemoryStorage:
    """A `Storage` that keeps everything in memory: for tests and throwaway sessions. Same
    contract as `SQLiteStorage` (the conformance tests run on both), but nothing survives the
    process."""

    def __init__(self, name: str = "memory") -> None:
        self.location = f"<memory:{name}>"
        self._open = False
        self._loop = _loop.loop()  # the event loop's primitives, looked up again by each open
        self.commits = 0
        self._tasks: dict[int, tuple[str, str, str, bool, int | None, str, str | None]] = {}
        self._entries: dict[str, dict[int, tuple[str, str, int]]] = {}  # kind, body, tokens
        self._subs: dict[str, tuple[str, str, str]] = {}
        self._docs: dict[str, tuple[str, str | None]] = {}  # body, texts
        # Long texts kept apart in pieces, as the SQL stores keep them (`durable.storage.texts`).
        self._pieces: dict[int, str] = {}
        self._held = HeldTexts()
        self._attachments: dict[str, tuple[str, int, bytes]] = {}  # sha256: media type, size, bytes

    async def open(self) -> Opened:
        if self._open:
            raise SessionLocked(self.location, os.getpid())
        self._open = True
        self._loop = _loop.loop()
        await anyio.lowlevel.checkpoint()
        conversations = {}
        for cid in self._docs:
            stored = self._entries.get(cid, {})
            last = max(stored, default=0)
            comp = max((seq for seq, (kind, _, _) in stored.items() if kind == "compaction"), default=None)
            last_comp = rows.entry(cid, comp, stored[comp][1], self.location) if comp is not None else None
            conversations[cid] = ConversationState(last, self._live(cid), last_comp)
        live = [self._task(tid) for tid, row in sorted(self._tasks.items()) if row[3]]
        unsettled = [
            rows.submission(b, sid, self.location) for sid, (_, status, b) in self._subs.items() if status == "queued"
        ]
        return Opened(conversations, live, unsettled, max(self._tasks, default=0) + 1)

    async def commit(self, batch: Batch) -> None:
        self._check()
        try:
            enc = encode_batch(batch)
        except codec.CodecError as exc:
            raise CommitRefused(f"A commit to {self.location} was refused: {exc}", location=self.location) from exc
        seen: set[tuple[str, int]] = set()  # a seq twice in one batch is refused too, as in SQLite
        for cid, seq, *_ in enc.entries:
            if seq in self._entries.get(cid, {}) or (cid, seq) in seen:
                raise CommitRefused(
                    f"A commit to {self.location} was refused and rolled back: UNIQUE constraint failed: "
                    f"entries.conversation_id, entries.seq",
                    location=self.location,
                )
            seen.add((cid, seq))
        for source, target, to_seq in enc.copies:
            taken = self._entries.get(target, {})
            if any(s <= to_seq and (s in taken or (target, s) in seen) for s in self._entries.get(source, {})):
                raise CommitRefused(
                    f"A commit to {self.location} was refused and rolled back: UNIQUE constraint failed: "
                    f"entries.conversation_id, entries.seq",
                    location=self.location,
                )
        # Applied before the first await, so concurrent commits land in the order they were made.
        held = self._held
        held.begin()
        enc, puts, drops = written_texts(enc, held)
        for t in enc.tasks:
            self._tasks[t.id] = (t.conversation_id, t.kind, t.state, t.live, t.parent_id, t.body, t.texts)
        for cid, seq, kind, body, tokens in enc.entries:
            self._entries.setdefault(cid, {})[seq] = (kind, body, tokens)
        for source, target, to_seq in enc.copies:  # a fork: the rows as stored
            copied = {s: row for s, row in self._entries.get(source, {}).items() if s <= to_seq}
            self._entries.setdefault(target, {}).update(copied)
        for sid, cid, status, body in enc.submissions:
            self._subs[sid] = (cid, status, body)
        for cid, body, texts in enc.live:
            self._docs[cid] = (body, texts)
        for lo, hi in drops:
            for key in [k for k in self._pieces if lo <= k <= hi]:
                del self._pieces[key]
        self._pieces.update(puts)
        for sha, media_type, size, data in enc.attachments:
            self._attachments.setdefault(sha, (media_type, size, data))
        held.commit()
        self.commits += 1
        await self._loop.cancel_shielded_checkpoint()  # a scheduling point; applied, it is not cancelled

    async def get_task(self, task_id: int) -> Task | None:
        self._check()
        return self._task(task_id) if task_id in self._tasks else None

    def _task(self, task_id: int) -> Task:
        row = self._tasks[task_id]
        return rows.task(row[5], task_id, self.location, self._held.texts(f"task:{task_id}") if row[6] else None)

    def _live(self, conversation_id: str) -> Live:
        body, texts = self._docs[conversation_id]
        return rows.live(body, conversation_id, self.location,
                         self._held.texts(f"live:{conversation_id}") if texts else None)

    async def find_tasks(
        self,
        *,
        kind: str | None = None,
        state: str | None = None,
        conversation_id: str | None = None,
        parent_id: int | None = None,
        limit: int | None = None,
    ) -> list[Task]:
        self._check()
        out: list[Task] = []
        for tid in sorted(self._tasks):
            cid, k, st, _, parent, _, _ = self._tasks[tid]
            if (kind is None or k == kind) and (state is None or st == state) and (
                conversation_id is None or cid == conversation_id) and (parent_id is None or parent == parent_id):
                out.append(self._task(tid))
                if limit is not None and len(out) >= limit:
                    break
        return out

    async def get_entries(
        self, conversation_id: str, from_seq: int = 1, to_seq: int | None = None
    ) -> list[StoredEntry]:
        self._check()
        stored = self._entries.get(conversation_id, {})
        hi = to_seq if to_seq is not None else max(stored, default=0)
        return [rows.entry(conversation_id, s, stored[s][1], self.location) for s in _seqs(stored, from_seq, hi)]

    async def get_context(self, conversation_id: str, from_seq: int, to_seq: int) -> RawContext:
        self._check()
        stored = self._entries.get(conversation_id, {})
        kept = [s for s in _seqs(stored, from_seq, to_seq)
                if stored[s][0] != "compaction" and stored[s][2] != NOT_SENT]
        return rows.raw_context(kept, [stored[s][2] for s in kept], [stored[s][1] for s in kept])

    async def get_submission(self, submission_id: str) -> Submission | None:
        self._check()
        row = self._subs.get(submission_id)
        return None if row is None else rows.submission(row[2], submission_id, self.location)

    async def get_live(self, conversation_id: str) -> Live | None:
        self._check()
        return self._live(conversation_id) if conversation_id in self._docs else None

    async def get_attachments(self, hashes: Sequence[str]) -> dict[str, bytes]:
        self._check()
        return {sha: self._attachments[sha][2] for sha in hashes if sha in self._attachments}

    def attachment_rows(self) -> list[tuple[str, str, int]]:
        """The attachments stored (sha256, media type, size), by hash; never their bytes."""
        return [(sha, media_type, size) for sha, (media_type, size, _) in sorted(self._attachments.items())]

    async def ended(self) -> list[Ended]:
        """Every ended conversation (idle), with when it ended (`durable.storage.retention`)."""
        self._check()
        busy = self._busy()
        last: dict[str, int] = {}
        for tid, row in self._tasks.items():
            last[row[0]] = max(tid, last.get(row[0], tid))
        return [Ended(cid, rows.updated_at(self._tasks[last[cid]][5], last[cid], self.location) if cid in last else 0.0)
                for cid in sorted(self._docs) if cid not in busy]

    async def delete_conversations(self, ids: Sequence[str], *,
                                   rows_per_commit: int = ROWS_PER_COMMIT) -> PruneReport:
        """Delete the rows of the idle conversations `ids` (one that is not idle is left alone);
        counted in commits of `rows_per_commit` rows as the file stores count them, each one
        applied whole before the next await."""
        report = PruneReport()
        busy = self._busy()
        for group in groups(ids, rows_per_commit):
            self._check()
            gone = [cid for cid in group if cid not in busy and cid in self._docs]
            for cid in gone:
                self._held.begin()
                for lo, hi in self._held.write(f"live:{cid}", {})[1]:
                    for key in [k for k in self._pieces if lo <= k <= hi]:
                        del self._pieces[key]
                self._held.forget(cid)
                self._held.commit()
                del self._docs[cid]
            doomed = set(gone)
            deleted = len(gone) + sum(len(self._entries.pop(cid, {})) for cid in gone)
            for sid in [k for k, row in self._subs.items() if row[0] in doomed]:
                del self._subs[sid]
                deleted += 1
            for tid in [k for k, row in self._tasks.items() if row[0] in doomed]:
                del self._tasks[tid]
                deleted += 1
            if gone:  # counted as the file stores commit: the tombstones, the rows, the tombstones gone
                rest = deleted - len(gone)
                report = report.plus(PruneReport(tuple(gone), deleted, 2 + -(-rest // rows_per_commit)))
            await anyio.lowlevel.checkpoint()
        return report.plus(self._sweep(rows_per_commit))

    def _sweep(self, rows_per_commit: int) -> PruneReport:
        """The attachments no row references any more deleted (`durable.storage.sweep`), counted
        in commits of `rows_per_commit` as the file stores count them."""
        bodies = [row[5] for row in self._tasks.values()] + [body for _, _, body in self._subs.values()]
        bodies += [body for body, _ in self._docs.values()] + list(self._pieces.values())
        bodies += [body for stored in self._entries.values() for _, body, _ in stored.values()]
        doomed = sweep.unreferenced(self._attachments, sweep.referenced(bodies), len(self._attachments))
        for sha in doomed:
            del self._attachments[sha]
        return PruneReport(rows=len(doomed), commits=-(-len(doomed) // rows_per_commit), attachments=len(doomed))

    def _busy(self) -> set[str]:
        busy = {row[0] for row in self._tasks.values() if row[3]}
        return busy | {cid for cid, status, _ in self._subs.values() if status == "queued"}

    async def check_integrity(self) -> list[str]:
        """A store in memory cannot be damaged: nothing to report."""
        return []

    async def close(self) -> None:
        self._open = False

    def stored_rows(self) -> StoredRows:
        """A copy of every row as stored (index columns and JSON body, long texts joined back),
        in the order the SQLite store gives them; `durable.storage.rows.decode_rows` decodes them.
        Works open or closed (a reader never owns the store)."""
        streams = stream_texts(sorted(self._pieces.items()))
        return StoredRows(
            [(tid, cid, kind, state, live, parent, rows.joined_body(body, "task", col, streams))
             for tid, (cid, kind, state, live, parent, body, col) in sorted(self._tasks.items())],
            [(cid, seq, kind, body) for cid in sorted(self._entries)
             for seq, (kind, body, _) in sorted(self._entries[cid].items())],
            [(sid, cid, status, body) for sid, (cid, status, body) in self._subs.items()],
            [(cid, rows.joined_body(body, "live", col, streams)) for cid, (body, col) in sorted(self._docs.items())],
            self.attachment_rows(),
        )

    def _check(self) -> None:
        if not self._open:
            raise StorageClosed(f"Storage {self.location} is closed", location=self.location)
