"""Every exception a user of durable can meet, as classes to catch. Messages are plain
sentences that name the file, task, conversation or tool concerned.

    DurableError
    +-- StorageError               the session file or space: names it (`location`)
    |   +-- SessionLocked, LockLost, SessionReadOnly, UnsafeSessionFile, NotASession,
    |   |   SchemaTooNew, CorruptSession, StorageClosed, CommitFailed (+-- DiskFull, CommitRefused)
    |   +-- ServerUnavailable (+-- CommitOutcomeUnknown)  PostgreSQL: names the server and space
    +-- HarnessError               the host API: HarnessClosed, ConversationBusy, UnknownTask, UnknownTaskKind,
    |   UnknownSubmission, SubmissionUnanswered, ToolResultRejected, ApprovalRejected (+-- EditRejected),
    |   IllegalTransition, ToolDefinitionError, ConversationArchived, ForkRefused; ToolArgumentError, InvalidHistory,
    |   InvalidInput (+-- AttachmentError +-- AttachmentTooLarge) (also ValueErrors)
    +-- MissingExtra (also an ImportError)  an optional extra is not installed
    +-- BackgroundJobsUnsupported, InvalidModelSettings (+-- UnsupportedModelSetting) (ValueErrors)
    +-- CodecError (also a ValueError)      durable.codec: a value without its record's shape
    +-- ModelError                          durable.models: a provider call failed (`kind`)
    +-- MissingCredentials (also a ValueError)  durable.models.errors: a provider without a key
    +-- MCPServerError, MCPCallError        durable.mcp: a server, or a call of one of its tools
    RetryTool (an Exception, not a DurableError)  raised by a tool to have the model call it again
Those naming a module live beside the code raising them; this one imports nothing (every layer may).
"""

from __future__ import annotations


class DurableError(Exception):
    """Base class of every error raised by durable."""


# --------------------------------------------------------------------------- storage


class StorageError(DurableError):
    """The session file (or storage) could not do what was asked. Names the file."""

    def __init__(self, message: str, *, location: str | None = None) -> None:
        super().__init__(message)
        self.location = location


class SessionLocked(StorageError):
    """Another process (or another harness in this process) owns the session file, or holds the
    lease on the session space (PostgreSQL: `host` and `owner` then name the holder too)."""

    def __init__(self, location: str, pid: int | None, *, host: str | None = None, owner: str | None = None,
                 what: str = "Session file") -> None:
        holder = f"process {pid}" if pid else "another process"
        if host:
            holder += f" on host {host}"
        if owner:
            holder += f" (owner {owner})"
        super().__init__(f"{what} {location} is already open in {holder}", location=location)
        self.pid = pid
        self.host = host
        self.owner = owner


class LockLost(StorageError):
    """This store no longer owns its file (or, on PostgreSQL, its lease on the space expired or was
    taken over), so it refuses to commit; nothing of the refused commit was written."""


class ServerUnavailable(StorageError):
    """The database server of a session space cannot be reached, refused the connection or the
    login (PostgreSQL). Names the server (host:port/database, never the password) and the space."""


class CommitOutcomeUnknown(ServerUnavailable):
    """The connection to the server was lost after a commit was sent and could not be made again
    in time, so whether the commit landed is unknown. The store refuses further commits: close it
    and open the space again (what it then reads is what landed)."""


class SessionReadOnly(StorageError):
    """The session file, or its folder, cannot be written by this process (permission denied, a
    read-only file system). The file is not damaged; nothing was changed."""


class UnsafeSessionFile(StorageError):
    """The session file, or a file beside it (-wal, -shm, -journal), is in a state durable will not
    write to: a symbolic link it did not create, a link to nothing, a file with other hard links,
    a file of another user, not a regular file, or a write-ahead log left without its database.
    Nothing was written; the message names the file and what to do."""


class NotASession(StorageError):
    """The file is not a durable session file (not SQLite, or SQLite of another program)."""


class SchemaTooNew(StorageError):
    """The file was written by a newer version of durable."""

    def __init__(self, location: str, found: int, supported: int) -> None:
        super().__init__(
            f"Session file {location} has schema version {found}; this version of durable reads "
            f"up to version {supported}. Upgrade durable to open it.",
            location=location,
        )
        self.found = found
        self.supported = supported


class CorruptSession(StorageError):
    """The file, or one record in it, cannot be read."""


class CommitFailed(StorageError):
    """A commit was rolled back as a whole (I/O error, or a record that cannot be stored).
    Nothing of it is visible; the store keeps working."""


class DiskFull(CommitFailed):
    """A commit was rolled back because the disk (or the file's size limit) is full. The message
    says how much space is left. A harness waits a full disk out for `disk_full_patience`
    seconds, then stops with this error (nothing acknowledged is lost: open the session again
    once space is back)."""


class CommitRefused(CommitFailed):
    """A commit was refused for what it holds (a value that cannot be stored, a constraint it
    breaks): trying it again cannot help, and it takes no other commit with it."""


class StorageClosed(StorageError):
    """The store was closed."""


# --------------------------------------------------------------------------- harness


class HarnessError(DurableError):
    """The harness refused or could not do what the host asked."""


class HarnessClosed(HarnessError):
    """The harness was closed (or crashed) and accepts no more work."""


class ConversationBusy(HarnessError):
    """An input was submitted with `when_busy="reject"` while a run was active."""


class ConversationArchived(HarnessError):
    """An input was submitted to an archived conversation (`Conversation.archive()`); the message
    names the conversation and the file."""


class ForkRefused(HarnessError):
    """`Conversation.fork()` was refused: the new id exists, or the source has an active run at the
    fork point; the message names both conversations and the file."""


class InvalidHistory(HarnessError, ValueError):
    """A history given to `Conversation.seed()` cannot be imported; the message names the message
    index and the field, and the conversation."""


class ConversationNotEnded(HarnessError):
    """`Conversation.delete()` of a conversation that is not idle (a live task or an unsettled
    input), or an input submitted to a conversation while it is being deleted."""


class UnknownTask(HarnessError):
    """No task with this id in the session (the message names the id and the file)."""


class UnknownTaskKind(HarnessError):
    """A task kind this process does not know: asked of a harness that does not have it, or held
    by a session file written by code that defined it (the message names the kind, and the file
    when it comes from one; `location` is the file or None)."""

    def __init__(self, message: str, *, location: str | None = None) -> None:
        super().__init__(message)
        self.location = location


class UnknownSubmission(HarnessError):
    """No submission with this id in the session (the message names the id and the file)."""


class SubmissionUnanswered(HarnessError):
    """`answer()` was asked of a submission whose run ended without an answer. `reason` and
    `detail` are those of its `Unanswered` status."""

    def __init__(self, message: str, *, reason: str, detail: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.detail = detail


class ToolResultRejected(HarnessError):
    """A client tool result was refused: unknown call, already answered, or not a client tool."""


class ApprovalRejected(HarnessError):
    """A decision on a tool call (`Harness.approve`, `Harness.deny`) was refused, and nothing was
    changed: no call of that id waits for a decision (unknown, not one that asks, already decided,
    or already ended), or the edited arguments do not match the tool's schema. `call_id` and
    `tool` (None when the call is unknown) name the call; the message says why."""

    def __init__(self, message: str, *, call_id: str, tool: str | None = None) -> None:
        super().__init__(message)
        self.call_id = call_id
        self.tool = tool


class EditRejected(ApprovalRejected):
    """Edited arguments of a tool call do not match the tool's schema kept with the waiting call
    (or are no JSON object): refused before anything is sent or decided (`durable console`: HTTP
    400; `durable.remote.RemoteSpace.approve`); the message names the call, the tool and each
    problem (the JSON path and the failed keyword)."""


class IllegalTransition(HarnessError):
    """Task code tried a move its kind's transition table does not allow (a bug in the kind).
    Names the task, its kind and both positions; nothing of that commit is written."""


class ToolDefinitionError(HarnessError):
    """A tool was defined with an invalid name, schema or replay policy."""


class ToolArgumentError(HarnessError, ValueError):
    """A tool call's arguments are not valid JSON, are nested too deeply, or do not match the
    tool's schema. The message names the tool, and each problem's JSON path and failed keyword;
    the model reads it as an error result and the run continues."""


class RetryTool(Exception):
    """Raised by a tool's `execute` to have the model call it again: the model reads the message
    as an error result (diagnostic code `retry`) and may call the tool again. A tool is retried
    at most its `max_retries` times per run (invalid arguments count too); the next one ends the
    call with an error result saying so (diagnostic code `retries_exhausted`).

        raise durable.RetryTool("No city named 'Pariss'; check the spelling")
    """


# --------------------------------------------------------------------------- installation


class WrongKey(StorageError):
    """An encrypted session file opened without its key, or with another key (or a key given for
    a store that cannot encrypt: `EncryptionUnsupported`); nothing was changed. Names the file."""


class EncryptionUnsupported(WrongKey):
    """An encryption key given where it cannot be used: to `open_harness` with a store object
    (a `PostgresStorage` takes its own `encryption_key`; a `MemoryStorage` cannot encrypt).
    Names the store."""


class MissingExtra(DurableError, ImportError):
    """An optional dependency is not installed (the OpenAI, Anthropic or Gemini SDK). The message says
    which extra to install, e.g. `pip install "durable-harness[openai]"`."""

    def __init__(self, what: str, package: str, extra: str, detail: str | None = None) -> None:
        state = f"which cannot be imported ({detail})" if detail else "which is not installed"
        super().__init__(f'{what} needs the {package} package, {state}: pip install "durable-harness[{extra}]"',
                         name=package)
        self.package = package
        self.extra = extra


# --------------------------------------------------------------------------- odd input


class InvalidInput(HarnessError, ValueError):
    """The host passed a value durable refuses before anything is written: a conversation id that
    is not a non-empty string, or holds a NUL or a lone surrogate (it could not be stored as
    UTF-8); an input that is not non-empty text. The message names the value (its repr)."""


class AttachmentError(InvalidInput):
    """An image or a file that cannot be an input or a tool result: a path that cannot be read, a
    media type that is not given and cannot be told from the bytes or the file's name, or one
    that is not an image for `durable.Image`. The message names the file (or says "bytes")."""


class AttachmentTooLarge(AttachmentError):
    """An image or a file larger than `settings.max_attachment_bytes`; refused before anything is
    committed. The message names the file, its size and the limit."""


class BackgroundJobsUnsupported(DurableError, ValueError):
    """A model was asked for deferred mode (background jobs) on an API or server that has none,
    e.g. `OpenAIModel(api="chat", deferred=True)` for a local OpenAI-compatible server. Raised at
    construction; the message names the base URL and says to use `deferred=False`."""


class InvalidModelSettings(DurableError, ValueError):
    """A `durable.ModelSettings` field, or a `Settings.model_options` key, that is not valid for
    any model: the message names the field (or key) and the value. Raised where it is made."""


class UnsupportedModelSetting(InvalidModelSettings):
    """A model setting the model cannot honour (seed on Anthropic, stop on the OpenAI Responses
    API, a `tool_choice` naming a tool the harness does not offer...): raised when the harness is
    made, a conversation handle is made or an input is submitted, never silently dropped. The
    message names the model (`model`) and the setting (`option`)."""

    def __init__(self, model: str, option: str, why: str) -> None:
        super().__init__(f"Model {model} cannot honour ModelSettings.{option}: {why}")
        self.model = model
        self.option = option
