"""Rows as every store keeps them: a batch encoded once into the JSON text and index columns all
backends store (`encode_batch`, long texts apart: `durable.storage.texts`), rows decoded back into
records with errors that name the row and the store, and the one `find_tasks` query both SQL
stores build.

Shared so that every backend accepts, refuses and reads a value the same way. Imports the
records, the codec and the errors only (never anyio: `durable inspect` reads through it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar, cast

from attrs import field

from .. import codec
from .._frozen import define, evolve, frozen
from ..errors import CorruptSession, UnknownTaskKind
from ..records import Entry, Live, StoredEntry, Submission, Task, Terminal
from ..tokens import NOT_SENT, stored_tokens
from . import sealing, texts as texts_
from .held import HeldTexts
from .joined import compact_seqs
from .packing import ATTACHMENT_MARK
from .protocol import Batch, RawContext

# --------------------------------------------------------------------------- encoding


class EncodedTask(NamedTuple):
    """A task's row; its fields are the `tasks` columns in order (a SQLite store binds it as it is).
    `texts`: the fields of its long texts, kept apart (`durable.storage.texts`), as a JSON list."""

    id: int
    conversation_id: str
    kind: str
    state: str
    live: bool
    parent_id: int | None
    body: str
    texts: str | None = None  # set by the store as it writes the row: its streams (`durable.storage.texts`)


@frozen
class EncodedBatch:
    """A batch encoded to JSON once, before it reaches a backend (both store the same text)."""

    tasks: tuple[EncodedTask, ...]
    entries: tuple[tuple[str, int, str, str, int], ...]  # conversation_id, seq, kind, body, tokens
    submissions: tuple[tuple[str, str, str, str], ...]  # id, conversation_id, status, body
    live: tuple[tuple[str, str, str | None], ...]  # conversation_id, body, texts
    barrier: bool = True
    inbox: tuple[str, ...] = ()  # inbox rows consumed (see `Batch.inbox`)
    texts: tuple[tuple[str, texts_.Texts], ...] = ()  # owner, its long texts: of every task and document written
    copies: tuple[tuple[str, str, int], ...] = ()  # source, target, to_seq: entries copied (`EntryCopy`)
    attachments: tuple[tuple[str, str, int, bytes], ...] = ()  # sha256, media type, size, bytes (first write kept)


_INT64 = range(-(1 << 63), 1 << 63)


def _check_keys(batch: Batch) -> None:
    """Ids and seqs are SQLite INTEGER keys: refuse one that does not fit in 64 bits here, so
    that both backends refuse it the same way (the SQLite driver could not even bind it)."""
    for t in batch.tasks:
        if t.id not in _INT64 or (t.parent_id is not None and t.parent_id not in _INT64):
            raise codec.CodecError(f"task id {t.id} (parent {t.parent_id}) is not a 64-bit integer")
    for e in batch.entries:
        if e.seq not in _INT64:
            raise codec.CodecError(f"entry seq {e.seq!r} of conversation {e.conversation_id!r} is not a 64-bit integer")


def encode_batch(batch: Batch) -> EncodedBatch:
    """Encode a batch; raises `codec.CodecError` (before anything is written) when a value
    cannot be stored. Long texts of live rows are blanked in their bodies and listed apart
    (`EncodedBatch.texts`, with an empty entry for every other row written: its old ones go)."""
    _check_keys(batch)
    dumps, tag_of = codec.dumps, codec.tag_of
    tasks = batch.tasks
    if len(tasks) > 1:  # the last write of a task wins
        tasks = list({t.id: t for t in tasks}.values())
    subs = batch.submissions
    if len(subs) > 1:
        subs = list({s.id: s for s in subs}.values())
    texts: list[tuple[str, texts_.Texts]] = []
    encoded_tasks = []
    for t in tasks:
        blank, long = texts_.split_task(t)
        texts.append((f"task:{t.id}", long))
        encoded_tasks.append(EncodedTask(t.id, t.conversation_id, t.kind, tag_of(t.state),
                                         not isinstance(t.state, Terminal), t.parent_id, dumps(blank, Task)))
    documents: list[tuple[str, str, str | None]] = []
    for cid, doc in batch.live.items():
        blank_doc, long = texts_.split_live(doc)
        texts.append((f"live:{cid}", long))
        documents.append((cid, dumps(blank_doc, Live), None))
    return EncodedBatch(
        tuple(encoded_tasks),
        tuple([(e.conversation_id, e.seq, tag_of(e.entry), dumps(e.entry, Entry), stored_tokens(e.entry))
               for e in batch.entries]),
        tuple([(s.id, s.conversation_id, tag_of(s.status), dumps(s, Submission)) for s in subs]),
        tuple(documents),
        batch.barrier,
        tuple(batch.inbox),
        tuple(texts),
        tuple([(c.source, c.target, c.to_seq) for c in batch.copies]),
        tuple([(sha, media_type, len(data), data) for sha, (media_type, data) in batch.attachments.items()]),
    )


def written_texts(rows: EncodedBatch, held: HeldTexts) -> tuple[EncodedBatch, list[texts_.Put], list[texts_.Drop]]:
    """What a store writes of `rows` in its transaction, as of `held` (`durable.storage.held`):
    the rows with their `texts` columns set and the live documents that did not change left out,
    the pieces to write and the streams to drop (a tool's output, its task's and its slot's, one
    stream)."""
    puts, drops, columns = held.write_all([(owner, long) for owner, long in rows.texts if long or held.has(owner)],
                                          {f"task:{t.id}": f"live:{t.conversation_id}" for t in rows.tasks})
    tasks = rows.tasks
    if columns:
        tasks = tuple([t._replace(texts=columns.get(f"task:{t.id}")) for t in tasks])
    for t in tasks:  # remembered while it keeps texts apart: a flush that leaves it unchanged appends only
        held.wrote_task(t.id, texts_.task_digest(t, t.texts) if t.live and t.texts is not None else None)
    live = []
    for cid, body, _ in rows.live:
        col = columns.get(f"live:{cid}") if columns else None
        if held.changed(cid, body, col):
            live.append((cid, body, col))
    return (EncodedBatch(tasks, rows.entries, rows.submissions, tuple(live), rows.barrier, rows.inbox,
                         copies=rows.copies, attachments=rows.attachments), puts, drops)


def lazy_appends(rows: EncodedBatch, held: HeldTexts) -> list[tuple[texts_.Stream, str]] | None:
    """What `rows` changes, as of `held`, when it only appends to long texts kept apart: (stream,
    what it gains) for each, once for a stream shared; None when it writes anything else (a row,
    an attachment, a changed task row or live document's body, a new or shortened text)."""
    if rows.entries or rows.submissions or rows.inbox or rows.copies or rows.attachments:
        return None
    for t in rows.tasks:  # a task's row unchanged (a tool's output flush keeps its `updated_at`)
        if held.task_row(t.id) != texts_.task_digest(t, held.column(f"task:{t.id}")):
            return None
    for cid, body, _ in rows.live:
        if held.bodies.get(cid) != texts_.row_digest(body, held.column(f"live:{cid}")):
            return None
    return held.appends(rows.texts)


BY_ENTRY = "text_is_entry"
"""Key of an answered status stored by reference (`answers_by_entry`): its text is its entry's."""


def answers_by_entry(rows: EncodedBatch, entry: Callable[[str, int], str | None]) -> EncodedBatch:
    """`rows` with each long answer stored once: a submission answered with the text of its
    assistant entry (in `rows`, or stored: `entry(conversation_id, seq)`, its plain body) keeps
    it as that entry's (`"text_is_entry": true` in its "done" status, its text blanked; `answer_joined` puts it back
    when read). Otherwise a long answer would be written twice, and a checkpoint twice again."""
    subs = []
    for sid, cid, status, body in rows.submissions:
        if status == "done" and len(body) >= texts_.LONG:
            sub = json.loads(body)
            answered = sub.get("status")
            seq = answered.get("seq") if isinstance(answered, dict) else None
            text = answered.get("text", "") if isinstance(answered, dict) else ""
            if isinstance(seq, int) and isinstance(text, str) and len(text) >= texts_.LONG:
                stored = next((b for c, s, _, b, _ in rows.entries if (c, s) == (cid, seq)), None) or entry(cid, seq)
                if stored is not None and json.loads(stored).get("text") == text:
                    answered.update({"text": "", BY_ENTRY: True})
                    body = json.dumps(sub, ensure_ascii=False, separators=(",", ":"))
        subs.append((sid, cid, status, body))
    return evolve(rows, submissions=tuple(subs)) if rows.submissions else rows


def answer_joined(body: str, conversation_id: str, entry: Callable[[str, int], str | None], location: str) -> str:
    """A submission's JSON body with its answer's text put back from its entry when it was stored
    by reference (`answers_by_entry`); `entry(conversation_id, seq)`: that entry's plain body.
    Raises `CorruptSession` naming `location` when that entry is missing or has no text (the
    answer cannot be read: never an empty one)."""
    if f'"{BY_ENTRY}":true' not in body:
        return body
    try:
        sub = json.loads(body)
    except ValueError:
        return body  # damaged: reading it as a submission says so
    answered = sub.get("status") if isinstance(sub, dict) else None
    if not isinstance(answered, dict) or not answered.pop(BY_ENTRY, False):
        return body
    seq = answered.get("seq")
    found = entry(conversation_id, seq) if isinstance(seq, int) else None
    text = _entry_text(found)
    if text is None:
        raise CorruptSession(f"Submission {sub.get('id')!r} in {location} cannot be read: its answer is the text of "
                             f"entry {seq} of conversation {conversation_id!r}, which is "
                             f"{'missing' if found is None else 'damaged'}", location=location)
    answered["text"] = text
    return json.dumps(sub, ensure_ascii=False, separators=(",", ":"))


def _entry_text(body: str | None) -> str | None:
    """An entry's text from its plain JSON body; None when it has none (missing or damaged)."""
    if body is None:
        return None
    try:
        found = json.loads(body)
    except ValueError:
        return None
    text = found.get("text") if isinstance(found, dict) else None
    return text if isinstance(text, str) else None


def joined_body(body: str, kind: str, column: str | None, streams: Mapping[int, str]) -> str:
    """A row's JSON body with its long texts (`column`: its `texts` column; `streams`: every
    stream's text) joined back in, for readers that keep rows as JSON; a body that is not JSON
    is left as it is (it is reported when decoded)."""
    if not column:
        return body
    try:
        decoded = json.loads(body)
    except ValueError:
        return body
    joined = {field: streams.get(number, "") for field, number in texts_.streams_of(column).items()}
    return json.dumps(texts_.join_json(decoded, kind, joined), ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- decoding

T = TypeVar("T")


def _load(body: str, cls: type[T], what: str, location: str) -> T:
    body = sealing.plain(body, location)
    try:
        return codec.loads(body, cls)
    except codec.UnknownVariant as exc:
        if exc.what != "task kind":
            raise CorruptSession(f"{what} in {location} cannot be read: {exc}", location=location) from exc
        raise UnknownTaskKind(f"{what} in {location} has kind {exc.tag!r}, which this process does not know ({exc}): "
                              f"open the file with the code that defines that kind", location=location) from exc
    except codec.CodecError as exc:
        raise CorruptSession(f"{what} in {location} cannot be read: {exc}", location=location) from exc


def task(body: str, task_id: int, location: str, texts: Mapping[str, str] | None = None) -> Task:
    """A task from its row; `texts`: its long texts kept apart, joined back."""
    found = _load(body, Task, f"Task {task_id}", location)
    return texts_.join_task(found, texts) if texts else found


def entry(conversation_id: str, seq: int, body: str, location: str) -> StoredEntry:
    what = f"Entry {seq} of conversation {conversation_id!r}"
    value: Entry = _load(body, Entry, what, location)  # type: ignore[arg-type]  # a Union is no type[T] (no TypeForm)
    return StoredEntry(conversation_id, seq, value)


CONTEXT_ROWS = f"kind != 'compaction' AND (tokens IS NULL OR tokens != {NOT_SENT})"
"""The entry rows a model context may hold (`Storage.get_context`), as SQL both backends take: no
compaction summary, none never sent again."""


def context_totals(entries: Sequence[tuple[str, int, str, str, int]]) -> list[tuple[str, int, int, int]]:
    """Per conversation of the encoded `entries` (`EncodedBatch.entries`, plain JSON): how many of
    them a model context may hold (no compaction summary, none never sent again), their tokens and
    how many of those reference an image or a file, in the order the conversations come: what a
    commit adds to the stored totals (schema 9)."""
    totals: dict[str, tuple[int, int, int]] = {}
    for cid, _, kind, body, tokens in entries:
        n, t, a = totals.get(cid, (0, 0, 0))
        if kind != "compaction" and tokens != NOT_SENT:
            n, t, a = n + 1, t + tokens, a + (ATTACHMENT_MARK in body)
        totals[cid] = (n, t, a)
    return [(cid, n, t, a) for cid, (n, t, a) in totals.items()]


def raw_context(seqs: Sequence[int], tokens: Sequence[int | None], bodies: Sequence[str],
                location: str = "") -> RawContext:
    """A context from its rows' columns (`RawContext`): the total of their tokens when every row
    was counted, else each row's, None for a row to decode at once. No body is looked into:
    damage inside one is found when that entry is read. Bodies sealed (`durable.storage.sealing`)
    are opened: the engine only ever sees plain JSON."""
    bodies, seqs = sealing.plain_all(bodies, location), compact_seqs(seqs)
    if None not in tokens:
        return RawContext(seqs, bodies, sum(cast(Sequence[int], tokens)))
    return RawContext(seqs, bodies, tokens)


def updated_at(body: str, task_id: int, location: str) -> float:
    """When a task last changed, read from its row's JSON alone (no task kind needed to read it)."""
    try:
        value = json.loads(sealing.plain(body, location)).get("updated_at", 0.0)
        return float(value)
    except (ValueError, TypeError, AttributeError) as exc:
        raise CorruptSession(f"Task {task_id} in {location} cannot be read: {exc}", location=location) from exc


def submission(body: str, submission_id: str, location: str) -> Submission:
    return _load(body, Submission, f"Submission {submission_id}", location)


def live(body: str, conversation_id: str, location: str, texts: Mapping[str, str] | None = None) -> Live:
    """A live document from its row; `texts`: its long texts kept apart, joined back."""
    found = _load(body, Live, f"Live document of conversation {conversation_id!r}", location)
    return texts_.join_live(found, texts) if texts else found


def find_tasks_query(table: str, mark: str, scope: tuple[tuple[str, str | int], ...] = (), *,
                     kind: str | None, state: str | None, conversation_id: str | None, parent_id: int | None,
                     limit: int | None, live_test: str | None = None,
                     live_index: str | None = None) -> tuple[str, list[str | int]]:
    """`Storage.find_tasks` as SQL for a tasks table: the `id, body, texts` of the tasks matching
    `scope` (columns every query of the store is limited to) and the filters that are set, in id
    order, at most `limit`; `mark` is the driver's parameter placeholder. Returns (sql, args).

    `live_test`: the predicate of the store's partial index over live tasks. Every state but
    "terminal" is live, so a find by such a state adds it, and reads that index (the live tasks, a
    few), never the history of a kind or of a parent; `live_index` names the index for SQLite,
    whose planner would otherwise pick another (PostgreSQL has no INDEXED BY and picks it on its
    statistics)."""
    where: list[str] = []
    args: list[str | int] = []
    source = table
    if live_test is not None and state is not None and state != "terminal":
        if live_index is not None:
            source = f"{table} INDEXED BY {live_index}"
        where.append(live_test)
    filters = (*scope, ("kind", kind), ("state", state), ("conversation_id", conversation_id), ("parent_id", parent_id))
    for column, value in filters:
        if value is not None:
            where.append(f"{column} = {mark}")
            args.append(value)
    sql = f"SELECT id, body, texts FROM {source}" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql, args


# --------------------------------------------------------------------------- every row of a store


TaskRow = tuple[int, str, str, str, bool, int | None, str]  # id, conversation, kind, state, live, parent, body
EntryRow = tuple[str, int, str, str]  # conversation_id, seq, kind, body
SubmissionRow = tuple[str, str, str, str]  # id, conversation_id, status, body
DocumentRow = tuple[str, str]  # conversation_id, body


@frozen
class StoredRows:
    """A session's rows as stored: index columns and the codec's JSON body. Both backends give them."""

    tasks: list[TaskRow] = field(factory=list)
    entries: list[EntryRow] = field(factory=list)  # in (conversation_id, seq) order
    submissions: list[SubmissionRow] = field(factory=list)  # in the order they were first committed
    documents: list[DocumentRow] = field(factory=list)
    attachments: list[tuple[str, str, int]] = field(factory=list)  # sha256, media type, size (never the bytes)


@define
class SessionRecords:
    """Every record of a session, decoded; `problems` names each row that did not decode, or
    whose index columns disagree with its record (one sentence each, naming the row and file)."""

    location: str
    tasks: dict[int, Task] = field(factory=dict)
    entries: dict[str, list[StoredEntry]] = field(factory=dict)
    submissions: dict[str, Submission] = field(factory=dict)
    live: dict[str, Live] = field(factory=dict)
    problems: list[str] = field(factory=list)
    attachments: dict[str, tuple[str, int]] = field(factory=dict)  # sha256: media type, size, as stored


def decode_rows(rows: StoredRows, location: str) -> SessionRecords:
    """Decode every row; rows that do not decode become `problems`, never an exception."""
    out = SessionRecords(location, attachments={sha: (media_type, size) for sha, media_type, size in rows.attachments})

    def load(body: str, cls: Any, what: str) -> Any:
        try:
            return codec.loads(body, cls)
        except (codec.CodecError, ValueError, TypeError) as exc:
            out.problems.append(f"{what} in {location} does not load with the current schema: {exc}")
            return None

    for tid, cid, kind, state, live, parent, body in rows.tasks:
        task: Task | None = load(body, Task, f"Task {tid}")
        if task is None:
            continue
        out.tasks[tid] = task
        columns = (task.id, task.conversation_id, task.kind, codec.tag_of(task.state), not task.terminal,
                   task.parent_id)
        if columns != (tid, cid, kind, state, bool(live), parent):
            out.problems.append(f"Task {tid}'s index columns ({kind}, {state}, live={bool(live)}) disagree with its "
                                f"record ({task.kind}, {codec.tag_of(task.state)}, live={not task.terminal})")
    for cid, seq, kind, body in rows.entries:
        entry = load(body, Entry, f"Entry {seq} of conversation {cid!r}")
        if entry is None:
            continue
        if codec.tag_of(entry) != kind:
            out.problems.append(f"Entry {seq} of conversation {cid!r} is stored as {kind} but is a "
                                f"{codec.tag_of(entry)}")
        out.entries.setdefault(cid, []).append(StoredEntry(cid, seq, entry))
    for sid, cid, status, body in rows.submissions:
        sub: Submission | None = load(body, Submission, f"Submission {sid}")
        if sub is None:
            continue
        out.submissions[sid] = sub
        if (sub.id, sub.conversation_id, codec.tag_of(sub.status)) != (sid, cid, status):
            out.problems.append(f"Submission {sid}'s index columns disagree with its record")
    for cid, body in rows.documents:
        doc: Live | None = load(body, Live, f"The live document of conversation {cid!r}")
        if doc is not None:
            out.live[cid] = doc
    for stored in out.entries.values():
        stored.sort(key=lambda e: e.seq)
    return out
