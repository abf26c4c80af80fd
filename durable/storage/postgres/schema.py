"""The PostgreSQL schema of session spaces, as numbered migrations, and the reads that span a
space: what a harness resumes from (`read_opened`) and every row at once (`read_rows`).

Every table lives in the PostgreSQL schema `durable` and is keyed by `space` first: a space is
what a session file is for the SQLite store, and one database holds many. Bodies are `text` (the
codec's JSON), never `jsonb`: jsonb refuses `\\u0000` and text that held a lone surrogate, which
the SQLite store keeps. The indexes mirror the SQLite ones (`durable.storage.sqlite.schema`), so
nothing on the engine's path scans history; `submissions.ord` (an identity an upsert keeps) is the
order submissions were first committed in. `inbox` (version 4) holds inputs other processes
submitted (`durable.remote`) until the commit that places one as a submission deletes it; its
`decision` (version 6) holds a decision on a tool call waiting for approval instead, consumed by
the commit that applies it.

Ownership: `leases` has one row per space and `lease_history` the final commit count of the
epochs taken over (`durable.storage.postgres.lease`); `durable.fence()`, called first by every
commit transaction, checks and extends the lease, counts the commit, and makes a lazy
transaction `synchronous_commit = off`. Versions 1-3 follow the SQLite schema (both stores keep
the same records); from there each has versions of its own, and a later change of records bumps
both (`SQLITE_VERSION_SEEN`). Migrations run in one transaction under an advisory lock, so two
processes opening at once migrate once.
"""

from __future__ import annotations

from typing import Any

from ... import codec
from ...errors import SchemaTooNew
from ...records import Entry
from ...tokens import stored_tokens
from .. import rows
from ..held import HeldTexts
from ..protocol import ConversationState, Opened
from ..rows import CONTEXT_ROWS, StoredRows
from ..sealing import OVERHEAD, attachment_hash, opened_piece, plain
from ..texts import stream_texts
from .prune import skip_tombstoned

_MIGRATION_LOCK = 0x44524231  # pg_advisory_xact_lock key ("DRB1")
TASKS_FILLFACTOR = 80  # version 5; see the migration

MIGRATIONS: dict[int, list[str]] = {
    1: [
        "CREATE SCHEMA IF NOT EXISTS durable",
        "CREATE TABLE durable.meta (key text PRIMARY KEY, value text NOT NULL)",
        """CREATE TABLE durable.leases (
            space text PRIMARY KEY,
            epoch bigint NOT NULL DEFAULT 0,
            commits bigint NOT NULL DEFAULT 0,
            owner text,
            pid integer,
            host text,
            expires_at timestamptz NOT NULL DEFAULT '-infinity',
            acquired_at timestamptz
        )""",
        """CREATE TABLE durable.lease_history (
            space text NOT NULL,
            epoch bigint NOT NULL,
            commits bigint NOT NULL,
            PRIMARY KEY (space, epoch)
        )""",
        """CREATE FUNCTION durable.fence(p_space text, p_epoch bigint, p_seconds double precision, p_lazy boolean)
        RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE n bigint;
        BEGIN
            IF p_lazy THEN  -- this transaction only: its commit does not wait for the WAL flush
                PERFORM set_config('synchronous_commit', 'off', true);
            END IF;
            UPDATE durable.leases
               SET commits = commits + 1, expires_at = clock_timestamp() + p_seconds * interval '1 second'
             WHERE space = p_space AND epoch = p_epoch AND expires_at > clock_timestamp()
            RETURNING commits INTO n;
            IF n IS NULL THEN
                RAISE EXCEPTION 'the lease on space % is not held by epoch %', p_space, p_epoch
                    USING ERRCODE = 'DU001';
            END IF;
            RETURN n;
        END $$""",
        """CREATE TABLE durable.tasks (
            space text NOT NULL,
            id bigint NOT NULL,
            conversation_id text NOT NULL,
            kind text NOT NULL,
            state text NOT NULL,
            live boolean NOT NULL,
            parent_id bigint,
            body text NOT NULL,
            PRIMARY KEY (space, id)
        )""",
        "CREATE INDEX tasks_live ON durable.tasks (space, id) WHERE live",
        "CREATE INDEX tasks_kind_state ON durable.tasks (space, kind, state)",
        "CREATE INDEX tasks_parent ON durable.tasks (space, parent_id) WHERE parent_id IS NOT NULL",
        """CREATE TABLE durable.entries (
            space text NOT NULL,
            conversation_id text NOT NULL,
            seq bigint NOT NULL,
            kind text NOT NULL,
            body text NOT NULL,
            PRIMARY KEY (space, conversation_id, seq)
        )""",
        "CREATE INDEX entries_compactions ON durable.entries (space, conversation_id, seq) WHERE kind = 'compaction'",
        """CREATE TABLE durable.submissions (
            space text NOT NULL,
            id text NOT NULL,
            ord bigint GENERATED ALWAYS AS IDENTITY,
            conversation_id text NOT NULL,
            status text NOT NULL,
            body text NOT NULL,
            PRIMARY KEY (space, id)
        )""",
        "CREATE INDEX submissions_open ON durable.submissions (space, ord) WHERE status = 'queued'",
        """CREATE TABLE durable.documents (
            space text NOT NULL,
            conversation_id text NOT NULL,
            body text NOT NULL,
            PRIMARY KEY (space, conversation_id)
        )""",
    ],
    2: [],  # records only (see durable.storage.sqlite.schema)
    # Each entry's estimated tokens (durable.tokens.stored_tokens; NULL: not counted, decoded
    # when read). `migrate` fills it for the entries already there, decoding each once.
    3: ["ALTER TABLE durable.entries ADD COLUMN tokens integer"],
    # The inbox: inputs another process submitted (durable.remote), waiting for the space's
    # owner to place them as submissions (the commit that places one deletes it).
    4: [
        """CREATE TABLE durable.inbox (
            space text NOT NULL,
            id text NOT NULL,
            ord bigint GENERATED ALWAYS AS IDENTITY,
            conversation_id text NOT NULL,
            text text NOT NULL,
            created_at double precision NOT NULL,
            PRIMARY KEY (space, id)
        )""",
        "CREATE INDEX inbox_order ON durable.inbox (space, ord)",
    ],
    # Fewer index writes per commit, more HOT updates. `tasks_kind` (tasks by kind in id order,
    # for find_tasks(kind=...): no sort, a limit stops early) replaces an index on (space, kind,
    # state): an UPDATE that changes an indexed column is never HOT, so every state change of a
    # task wrote into every index of `tasks`; now only entering or leaving `live` (the predicate
    # of `tasks_live`) does, and a find by a live state reads `tasks_live`. A fillfactor of 80
    # leaves a fifth of each page free for the updated versions of its rows (a HOT update needs
    # room on the same page); `documents` keeps 100 (its rows were all HOT-updated at 100). The
    # fillfactor applies to pages filled from now on (no VACUUM FULL: it would lock the table);
    # CREATE INDEX blocks commits to every space while it reads the table. IF (NOT) EXISTS: a
    # database that lost or gained an index by hand is not refused for it.
    5: [
        "DROP INDEX IF EXISTS durable.tasks_kind_state",
        "CREATE INDEX IF NOT EXISTS tasks_kind ON durable.tasks (space, kind, id)",
        f"ALTER TABLE durable.tasks SET (fillfactor = {TASKS_FILLFACTOR})",
    ],
    # Decisions on tool calls waiting for approval (durable.remote approve/deny), in the inbox:
    # a row with a `decision` (conversation_id and text '') is consumed by the commit applying it.
    # Also the records of SQLite's version 5 (no table changes for them).
    6: ["ALTER TABLE durable.inbox ADD COLUMN IF NOT EXISTS decision text"],
    # Long texts of live rows kept apart, in pieces (durable.storage.texts; SQLite's 7). SQLite's 6
    # (the commit mark) has nothing here: a server's log is not a file beside the session.
    7: [
        """CREATE TABLE durable.texts (
            space text NOT NULL,
            id bigint NOT NULL,
            body text NOT NULL,
            PRIMARY KEY (space, id)
        )""",
        "ALTER TABLE durable.tasks ADD COLUMN texts text",
        "ALTER TABLE durable.documents ADD COLUMN texts text",
    ],
    # The bytes of images and files in inputs and tool results (durable.records.content), once per
    # space, keyed by their sha256 (hex); SQLite's 8.
    8: [
        """CREATE TABLE durable.attachments (
            space text NOT NULL,
            sha256 text NOT NULL,
            media_type text NOT NULL,
            size bigint NOT NULL,
            data bytea NOT NULL,
            PRIMARY KEY (space, sha256)
        )""",
    ],
    # Per conversation, the number and the token total of the entries a model context may hold (no
    # compaction summary, none never sent again) and how many of them reference an image or a
    # file, kept by every commit that writes entries (`durable.storage.postgres.write`); `tokens`
    # NULL: a row was never counted; `attachments` NULL: not known (not looked for here: a space's
    # bodies may be sealed). Filled here for the conversations already there; SQLite's 9.
    9: [
        """CREATE TABLE durable.conversations (
            space text NOT NULL,
            conversation_id text NOT NULL,
            entries bigint NOT NULL,
            tokens bigint,
            attachments bigint,
            PRIMARY KEY (space, conversation_id)
        )""",
        "INSERT INTO durable.conversations (space, conversation_id, entries, tokens) "
        "SELECT space, conversation_id, count(*), CASE WHEN count(tokens) = count(*) THEN coalesce(sum(tokens), 0) END "
        f"FROM durable.entries WHERE {CONTEXT_ROWS} GROUP BY space, conversation_id",
    ],
    # No table changes: two rows may now map a field to one stream of pieces (a running tool's
    # output, kept once for its task and its live slot: `durable.storage.held`). A host running
    # an older durable would drop a stream another row still maps (a running tool's partial
    # output read back empty after a takeover); the version makes it refuse the space instead.
    10: [],
}
PG_SCHEMA_VERSION = max(MIGRATIONS)
DECISIONS = ("SELECT id, decision, created_at FROM durable.inbox WHERE space = %s AND decision IS NOT NULL "
             "ORDER BY ord LIMIT %s")  # a space's decisions from durable.remote, oldest first
# The SQLite schema version these migrations were last checked against (its 10: long bodies stored
# packed, which only SQLite does: a space's bodies stay JSON, read as before; and streams shared by
# two rows, PostgreSQL's 10; its 9: context totals,
# PostgreSQL's 9; also answers stored by reference and appends beside the file, which is how SQLite
# keeps rows and needs nothing here; its 8: attachments,
# PostgreSQL's 8; its 7: long texts apart, PostgreSQL's 7; its 6, the commit mark, needs nothing here). When
# durable.storage.sqlite.schema gains a version that changes records, add a PostgreSQL migration
# for it too (an empty one if no table changes), then update this number: a test
# (tests/storage/test_pg_schema.py) fails until whoever bumps the SQLite version has decided.
SQLITE_VERSION_SEEN = 10


def _version(conn: Any) -> int:
    exists = conn.execute("SELECT to_regclass('durable.meta') IS NOT NULL").fetchone()[0]
    if not exists:
        return 0
    row = conn.execute("SELECT value FROM durable.meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: Any, location: str) -> None:
    """Bring the database to the current schema (one transaction; a no-op when it is current).
    A newer schema is refused with `SchemaTooNew`, and nothing is changed."""
    version = _version(conn)
    if version == PG_SCHEMA_VERSION:
        return
    if version > PG_SCHEMA_VERSION:
        raise SchemaTooNew(location, version, PG_SCHEMA_VERSION)
    # A session lock taken before the transaction (not a transaction-level one): a transaction
    # that began before another process's migration committed could read stale catalogs.
    conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
    try:
        with conn.transaction():
            version = _version(conn)  # another process may have migrated while this one waited
            if version > PG_SCHEMA_VERSION:
                raise SchemaTooNew(location, version, PG_SCHEMA_VERSION)
            for v in range(version + 1, PG_SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[v]:
                    conn.execute(statement)
                if v == 3 and version > 0:  # before the migrations that count them (9)
                    _count_tokens(conn)
            conn.execute(
                "INSERT INTO durable.meta (key, value) VALUES ('schema_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(PG_SCHEMA_VERSION),))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))


def _count_tokens(conn: Any) -> None:
    """Migration 3: the `tokens` of the entries already there (each decoded once). A row that
    does not decode is left NULL: it is refused, naming it, when it is read."""
    counted = []
    for space, cid, seq, body in conn.execute("SELECT space, conversation_id, seq, body FROM durable.entries"):
        try:
            value: Entry = codec.loads(body, Entry)  # type: ignore[arg-type]  # a Union is no type[T] (no TypeForm)
        except codec.CodecError:
            continue
        counted.append((stored_tokens(value), space, cid, seq))
    with conn.cursor() as cur:
        cur.executemany("UPDATE durable.entries SET tokens = %s WHERE space = %s AND conversation_id = %s AND seq = %s",
                        counted)


def read_opened(conn: Any, space: str, location: str) -> tuple[Opened, HeldTexts]:
    """What a harness resumes from: each conversation's last seq, live document and last
    compaction, the live tasks, the unsettled submissions and the next task id; and the long
    texts the space keeps apart (`durable.storage.texts`). One snapshot."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        owners = [(f"live:{cid}", col) for cid, col in conn.execute(
            "SELECT conversation_id, texts FROM durable.documents WHERE space = %s AND texts IS NOT NULL", (space,))]
        owners += [(f"task:{tid}", col) for tid, col in conn.execute(
            "SELECT id, texts FROM durable.tasks WHERE space = %s AND live AND texts IS NOT NULL", (space,))]
        held = HeldTexts.load(owners, [(k, opened_piece(b, location)) for k, b in conn.execute(
            "SELECT id, body FROM durable.texts WHERE space = %s ORDER BY id", (space,))])
        found = conn.execute(
            """SELECT d.conversation_id, d.body, d.texts,
                      (SELECT max(seq) FROM durable.entries e
                        WHERE e.space = d.space AND e.conversation_id = d.conversation_id),
                      c.seq, c.body
                 FROM durable.documents d
                 LEFT JOIN LATERAL (
                     SELECT seq, body FROM durable.entries e
                      WHERE e.space = d.space AND e.conversation_id = d.conversation_id AND e.kind = 'compaction'
                      ORDER BY seq DESC LIMIT 1) c ON true
                WHERE d.space = %s
                ORDER BY d.conversation_id""", (space,)).fetchall()
        conversations: dict[str, ConversationState] = {}
        for cid, body, texts, last, comp_seq, comp_body in found:
            comp = rows.entry(cid, comp_seq, comp_body, location) if comp_seq is not None else None
            live = rows.live(body, cid, location, held.texts(f"live:{cid}") if texts else None)
            conversations[cid] = ConversationState(last or 0, live, comp)
        live_tasks = [rows.task(body, tid, location, held.texts(f"task:{tid}") if texts else None)
                      for tid, body, texts in conn.execute(
                          "SELECT id, body, texts FROM durable.tasks WHERE space = %s AND live ORDER BY id", (space,))]
        unsettled = [rows.submission(body, sid, location) for sid, body in conn.execute(
            "SELECT id, body FROM durable.submissions WHERE space = %s AND status = 'queued' ORDER BY ord",
            (space,))]
        max_id = conn.execute("SELECT max(id) FROM durable.tasks WHERE space = %s", (space,)).fetchone()[0] or 0
    return Opened(conversations, live_tasks, unsettled, max_id + 1), held


def read_rows(conn: Any, space: str, location: str = "") -> StoredRows:
    """Every row of `space` as stored, one snapshot, in the order `rows.decode_rows` expects; long
    texts kept apart joined back into their bodies (a database of a version before 6 has none);
    an encrypted space's bodies opened, its attachments by hash (`durable.storage.sealing`)."""
    def p(body: str) -> str:
        return plain(body, location)

    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        apart = conn.execute("SELECT to_regclass('durable.texts') IS NOT NULL").fetchone()[0]
        streams = stream_texts([(k, opened_piece(b, location)) for k, b in conn.execute(
            "SELECT id, body FROM durable.texts WHERE space = %s ORDER BY id", (space,))]) if apart else {}
        col = "texts" if apart else "NULL"
        skip, args = skip_tombstoned(space)  # a conversation being deleted is gone (a prune cut off)
        tasks = [(tid, cid, kind, state, live, parent, rows.joined_body(p(body), "task", col, streams))
                 for tid, cid, kind, state, live, parent, body, col in conn.execute(
                     f"SELECT id, conversation_id, kind, state, live, parent_id, body, {col} FROM durable.tasks "
                     f"WHERE space = %s AND {skip} ORDER BY id", (space, *args))]
        entries = [(cid, seq, kind, p(body)) for cid, seq, kind, body in conn.execute(
            f"SELECT conversation_id, seq, kind, body FROM durable.entries WHERE space = %s AND "
            f"{skip} ORDER BY conversation_id COLLATE \"C\", seq", (space, *args))]
        subs = [(sid, cid, status, p(body)) for sid, cid, status, body in conn.execute(
            f"SELECT id, conversation_id, status, body FROM durable.submissions WHERE space = %s "
            f"AND {skip} ORDER BY ord", (space, *args))]
        docs = [(cid, rows.joined_body(p(body), "live", col, streams)) for cid, body, col in conn.execute(
            f"SELECT conversation_id, body, {col} FROM durable.documents WHERE space = %s "
            "ORDER BY conversation_id COLLATE \"C\"", (space,))]
        stored = conn.execute("SELECT to_regclass('durable.attachments') IS NOT NULL").fetchone()[0]
        attachments = sorted((attachment_hash(key, size, bytes(data), location), media_type, size)
                             for key, media_type, size, data in conn.execute(
                                 "SELECT sha256, media_type, size, CASE WHEN octet_length(data) = size + %s THEN data "
                                 "ELSE ''::bytea END FROM durable.attachments WHERE space = %s",  # sealed: opened
                                 (OVERHEAD, space))) if stored else []
    return StoredRows(tasks, entries, subs, docs, attachments)
