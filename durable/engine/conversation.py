"""The host's handles on a conversation and on one of its inputs (`Harness.conversation()`,
`Conversation.submit()`), over what they need of the harness (`Host`)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from .._frozen import evolve
from ..content import Blobs, Content, content_parts
from ..errors import (
    ConversationArchived,
    ConversationBusy,
    ConversationNotEnded,
    InvalidInput,
    ToolDefinitionError,
    UnknownSubmission,
)
from ..inputs import answer_text, check_submission_id, check_text
from ..models.protocol import Model, check_settings
from ..prices import in_force
from ..records import (
    Answered,
    ConversationInfo,
    Live,
    ModelSettings,
    Part,
    Queued,
    StoredEntry,
    Submission,
    SubmissionStatus,
    Unanswered,
    UsageTotals,
    rolled_up,
)
from ..records.model_settings import NO_SETTINGS, merge
from ..settings import Settings, WhenBusy
from ..storage.retention import PruneReport
from ..tools import ToolRegistry
from ..tools.schema import output_schema as schema_of, output_value
from . import retention
from .clock import Clock
from .kinds import RunService
from .runtime import Runtime
from .stream_host import StreamHost

if TYPE_CHECKING:  # imported when used: a recovering process needs neither
    from .history import Format
    from .stream_events import SubmissionEvent

T = TypeVar("T")


class Host(StreamHost, Protocol):
    """What a conversation's handle uses of its harness (`durable.engine.harness.Harness`): what a
    stream uses (its storage and session, `resume`, the open and broken checks), and more."""

    settings: Settings
    clock: Clock
    runs: RunService
    output: dict[str, Any] | None
    model: Model
    tools: ToolRegistry

    @property
    def rt(self) -> Runtime: ...


class Conversation:
    """A conversation of a harness; `harness.root` is the root conversation."""

    __slots__ = ("_h", "id", "model_settings")  # a host may hold one per conversation: no dict each

    def __init__(self, harness: Host, conversation_id: str, model_settings: ModelSettings | None = None) -> None:
        self._h = harness
        self.id = conversation_id
        self.model_settings = model_settings
        if model_settings is not None:
            _check(harness, merge(harness.settings.model_defaults, model_settings), harness.output is not None)

    async def submit(self, text: str | Content | Sequence[str | Content], *, when_busy: WhenBusy | None = None,
                     id: str | None = None, output: Any = None,
                     model_settings: ModelSettings | None = None) -> SubmissionHandle:
        """Commit a user input (durable when this returns) and start or queue its run.

        `text` is a string, a `durable.Image` or `durable.File`, or a list of parts: strings,
        images and files, in order. The bytes of each image and file are stored once per session (by sha256) in the
        commit of the input; one over `settings.max_attachment_bytes` is `AttachmentTooLarge`
        (naming the file and the limit), and a part of another type `AttachmentError`, before
        anything is written.

        `when_busy` (default `settings.when_busy`) says what to do while a run is active:
        "queue" answers it after the run, "interrupt" stops the run now, "reject" raises
        `ConversationBusy`. `id` (chosen by the caller) makes the call safe to retry: an input of
        that id already committed, in this process or an earlier one, is returned as it is (no
        second input, whatever `when_busy` says); the same id with another text, in another
        conversation or with another output schema is `InvalidInput` naming the id.

        `output` (default: the harness's `output`): a type the answer must be (an attrs class, a
        dataclass, a TypedDict, primitives, lists, unions...): its JSON schema is stored with the
        input, the model is asked for it natively, and an answer that does not match goes back
        to the model with the errors (`settings.output_retries` times, then the run ends
        `unanswered{output_invalid}`); `await handle.answer(T)` returns a `T`. A type that cannot
        be a JSON schema is `InvalidInput`, before anything is written.

        `model_settings` (`durable.ModelSettings`) are merged over the harness's and this handle's
        and stored with the input: its run asks for them, also when sent again after a crash. A
        setting the model cannot honour is `UnsupportedModelSetting` (naming the model and the
        setting), before anything is written."""
        h = self._h
        h._check_open()
        words, parts, blobs = input_parts(text, self.id, h.settings.max_attachment_bytes)
        schema = output_schema(output) if output is not None else h.output
        layer = merge(self.model_settings, model_settings)
        _check(h, merge(h.settings.model_defaults, layer), schema is not None)
        asked = layer if layer != NO_SETTINGS else None
        policy = when_busy or h.settings.when_busy
        if policy not in ("queue", "interrupt", "reject"):
            raise ValueError(f"when_busy must be 'queue', 'interrupt' or 'reject', not {policy!r}")
        if id is None:
            return await self._place(Submission(f"sub_{os.urandom(8).hex()}", self.id, words,
                                                created_at=h.clock.now(), output=schema, parts=parts,
                                                model_settings=asked), policy, blobs)
        check_submission_id(id)
        await h.resume()
        # One placing per id at a time in this process: a second caller waits, then finds the first.
        async with h.session.placing(id):
            known = h.session.submissions.get(id) or await h.storage.get_submission(id)
            if known is None:
                return await self._place(Submission(id, self.id, words, created_at=h.clock.now(), output=schema,
                                                    parts=parts, model_settings=asked), policy, blobs)
        if (known.conversation_id, known.text, known.parts) != (self.id, words, parts):
            raise InvalidInput(f"Submission id {id!r} in {h.storage.location} is taken by another input (in "
                               f"conversation {known.conversation_id!r}, text {_preview(known.text)}); the input "
                               f"was not accepted")
        if known.output != schema:
            raise InvalidInput(f"Submission id {id!r} in {h.storage.location} is taken by an input with another "
                               f"output schema; the input was not accepted")
        if known.model_settings != asked:
            raise InvalidInput(f"Submission id {id!r} in {h.storage.location} is taken by an input with other "
                               f"model settings; the input was not accepted")
        return SubmissionHandle(h, id)

    async def _place(self, sub: Submission, policy: WhenBusy, blobs: Blobs, *, remote: bool = False
                     ) -> SubmissionHandle:
        """Place `sub` (with the bytes of its images and files, `blobs`); refused
        (`ConversationArchived`) in an archived conversation, except an input from the store's inbox
        (`remote`), committed there answered `unanswered{archived}`."""
        h = self._h
        h._check_open()
        await h.resume()
        if self.id in h.session.deleting:
            raise ConversationNotEnded(f"Conversation {self.id!r} in {h.storage.location} is being deleted; the "
                                       f"input was not accepted")
        conv = h.session.conversation(self.id)
        run = conv.live.run
        if self._archived():
            refusal = ConversationArchived(f"Conversation {self.id!r} in {h.storage.location} is archived; the "
                                           f"input was not accepted (unarchive it first)")
            if not remote:
                raise refusal
            change = h.session.change()
            change.put_submission(evolve(sub, status=Unanswered("archived", str(refusal))))
            await h.rt.commit(change, retry=False)
            return SubmissionHandle(h, sub.id)
        if run is not None and policy == "reject":
            raise ConversationBusy(
                f"Conversation {self.id!r} is busy (run of task {run.task_id}); the input was not accepted"
            )
        change = h.session.change()
        change.put_attachments(blobs)  # in the commit of the input that references them
        if run is None and not conv.queued:
            h.runs.begin_run(h.rt, change, self.id, [sub])
        else:
            change.put_submission(sub)
        await h.rt.commit(change, retry=False)  # a refusal reaches the caller: the input was not accepted
        if run is not None and policy == "interrupt":
            await h.runs.stop_run(h.rt, self.id, "interrupted")
        return SubmissionHandle(h, sub.id)

    async def abort(self) -> None:
        """Abort the active run (if any): its abort handler keeps the partial answer, answers
        unstarted tool calls as aborted and ends the run `unanswered{reason: aborted}`."""
        self._h._check_open()
        await self._h.resume()
        await self._h.runs.stop_run(self._h.rt, self.id, "aborted")

    async def archive(self) -> None:
        """Archive the conversation: it refuses new input (`ConversationArchived`) until
        `unarchive()`. A run in it ends as an expected exit, as an abort does (the partial kept,
        tools in flight stopped, their calls answered), its inputs and those queued answered
        `unanswered{archived}`, nothing charged; the flag is committed with that ending, in one
        commit. Returns once the archive is committed; workers and resumes leave it alone."""
        self._h._check_open()
        await self._h.resume()
        await self._h.runs.archive(self._h.rt, self.id)

    async def unarchive(self) -> None:
        """Let an archived conversation take input again (one commit)."""
        self._h._check_open()
        await self._h.resume()
        await self._h.runs.unarchive(self._h.rt, self.id)

    def _archived(self) -> bool:
        """Whether the conversation is archived, or being archived (its run is stopping for it)."""
        rt = self._h.rt
        live = rt.live(self.id)
        task = rt.task(live.run.task_id) if live.run else None
        return live.archived or (task is not None and task.stop == "archived")

    async def fork(self, new_id: str, at_seq: int | None = None) -> Conversation:
        """A new conversation `new_id` whose history is this one's up to `at_seq` (default: all),
        committed in one commit, its entries copied as stored (never encoded again). For "retry
        from here" and "edit a message": fork at the seq before the message, then submit the
        edited text to the fork. `ForkRefused` (naming both) when `new_id` exists, or while this
        conversation has an active run at that point (any active run when `at_seq` is None; one
        whose inputs come after `at_seq` is not in the way)."""
        self._h._check_open()
        await self._h.resume()
        from .fork import fork

        await fork(self._h.session, self.id, new_id, at_seq)
        return Conversation(self._h, new_id)

    async def seed(self, messages: Any, *, format: Format | None = None) -> int:
        """Import an existing history into this idle, empty conversation, as one commit of entries
        (the conversation stays idle): messages in the OpenAI chat format (`"openai_chat"`), the
        OpenAI Responses input format (`"openai_responses"`) or the Anthropic messages format
        (`"anthropic"`), detected unless `format` is given. Text, tool calls and tool results
        (each result after its call); `InvalidHistory` names the message index and field of what
        cannot be imported (images are refused: durable has no image entries). Returns the
        number of entries written."""
        self._h._check_open()
        await self._h.resume()
        if self._archived():
            raise ConversationArchived(f"Conversation {self.id!r} in {self._h.storage.location} is archived; the "
                                       f"history was not imported")
        from .history import seed

        return await seed(self._h.session, self.id, messages, format)

    async def compact(self) -> int:
        """Start a compaction of this conversation; returns its task id."""
        self._h._check_open()
        await self._h.resume()
        return await self._h.runs.compact(self._h.rt, self.id)

    async def delete(self) -> PruneReport:
        """Delete this ended conversation: its entries, tasks, submissions and live document, in
        bounded commits, crash-safe (docs/spec.md §6; `durable.engine.retention`). Raises
        `ConversationNotEnded` when it has a live task or an unsettled input."""
        return await retention.prune(self._h, ended_before=None, only=self.id)

    def live(self) -> Live:
        """The live document as committed."""
        return self._h.session.conversation(self.id).committed_live

    def usage(self) -> UsageTotals:
        """What this conversation used so far, as committed: requests, tokens and cost per model,
        tool calls and tool runtime (see `durable.UsageTotals`), with its sub-agents' rolled up
        (their conversations' totals added; `live().usage` is its own), costed with
        `settings.prices`. Kept as running totals in the live documents: reading them reads no
        history."""
        convs = self._h.session.convs
        totals = rolled_up({cid: c.committed_live for cid, c in convs.items()}, self.id)
        return in_force(self._h.settings.prices).priced(totals)

    def follow(self) -> AsyncIterator[Live]:
        """Every committed change of the live document, in commit order (ends at close)."""
        return self._h.session.follow(self.id)

    async def entries(self, from_seq: int = 1, to_seq: int | None = None) -> list[StoredEntry]:
        self._h._check_open()
        return await self._h.storage.get_entries(self.id, from_seq, to_seq)

    def submission(self, submission_id: str) -> SubmissionHandle:
        return SubmissionHandle(self._h, submission_id)


def listed(h: Host) -> list[ConversationInfo]:
    """Every conversation of the session, by id, as committed (a `ConversationInfo` each): those
    that took an input, were seeded, forked or archived, sub-agents' included (their `parent`
    set); not those deleted (or being deleted). Read from the live documents the harness holds
    (all of them, loaded at open: after a crash, the list as last committed), never from
    history; a conversation only named (`h.conversation(id)`) is not listed until its first commit."""
    prices = in_force(h.settings.prices)
    session = h.session
    return [ConversationInfo.of(cid, c.last_seq, c.committed_live, prices.priced(c.committed_live.usage))
            for cid, c in sorted(session.convs.items()) if c.stored and cid not in session.deleting]


def input_parts(text: object, conversation_id: str, limit: int) -> tuple[str, tuple[Part, ...], Blobs]:
    """An input's text, its parts (none for a string) and the bytes to store (see `submit`)."""
    if isinstance(text, str) or not isinstance(text, (list, tuple, Content)):
        return check_text(text, conversation_id), (), {}
    words, parts, blobs = content_parts(text, f"the input for conversation {conversation_id!r}", limit)
    if not blobs:
        check_text(words, conversation_id)
    return words, parts, blobs


def _check(h: Host, settings: ModelSettings, structured: bool) -> None:
    """`UnsupportedModelSetting` when the harness's model cannot honour `settings`."""
    check_settings(h.model, settings, h.tools.specs, structured)


def output_schema(output: Any) -> dict[str, Any]:
    """The JSON schema of answers of type `output` (`InvalidInput` when it cannot be one)."""
    try:
        return schema_of(output)
    except ToolDefinitionError as exc:
        raise InvalidInput(f"{exc}; it cannot be asked for as structured output") from None


def _preview(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


class SubmissionHandle:
    """A submitted input. `await wait()` returns its result once settled (also in a later process)."""

    __slots__ = ("_h", "id")

    def __init__(self, harness: Host, submission_id: str) -> None:
        self._h = harness
        self.id = submission_id

    async def get(self) -> Submission:
        sub = await self._h.storage.get_submission(self.id)
        if sub is None:
            raise UnknownSubmission(f"Submission {self.id} does not exist in {self._h.storage.location}")
        return sub

    async def wait(self) -> SubmissionStatus:
        """Wait until the submission settles; returns `Answered(text, seq)` or `Unanswered(reason, detail)`.
        A submission this harness knows unsettled is waited for without reading the store: its
        settled record is handed over by the commit that settles it."""
        h = self._h
        if not h.session.unsettled(self.id):
            sub = await self.get()  # settled before, or not known here: the store says
            if not isinstance(sub.status, Queued):
                return sub.status
        await h.resume()
        settled = await h.session.wait_settled(self.id)
        h._raise_if_broken()
        return (settled or await self.get()).status

    def stream(self) -> AsyncIterator[SubmissionEvent]:
        """The submission's run as typed events, derived from committed state only (see
        `durable.engine.stream_events`): `TextDeltaEvent`s of the answer as its partial is
        committed (coalesced by `settings.progress.persist_within`; the rest of a message comes
        when it is committed as an entry), `AttemptRestartedEvent` when an attempt starts over
        after a retry or a crash (then its text from the start), `RetryWaitingEvent`, the tool
        calls (`ToolCallStartedEvent`, `ApprovalRequestedEvent`, `ToolOutputEvent`,
        `ToolCallEndedEvent`), and last `SettledEvent` with what `wait()` returns.

        It starts from what is committed when it is called: a stream obtained in a new process
        after a crash first shows the partial the dead process committed, then what recovery
        does with it. A submission that already settled yields only its `SettledEvent`. The
        stream resumes the harness; it ends early (without a `SettledEvent`) when the harness
        closes. Breaking out of it is fine: the run goes on."""
        from .streaming import stream_submission  # imported by the first stream: a recovery needs none

        return stream_submission(self._h, self.id, self.wait)

    @overload
    async def answer(self) -> str: ...

    @overload
    async def answer(self, output: type[T]) -> T: ...

    async def answer(self, output: Any = None) -> Any:
        """Wait until the submission settles and return the answer's text or, given the type it
        was submitted with (`output`), the answer as that type. Raises `SubmissionUnanswered`
        (with the `reason` and `detail`) when its run ended without one, and `InvalidInput` when
        a type is given for an input that was not submitted with one."""
        status = await self.wait()
        text = answer_text(status, self.id, self._h.storage.location)
        if output is None:
            return text
        assert isinstance(status, Answered)
        if status.output is None and (await self.get()).output is None:
            raise InvalidInput(f"Submission {self.id} was not submitted with an output type; its answer is text "
                               f"(call answer() without one)")
        return output_value(status.output, output)


__all__ = ["Conversation", "Host", "SubmissionHandle"]
