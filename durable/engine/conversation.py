"""The host's handles on a conversation and on one of its inputs (`Harness.conversation()`,
`Conversation.submit()`), over what they need of the harness (`Host`)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any, Protocol, TypeVar, overload

from ..errors import ConversationBusy, InvalidInput, ToolDefinitionError, UnknownSubmission
from ..inputs import answer_text, check_submission_id, check_text
from ..records import Answered, Live, Queued, StoredEntry, Submission, SubmissionStatus, UsageTotals, rolled_up
from ..settings import Settings, WhenBusy
from ..storage.protocol import Storage
from ..tools.schema import output_schema as schema_of, output_value
from .clock import Clock
from .kinds import RunService
from .runtime import Runtime
from .session import Session

T = TypeVar("T")


class Host(Protocol):
    """What a conversation's handle uses of its harness (`durable.engine.harness.Harness`)."""

    storage: Storage
    settings: Settings
    clock: Clock
    runs: RunService
    output: dict[str, Any] | None

    @property
    def session(self) -> Session: ...

    @property
    def rt(self) -> Runtime: ...

    async def resume(self) -> None: ...

    def _check_open(self) -> None: ...

    def _raise_if_broken(self) -> None: ...


class Conversation:
    """A conversation of a harness; `harness.root` is the root conversation."""

    def __init__(self, harness: Host, conversation_id: str) -> None:
        self._h = harness
        self.id = conversation_id

    async def submit(self, text: str, *, when_busy: WhenBusy | None = None, id: str | None = None,
                     output: Any = None) -> SubmissionHandle:
        """Commit a user input (durable when this returns) and start or queue its run.

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
        be a JSON schema is `InvalidInput`, before anything is written."""
        h = self._h
        h._check_open()
        check_text(text, self.id)
        schema = output_schema(output) if output is not None else h.output
        policy = when_busy or h.settings.when_busy
        if policy not in ("queue", "interrupt", "reject"):
            raise ValueError(f"when_busy must be 'queue', 'interrupt' or 'reject', not {policy!r}")
        if id is None:
            return await self._place(Submission(f"sub_{uuid.uuid4().hex[:16]}", self.id, text,
                                                created_at=h.clock.now(), output=schema), policy)
        check_submission_id(id)
        await h.resume()
        # One placing per id at a time in this process: a second caller waits, then finds the first.
        async with h.session.placing(id):
            known = h.session.submissions.get(id) or await h.storage.get_submission(id)
            if known is None:
                return await self._place(Submission(id, self.id, text, created_at=h.clock.now(), output=schema),
                                         policy)
        if (known.conversation_id, known.text) != (self.id, text):
            raise InvalidInput(f"Submission id {id!r} in {h.storage.location} is taken by another input (in "
                               f"conversation {known.conversation_id!r}, text {_preview(known.text)}); the input "
                               f"was not accepted")
        if known.output != schema:
            raise InvalidInput(f"Submission id {id!r} in {h.storage.location} is taken by an input with another "
                               f"output schema; the input was not accepted")
        return SubmissionHandle(h, id)

    async def _place(self, sub: Submission, policy: WhenBusy) -> SubmissionHandle:
        h = self._h
        h._check_open()
        await h.resume()
        conv = h.session.conversation(self.id)
        run = conv.live.run
        if run is not None and policy == "reject":
            raise ConversationBusy(
                f"Conversation {self.id!r} is busy (run of task {run.task_id}); the input was not accepted"
            )
        change = h.session.change()
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

    async def compact(self) -> int:
        """Start a compaction of this conversation; returns its task id."""
        self._h._check_open()
        await self._h.resume()
        return await self._h.runs.compact(self._h.rt, self.id)

    def live(self) -> Live:
        """The live document as committed."""
        return self._h.session.conversation(self.id).committed_live

    def usage(self) -> UsageTotals:
        """What this conversation used so far, as committed: requests and tokens per model, tool
        calls and tool runtime (see `durable.UsageTotals`), with its sub-agents' rolled up (their
        conversations' totals added; `live().usage` is its own). Kept as running totals in the live
        documents: reading them reads no history."""
        convs = self._h.session.convs
        return rolled_up({cid: c.committed_live for cid, c in convs.items()}, self.id)

    def follow(self) -> AsyncIterator[Live]:
        """Every committed change of the live document, in commit order (ends at close)."""
        return self._h.session.follow(self.id)

    async def entries(self, from_seq: int = 1, to_seq: int | None = None) -> list[StoredEntry]:
        self._h._check_open()
        return await self._h.storage.get_entries(self.id, from_seq, to_seq)

    def submission(self, submission_id: str) -> SubmissionHandle:
        return SubmissionHandle(self._h, submission_id)


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
