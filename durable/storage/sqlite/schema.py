"""The SQLite schema of a session file, as numbered migrations.

A session file is recognised by its `application_id` and its `meta.schema_version` row. Every
table is STRICT. The indexes exist so that nothing on the engine's path scans history:

- `tasks_live`: a partial index over non-terminal tasks (what `open()` loads);
- `entries` is keyed by (conversation_id, seq): the newest entries and MAX(seq) are index seeks;
- `entries_compactions`: a partial index to find the last compaction of a conversation;
- `submissions_open`: a partial index over unsettled submissions;
- `tasks_kind` (version 4): tasks by kind, for `find_tasks(kind=...)`; a find by a live state
  reads `tasks_live` instead (`durable.storage.rows.find_tasks_query`).

Every index is a page or more that a commit writing its rows rewrites: one is added only for a
query the engine or the CLI makes, keyed where possible on columns that do not change after the
row is first written. `entries.tokens` (version 3): each entry's estimated tokens in a context
(`durable.tokens.stored_tokens`: -1 for one never sent again), so that a long conversation's
context is selected without decoding it; NULL: not counted (an old row that did not decode when
migrated; decoded when read). `meta` rows `session` and `barriers` (version 6): the commit mark
(`durable.storage.sqlite.mark`). `conversations` (version 9): context counts and token totals.
Version 10: long bodies packed (`durable.storage.packing`), streams shared (`storage.held`).
"""

from __future__ import annotations

from ..packing import ATTACHMENT_MARK
from ..rows import CONTEXT_ROWS

APPLICATION_ID = 0x44524231  # "DRB1"
SCHEMA_VERSION = 10

MIGRATIONS: dict[int, list[str]] = {
    1: [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT",
        """CREATE TABLE tasks (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            state TEXT NOT NULL,
            live INTEGER NOT NULL,
            parent_id INTEGER,
            body TEXT NOT NULL
        ) STRICT""",
        "CREATE INDEX tasks_live ON tasks (id) WHERE live = 1",
        "CREATE INDEX tasks_kind_state ON tasks (kind, state)",
        "CREATE INDEX tasks_parent ON tasks (parent_id) WHERE parent_id IS NOT NULL",
        """CREATE TABLE entries (
            conversation_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (conversation_id, seq)
        ) STRICT, WITHOUT ROWID""",
        "CREATE INDEX entries_compactions ON entries (conversation_id, seq) WHERE kind = 'compaction'",
        """CREATE TABLE submissions (
            id TEXT PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            status TEXT NOT NULL,
            body TEXT NOT NULL
        ) STRICT""",
        "CREATE INDEX submissions_open ON submissions (conversation_id) WHERE status = 'queued'",
        "CREATE TABLE documents (conversation_id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT",
    ],
    # Version 2 changes records, not tables: owed cancels (a `cancel` task kind),
    # `AssistantEntry.interrupted`, the `rounds` of generation phases and the answer's text and
    # seq in `Answered`. Older versions of durable refuse such a file cleanly; version-1 files
    # load as they are (every new field has a default).
    2: [],
    # Version 3: the estimated tokens of each entry. The migration (`opening.migrate`) fills
    # the column for the entries already there, decoding each once.
    3: ["ALTER TABLE entries ADD COLUMN tokens INTEGER"],
    # Version 4: fewer pages written per commit. `tasks_kind_state` (kind, state) changed on every
    # state change of every task, for a query the engine never makes (about one page of eight a
    # commit wrote); `tasks_kind` changes only when a task is created.
    # IF (NOT) EXISTS: a file that lost or gained an index by hand is not refused for it.
    4: [
        "DROP INDEX IF EXISTS tasks_kind_state",
        "CREATE INDEX IF NOT EXISTS tasks_kind ON tasks (kind)",
    ],
    # Version 5 changes records, not tables: the open task-kind registry (kinds' own inputs and
    # checkpoints), tool approval (`Approval`, `ToolProgress.arguments`/`started_at`/`ended_at`/
    # `paused`, `ToolInput.timeout`, `Live.approvals`), the run's notes (instructions, output
    # retries), structured output (`Submission.output`, `Answered.output`) and usage totals. Older
    # versions of durable refuse such a file cleanly (`SchemaTooNew`); version-4 files load as they
    # are (every new field has a default).
    5: [],
    # Version 6: the commit mark (`durable.storage.sqlite.mark`): the file's random session id and
    # the number of barrier commits it holds, each barrier counting itself.
    6: [
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('session', lower(hex(randomblob(16))))",
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('barriers', '0')",
    ],
    # Version 7: long texts of live rows kept apart, in pieces keyed by stream and number
    # (`durable.storage.texts`): a streamed answer is written by what it gained, not whole at every
    # commit. A row's `texts` column maps the fields blanked in its body to their streams. Older
    # rows keep their texts inline (NULL).
    7: [
        "CREATE TABLE texts (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT",
        "ALTER TABLE tasks ADD COLUMN texts TEXT",
        "ALTER TABLE documents ADD COLUMN texts TEXT",
    ],
    # Version 8: the bytes of images and files in inputs and tool results
    # (`durable.records.content`), once per session, keyed by their sha256 (hex); entries,
    # submissions and tool checkpoints reference them by hash, media type and size.
    8: [
        """CREATE TABLE attachments (
            sha256 TEXT PRIMARY KEY,
            media_type TEXT NOT NULL,
            size INTEGER NOT NULL,
            data BLOB NOT NULL
        ) STRICT""",
        # The inbox (`durable.storage.sqlite.inbox`): decisions on tool calls waiting for approval,
        # put there by another process (`durable console`), deleted by the commit applying each.
        "CREATE TABLE IF NOT EXISTS inbox (id TEXT PRIMARY KEY, call_id TEXT NOT NULL, "
        "created_at REAL NOT NULL, body TEXT NOT NULL) STRICT",
    ],
    # Version 9: per conversation, the number and the token total of the entries a model context
    # may hold (`CONTEXT_ROWS`, over all its seqs) and how many of them reference an image or a
    # file, kept by every commit that writes entries (`write.apply_rows`), so that opening a long
    # conversation counts its context without reading it. `tokens` NULL: a row was never counted
    # (an old row that did not decode); `attachments` NULL: not known (the rows of a file that was
    # encrypted when it was migrated). Filled here for the conversations already in the file.
    # Version 9 also changes how rows are kept: a long answer is stored once, its submission's
    # "done" status referring to its assistant entry (`"text_is_entry": true`, its text blanked:
    # `durable.storage.rows.answers_by_entry`), and the appends of lazy commits may wait beside
    # the file (`<file>-partials`: `durable.storage.sqlite.partials`). An older durable would read
    # such a submission as damaged and lose the appends; it refuses the file cleanly instead
    # (`SchemaTooNew`).
    9: [
        "CREATE TABLE conversations (conversation_id TEXT PRIMARY KEY, entries INTEGER NOT NULL, "
        "tokens INTEGER, attachments INTEGER) STRICT",
        "INSERT INTO conversations (conversation_id, entries, tokens, attachments) SELECT conversation_id, count(*), "
        "CASE WHEN count(tokens) = count(*) THEN coalesce(sum(tokens), 0) END, "
        "CASE WHEN (SELECT count(*) FROM meta WHERE key = 'encryption') = 0 "
        f"THEN sum(instr(body, '{ATTACHMENT_MARK}') > 0) END FROM entries WHERE {CONTEXT_ROWS} "
        "GROUP BY conversation_id",
    ],
    # Version 10 changes how bodies are kept, not tables: a long JSON body may be stored packed
    # (`z1:` + base64 of its deflated UTF-8: `durable.storage.packing`), so that a long answer
    # costs less than its length each time a row holds it. Only new writes pack; the rows already
    # there stay as they are and read as before. An older durable would read a packed row as
    # damaged; it refuses the file cleanly instead (`SchemaTooNew`). Version 10 also means that two
    # rows may map a field to one stream of pieces (a running tool's output, kept once for its
    # task and its live slot: `durable.storage.held`): an older durable would drop a stream
    # another row still maps (that row's text read back empty); it refuses the file too.
    10: [],
}
