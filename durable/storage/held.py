"""What a store holds of the long texts it keeps apart (`durable.storage.texts`): `HeldTexts`,
loaded when it opens, kept up to date by its writes, and the places that share one stream (`kin`).

Imports `durable.storage.texts` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .texts import SHARED, Append, Drop, Put, Stream, Texts, bounds, column, row_digest, stream_texts, streams_of

Place = tuple[str, str]  # an owner, one of its fields


def same(a: str | None, b: str) -> bool:
    """Whether `a` is the text `b` (the same object, as a flush hands both copies, at once)."""
    return a is b or (a is not None and len(a) == len(b) and a == b)


def kin(place: Place, documents: Mapping[str, str]) -> Place | None:
    """The other place that holds the same text as `place` while a tool runs: a tool task's
    output (`task:<id>`, `output`) and its slot in the live document (`live:<conversation>`,
    `tool:<id>`); `documents`: the live owner of each task written (`task:<id>` -> `live:<cid>`)."""
    owner, field = place
    if field.startswith("tool:") and owner.startswith("live:"):
        return f"task:{field[5:]}", SHARED
    if field == SHARED and owner in documents:
        return documents[owner], f"tool:{owner[5:]}"
    return None


class HeldTexts:
    """What a store holds of the long texts of its live rows: each owner's fields (`task:<id>`
    and `live:<conversation>`) and their stream numbers, each `Stream` by number and the places
    (owner, field) that map to it, and the last row it wrote of each live document, as committed;
    a transaction's writes are kept apart until `commit` (undone by `rollback`, or back to a
    `savepoint`). Used on the store's writer thread only.

    Places holding the same text share its stream (`kin`: a tool's output is its task's and its
    slot's): it is written once, an append grows it for both, and it is dropped when no place
    maps to it any more. A stream changes only when every place mapping to it is written with its
    new text; a place whose text goes another way gets a stream of its own."""

    def __init__(self, owners: dict[str, dict[str, int]] | None = None,
                 streams: dict[int, Stream] | None = None) -> None:
        self.owners = owners or {}  # owner -> field -> stream number
        self.streams = streams or {}  # number -> stream
        self.holders: dict[int, frozenset[Place]] = {}  # number -> the places that map to it
        for owner, fields in self.owners.items():
            for field, number in fields.items():
                self.holders[number] = self.holders.get(number, frozenset()) | {(owner, field)}
        self.next = 1 + max(self.streams, default=0)
        # conversation -> digest of its row (body and texts column): 16 bytes a conversation, not its row
        self.bodies: dict[str, bytes] = {}
        # task id -> digest of its row (`task_digest`), for live tasks with texts kept apart only
        self.task_rows: dict[int, bytes] = {}
        self.pending: set[int] = set()  # streams the table holds only part of (`grew`; `deferred`)
        self.begin()

    @classmethod
    def load(cls, rows: Iterable[tuple[str, str | None]], pieces: Iterable[tuple[int, str]]) -> HeldTexts:
        """From the owners' `texts` columns (owner, column) and every piece (key, text) in key
        order; rows that map to one number share its stream."""
        texts = stream_texts(pieces)
        owners = {owner: streams_of(col) for owner, col in rows if col}
        streams = {n: Stream(n, texts.get(n, "")) for fields in owners.values() for n in fields.values()}
        found = cls({owner: fields for owner, fields in owners.items() if fields}, streams)
        found.next = found._next = max(found.next, 1 + max(texts, default=0))
        return found

    def has(self, owner: str) -> bool:
        """Whether `owner` has texts kept apart, as of the transaction."""
        return bool(self._fields(owner))

    def texts(self, owner: str) -> dict[str, str]:
        """The committed texts of `owner`, by field."""
        return {field: self.streams[number].text for field, number in self.owners.get(owner, {}).items()}

    def column(self, owner: str) -> str | None:
        """The committed `texts` column of `owner`."""
        return column(self.owners.get(owner, {}))

    def stream(self, owner: str, field: str) -> Stream:
        """The committed stream of `owner`'s `field`."""
        return self.streams[self.owners[owner][field]]

    def write(self, owner: str, texts: Texts) -> tuple[list[Put], list[Drop], str | None]:
        """`write_all` of one owner: the pieces to write, the streams to drop, its column then."""
        puts, drops, columns = self.write_all([(owner, texts)])
        return puts, drops, columns.get(owner)

    def write_all(self, items: Iterable[tuple[str, Texts]], documents: Mapping[str, str] | None = None,
                  ) -> tuple[list[Put], list[Drop], dict[str, str | None]]:
        """The pieces to write and the streams to drop so that each owner's texts become those of
        `items` (owner, texts), and each owner's `texts` column then; `documents`: see `kin`. A text
        that is its kin's (as of the transaction, or as written here) maps to its kin's stream."""
        items = list(items)
        wanted = {(owner, field): text for owner, texts in items for field, text in texts.items()}
        written = {owner for owner, _ in items}
        puts: list[Put] = []
        drops: list[Drop] = []
        columns: dict[str, str | None] = {}
        for owner, texts in items:
            now = self._fields(owner)
            if not now and not texts:
                continue
            after = {field: self._place((owner, field), text, now.get(field), wanted, written, documents or {}, puts)
                     for field, text in texts.items()}
            for field, number in now.items():
                if after.get(field) != number:
                    self._hold((owner, field), number, False, drops)
            for field, number in after.items():
                if now.get(field) != number:
                    self._hold((owner, field), number, True, drops)
            self._owners[owner] = after
            columns[owner] = column(after)
        return puts, drops, columns

    def _place(self, place: Place, text: str, old: int | None, wanted: Mapping[Place, str], written: set[str],
               documents: Mapping[str, str], puts: list[Put]) -> int:
        """The stream `place` maps to once its text is `text` (`old`: its stream before), and the
        pieces that takes: its own or its kin's when it holds `text`, either grown to `text` when
        every other place mapping to it is written here with `text` or without it (a text that
        only grew: its last stored piece written again and the ones after it), else a new one,
        numbered after every other."""
        own = None if old is None else self._stream(old)
        if own is not None and same(text, own.text):
            return own.number
        other_place = kin(place, documents)
        number = None if other_place is None else self._fields(other_place[0]).get(other_place[1])
        other = None if number is None else self._stream(number)
        if other is not None and same(text, other.text):
            return other.number
        for found in (own, other):
            if (found is not None and len(text) > len(found.text) and text.startswith(found.text)
                    and all(p == place or (p[0] in written and (p not in wanted or same(wanted[p], text)))
                            for p in self._holders_of(found.number))):
                stream = Stream(found.number, text, found.stored)  # the last piece stored again, the ones after it
                if self._grow:  # its gain kept beside the file, not in the table (`grown`)
                    self._streams[stream.number] = stream
                    return stream.number
                break
        else:
            stream = Stream(self._next, text, 0)
            self._next += 1
            if self._defer and text:  # kept beside the file, not in the table (`deferred`)
                self._streams[stream.number] = stream
                self._deferred.append(stream.number)
                return stream.number
        puts += stream.puts()
        stream.stored = len(text)  # the table holds it whole once these are written
        self._streams[stream.number] = stream
        return stream.number

    def _hold(self, place: Place, number: int, held: bool, drops: list[Drop]) -> None:
        """`place` maps to stream `number` now (`held`) or no more: a stream no place maps to is dropped."""
        holders = self._holders_of(number)
        holders = holders | {place} if held else holders - {place}
        self._holders[number] = holders
        if not holders:
            drops.append(bounds(number))
            self._streams[number] = None

    def _fields(self, owner: str) -> dict[str, int]:
        return self._owners[owner] if owner in self._owners else self.owners.get(owner, {})

    def _stream(self, number: int) -> Stream | None:
        return self._streams[number] if number in self._streams else self.streams.get(number)

    def _holders_of(self, number: int) -> frozenset[Place]:
        return self._holders[number] if number in self._holders else self.holders.get(number, frozenset())

    def appends(self, items: Iterable[tuple[str, Texts]]) -> list[tuple[Stream, str]] | None:
        """How the committed texts become those of `items` (owner, texts) by appending only:
        (stream, what it gains) for each stream that grew, once however many places map to it;
        None when some text is new, gone or not grown from its own, or a stream that grew is
        mapped to by a place not written here or written with another text."""
        want: dict[int, str] = {}
        places: set[Place] = set()
        for owner, texts in items:
            now = self.owners.get(owner, {})
            if now.keys() != texts.keys():
                return None
            for field, text in texts.items():
                places.add((owner, field))
                number = now[field]
                if number in want and not same(want[number], text):
                    return None
                want[number] = text
        found = []
        for number, text in want.items():
            old = self.streams[number]
            if same(text, old.text):
                continue
            if len(text) < len(old.text) or not text.startswith(old.text) or not self.holders[number] <= places:
                return None
            found.append((old, text[len(old.text):]))
        return found

    def grew(self, stream: Stream, gained: str) -> None:
        """Commit an append kept apart from the table (outside any transaction): the next
        transaction writes it into the table (`fold`)."""
        self.streams[stream.number] = Stream(stream.number, stream.text + gained, stream.stored)
        self.pending.add(stream.number)

    def recover(self, records: Iterable[list[Append]]) -> int:
        """Apply the appends found beside the file (`grew`, by a process that ended before they
        were folded), in order: one that continues a text exactly as held (the same stream, of
        the length it had) is applied, once for every place mapping to it; others are left out
        (folded already, or lost with their stream). No new stream takes the number of one they
        name. Returns how many were applied."""
        applied = 0
        for record in records:
            for number, before, gained in record:
                self.next = self._next = max(self.next, number + 1)
                stream = self.streams.get(number)
                if stream is not None and len(stream.text) == before:
                    self.grew(stream, gained)
                    applied += 1
        return applied

    def reserve(self, records: Iterable[list[Append]]) -> None:
        """No new stream takes the number of one `records` name (records not applied: `recover`)."""
        self.next = self._next = max(self.next, 1 + max((n for r in records for n, _, _ in r), default=0))

    def deferred(self) -> list[Stream]:
        """The streams this transaction made whose text is not in the table (`begin(defer=True)`):
        its store puts each beside the file, as an append to an empty text, before it commits."""
        found = [self._streams.get(number) for number in self._deferred]
        return [s for s in found if s is not None and s.stored == 0]

    def grown(self) -> list[Append]:
        """What the streams this transaction grew gained, not written to the table (`begin(grow=
        True)`): (stream, length before, gain) each; its store puts them beside the file, in a
        record that counts only once the transaction commits."""
        found: list[Append] = []
        for number, stream in self._streams.items():
            old = self.streams.get(number)
            if stream is not None and old is not None and stream.stored < len(stream.text) > len(old.text):
                found.append((number, len(old.text), stream.text[len(old.text):]))
        return found

    def kept_apart(self, streams: Iterable[Stream]) -> None:
        """`streams` (`deferred`) are beside the file now: their numbers are never made again,
        even if this transaction is rolled back (the appends there name them)."""
        for stream in streams:
            self.next = max(self.next, stream.number + 1)
            self._next = max(self._next, stream.number + 1)

    def fold_deferred(self) -> list[Put]:
        """The pieces of the `deferred` and `grown` streams, written in the transaction after all
        (the side file could not take them)."""
        puts: list[Put] = []
        for stream in [*self.deferred(), *(self._streams[n] for n, _, _ in self.grown())]:
            assert stream is not None
            puts += stream.puts()
            self._streams[stream.number] = Stream(stream.number, stream.text)
        return puts

    def fold(self) -> list[Put]:
        """The pieces that bring the table up to the appends kept apart, in the transaction."""
        puts: list[Put] = []
        for number in sorted(self.pending):
            stream = self._stream(number)
            if stream is not None and stream.stored < len(stream.text):
                puts += stream.puts()
                self._streams[number] = Stream(number, stream.text)
        return puts

    def changed(self, conversation_id: str, body: str, texts: str | None) -> bool:
        """Whether a live document's row differs from the one last written (and note it)."""
        new = self._new_bodies
        written = new[conversation_id] if conversation_id in new else self.bodies.get(conversation_id)
        digest = row_digest(body, texts)
        self._new_bodies[conversation_id] = digest
        return written != digest

    def wrote_task(self, task_id: int, digest: bytes | None) -> None:
        """A task's row is written in this transaction: its digest (None: a row that keeps no
        text apart, or an ended task's, is not remembered)."""
        self._new_task_rows[task_id] = digest or b""

    def task_row(self, task_id: int) -> bytes | None:
        """The digest of a task's row as last committed, when it keeps texts apart."""
        return self.task_rows.get(task_id)

    def forget(self, conversation_id: str) -> None:
        """The live document of `conversation_id` is deleted in this transaction: its next row is
        written whatever it holds."""
        self._new_bodies[conversation_id] = b""

    def begin(self, defer: bool = False, grow: bool = False) -> None:
        """A transaction begins; `defer`: the text of a stream it makes is put beside the file, not
        in the table (a lazy transaction of a file with a side file: `deferred`); `grow`: so is
        what a stream gains (`grown`)."""
        self._defer, self._grow = defer, grow
        self._deferred: list[int] = []
        self._owners: dict[str, dict[str, int]] = {}
        self._streams: dict[int, Stream | None] = {}  # None: dropped
        self._holders: dict[int, frozenset[Place]] = {}
        self._new_bodies: dict[str, bytes] = {}
        self._new_task_rows: dict[int, bytes] = {}
        self._next = self.next
        self._marks: list[tuple[Any, ...]] = []

    def savepoint(self) -> None:
        self._marks.append((dict(self._owners), dict(self._streams), dict(self._holders), dict(self._new_bodies),
                            dict(self._new_task_rows), self._next, list(self._deferred)))

    def rollback_to_savepoint(self) -> None:
        owners, streams, holders, bodies, task_rows, self._next, deferred = self._marks[-1]
        self._deferred = list(deferred)
        self._owners, self._streams, self._holders = dict(owners), dict(streams), dict(holders)
        self._new_bodies, self._new_task_rows = dict(bodies), dict(task_rows)

    def release_savepoint(self) -> None:
        self._marks.pop()

    def commit(self) -> None:
        """The transaction committed (after `fold`, the table holds every text whole; a lazy
        one may leave appends, and the texts it made, beside the file: still `pending`)."""
        for owner, fields in self._owners.items():
            if fields:
                self.owners[owner] = fields
            else:
                self.owners.pop(owner, None)
        for number, stream in self._streams.items():
            if stream is None:
                self.streams.pop(number, None)
            else:
                self.streams[number] = stream
        for number, holders in self._holders.items():
            if holders:
                self.holders[number] = holders
            else:
                self.holders.pop(number, None)
        self.bodies.update(self._new_bodies)
        for task_id, digest in self._new_task_rows.items():
            if digest:
                self.task_rows[task_id] = digest
            else:
                self.task_rows.pop(task_id, None)
        self.next = max(self.next, self._next)
        self.pending = {n for n, stream in self.streams.items() if stream.stored < len(stream.text)}
        self.begin()

    def rollback(self) -> None:
        self.begin()
