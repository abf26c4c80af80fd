"""Decoding stored JSON rows back into records, with errors that name the record and file, and
the one query both SQL stores build from `find_tasks`'s filters.

Shared by the backends so that a bad row is refused the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import TypeVar, cast

from .. import codec
from ..errors import CorruptSession, UnknownTaskKind
from ..records import Entry, Live, StoredEntry, Submission, Task
from .protocol import RawContext

T = TypeVar("T")


def _load(body: str, cls: type[T], what: str, location: str) -> T:
    try:
        return codec.loads(body, cls)
    except codec.UnknownVariant as exc:
        if exc.what != "task kind":
            raise CorruptSession(f"{what} in {location} cannot be read: {exc}", location=location) from exc
        raise UnknownTaskKind(f"{what} in {location} has kind {exc.tag!r}, which this process does not know ({exc}): "
                              f"open the file with the code that defines that kind", location=location) from exc
    except codec.CodecError as exc:
        raise CorruptSession(f"{what} in {location} cannot be read: {exc}", location=location) from exc


def task(body: str, task_id: int, location: str) -> Task:
    return _load(body, Task, f"Task {task_id}", location)


def entry(conversation_id: str, seq: int, body: str, location: str) -> StoredEntry:
    what = f"Entry {seq} of conversation {conversation_id!r}"
    value: Entry = _load(body, Entry, what, location)  # type: ignore[arg-type]  # a Union is no type[T] (no TypeForm)
    return StoredEntry(conversation_id, seq, value)


_FRAMES = tuple(f'{{"type":"{kind}",' for kind in ("user", "assistant", "tool_result"))


def framed(body: str) -> bool:
    """Whether an entry's JSON text is framed as the codec writes an entry of a model context:
    an object whose first key is its tag (a user, assistant or tool result entry) and that is
    closed. A cheap check of a row kept undecoded (damage inside it is refused when it is
    decoded)."""
    return body.startswith(_FRAMES) and body.endswith("}")


def all_framed(bodies: Sequence[str]) -> bool:
    """`framed` of every body, without a Python step per body."""
    return all(map(str.startswith, bodies, repeat(_FRAMES))) and all(map(str.endswith, bodies, repeat("}")))


def raw_context(seqs: Sequence[int], tokens: Sequence[int | None], bodies: Sequence[str]) -> RawContext:
    """A context from its rows' columns (`RawContext`): the total of their tokens when every row
    was counted and is framed, else each row's, None for a row to decode at once."""
    if None not in tokens and all_framed(bodies):
        return RawContext(seqs, bodies, sum(cast(Sequence[int], tokens)))
    checked = [t if t is not None and framed(b) else None for t, b in zip(tokens, bodies, strict=True)]
    return RawContext(seqs, bodies, checked)


def submission(body: str, submission_id: str, location: str) -> Submission:
    return _load(body, Submission, f"Submission {submission_id}", location)


def live(body: str, conversation_id: str, location: str) -> Live:
    return _load(body, Live, f"Live document of conversation {conversation_id!r}", location)


def find_tasks_query(table: str, mark: str, scope: tuple[tuple[str, str | int], ...] = (), *,
                     kind: str | None, state: str | None, conversation_id: str | None, parent_id: int | None,
                     limit: int | None, live_test: str | None = None,
                     live_index: str | None = None) -> tuple[str, list[str | int]]:
    """`Storage.find_tasks` as SQL for a tasks table: the `id, body` of the tasks matching
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
    sql = f"SELECT id, body FROM {source}" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql, args
