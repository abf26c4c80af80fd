"""`SubmissionHandle.stream()`: one submission's run as typed events (`durable.engine.stream_events`),
derived from the commits of its conversation (the committed live document, and the entries and
submissions committed with it), never from the head.

A `Differ` keeps what it has shown (the current message's text, the calls started and their
output, the retry and approvals announced) and turns each commit into the events that take a
reader from the previous commit to it:
- text grows with the partial message; when the message is committed as an assistant entry (a
  tool round starts, the run ends, an attempt fails) the rest of its text follows, so the text
  events of a message add up to its entry even when coalescing never showed its tail;
- an attempt that starts over (a retry, a crash, a clean close in the middle of a request) is an
  `AttemptRestartedEvent`, then its text from the start;
- tool calls start when their slot appears and end with their result entry;
- `SettledEvent`, last, in the commit that settles the submission.

Commits of other runs (inputs queued before this one) are skipped. A stream obtained later (after
a reopen) starts from what is committed: the partial in the live document is its first text.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from ..records import (
    AssistantEntry,
    Live,
    Queued,
    RetryLive,
    StoredEntry,
    Submission,
    SubmissionStatus,
    ToolCall,
    ToolResultEntry,
    reasoning_text,
)
from ..storage.protocol import Batch
from .stream_events import (
    ApprovalRequestedEvent,
    AttemptRestartedEvent,
    ReasoningDeltaEvent,
    RetryWaitingEvent,
    SettledEvent,
    SubmissionEvent,
    TextDeltaEvent,
    ToolCallEndedEvent,
    ToolCallStartedEvent,
    ToolOutputEvent,
)
from .stream_host import StreamHost

# The streamed channels of a message: (what the partial shows, what the entry holds, the event).
# Reasoning first (models reason before they answer). Only the answer's text decides whether an
# ended message is the one shown: the reasoning of an entry is its blocks' text joined by blank
# lines, which a stream of several blocks does not show between them.
_CHANNELS: tuple[tuple[Callable[[Any], str], Callable[[AssistantEntry], str], type[Any]], ...] = (
    (lambda m: m.reasoning, lambda e: reasoning_text(e.reasoning), ReasoningDeltaEvent),
    (lambda m: m.text, lambda e: e.text, TextDeltaEvent),
)
_TEXT = 1  # the channel of the answer's text
_KEPT = ("stop", "tool_use", "length")  # a message ending so is kept; any other was given up


class Differ:
    """The events of one submission's run, commit by commit (see the module docstring)."""

    def __init__(self, submission_id: str, seq: int | None = None) -> None:
        self.submission_id = submission_id
        self.seq = seq  # the input's entry: the entries of its run come after it
        self.attempt: int | None = None  # the attempt shown
        self.shown = [""] * len(_CHANNELS)  # per channel, the current message's text shown
        self.given_up = False  # the shown message was given up: the next one starts over
        self.retry: RetryLive | None = None  # the retry announced last
        self.calls: dict[str, ToolCall] = {}  # the run's calls, by id
        self.outputs: dict[str, str] = {}  # the calls started, and their output shown
        self.approvals: set[str] = set()
        self.done = False

    def know_calls(self, entries: list[StoredEntry]) -> None:
        """Learn the calls of entries committed before the stream started (a round in progress)."""
        for stored in entries:
            if isinstance(stored.entry, AssistantEntry):
                self.calls.update((c.id, c) for c in stored.entry.tool_calls)

    def step(self, live: Live, entries: tuple[StoredEntry, ...] = (),
             submissions: tuple[Submission, ...] = ()) -> list[SubmissionEvent]:
        """The events of one commit: the live document after it, the entries it appended and the
        submissions it wrote (all of this conversation)."""
        events: list[SubmissionEvent] = []
        mine = [s for s in submissions if s.id == self.submission_id]
        if mine and mine[-1].seq is not None:
            self.seq = mine[-1].seq  # placed: its run begins in this commit (after another's end, maybe)
        settled = next((s for s in mine if s.settled), None)
        if settled is None and (live.run is None or self.submission_id not in live.run.inputs):
            return events  # another run's commit, or this one's not begun
        for stored in entries:
            entry = stored.entry
            if self.seq is None or stored.seq < self.seq:
                continue  # the end of the run before
            if isinstance(entry, AssistantEntry):
                self._message_ended(entry, events)
            elif isinstance(entry, ToolResultEntry):
                self._call_ended(entry, events)
        if settled is not None:
            assert not isinstance(settled.status, Queued)
            events.append(SettledEvent(settled.status))
            self.done = True
            return events
        self._generation(live, events)
        self._tools(live, events)
        return events

    def _message_ended(self, entry: AssistantEntry, events: list[SubmissionEvent]) -> None:
        texts = [of_entry(entry) for _, of_entry, _ in _CHANNELS]
        if not texts[_TEXT].startswith(self.shown[_TEXT]):
            events.append(AttemptRestartedEvent(entry.attempt))  # not the message shown: it stands on its own
            self.shown = [""] * len(_CHANNELS)
        for (_, _, event), text, shown in zip(_CHANNELS, texts, self.shown, strict=True):
            if text.startswith(shown) and text[len(shown):]:
                events.append(event(text[len(shown):]))
        self.shown = [""] * len(_CHANNELS)
        self.given_up = entry.stop_reason not in _KEPT
        self.attempt = entry.attempt
        self.calls.update((c.id, c) for c in entry.tool_calls)

    def _generation(self, live: Live, events: list[SubmissionEvent]) -> None:
        gen = live.generation
        if gen is None:
            return
        if gen.retry is not None:
            if gen.retry != self.retry:
                self.retry = gen.retry
                events.append(RetryWaitingEvent(gen.retry))
            self.attempt, self.given_up = gen.attempt, True
            return
        if self.attempt is not None and (gen.attempt != self.attempt or self.given_up):
            events.append(AttemptRestartedEvent(gen.attempt))
            self.shown = [""] * len(_CHANNELS)
        self.attempt, self.given_up = gen.attempt, False
        for i, (of_partial, _, event) in enumerate(_CHANNELS):
            text, shown = of_partial(gen.message), self.shown[i]
            if text != shown and text.startswith(shown):
                events.append(event(text[len(shown):]))
                self.shown[i] = text

    def _tools(self, live: Live, events: list[SubmissionEvent]) -> None:
        for slot in live.tools:
            shown = self.outputs.get(slot.call_id)
            if shown is None or not slot.output.startswith(shown):  # new, or a safe call run again
                call = self.calls.get(slot.call_id)
                events.append(ToolCallStartedEvent(slot.call_id, slot.name, call.arguments if call else ""))
                shown = ""
            if slot.output != shown:
                events.append(ToolOutputEvent(slot.call_id, slot.name, slot.output[len(shown):]))
            self.outputs[slot.call_id] = slot.output
        for ask in live.approvals:
            if ask.call_id not in self.approvals:
                self.approvals.add(ask.call_id)
                events.append(ApprovalRequestedEvent(ask.call_id, ask.tool, ask.arguments, ask.deadline))

    def _call_ended(self, result: ToolResultEntry, events: list[SubmissionEvent]) -> None:
        if result.call_id not in self.outputs:  # ended before its slot was seen (an abort, a late stream)
            call = self.calls.get(result.call_id)
            events.append(ToolCallStartedEvent(result.call_id, result.tool_name, call.arguments if call else ""))
        self.outputs.pop(result.call_id, None)
        events.append(ToolCallEndedEvent(result.call_id, result.tool_name, result.content, result.is_error))


class _Watch:
    """The commits of one conversation, queued as they are published (a `session.Watcher`)."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        Item = tuple[Live | None, tuple[StoredEntry, ...], tuple[Submission, ...]]
        self.send, self.receive = anyio.create_memory_object_stream[Item](math.inf)

    def committed(self, batch: Batch) -> None:
        cid = self.conversation_id
        entries = tuple(e for e in batch.entries if e.conversation_id == cid)
        subs = tuple(s for s in batch.submissions if s.conversation_id == cid)
        live = batch.live.get(cid)
        if live is not None or entries or subs:
            self.send.send_nowait((live, entries, subs))

    def closed(self) -> None:
        self.send.close()


async def stream_submission(h: StreamHost, submission_id: str,
                            settled: Callable[[], Awaitable[SubmissionStatus]]) -> AsyncIterator[SubmissionEvent]:
    """The events of `submission_id` (see `SubmissionHandle.stream`); `settled()` waits for its
    status, for a submission this harness does not know unsettled."""
    h._check_open()
    session = h.session
    sub = session.submissions.get(submission_id)
    if sub is None:  # settled (before, or by a commit in flight), or unknown: only the status is left
        status = await settled()
        assert not isinstance(status, Queued)
        yield SettledEvent(status)
        return
    cid = sub.conversation_id
    watch = _Watch(cid)
    session.watchers.append(watch)  # in the same step as the snapshot below: no commit falls between
    live = session.conversation(cid).committed_live
    differ = Differ(submission_id, sub.seq)
    try:
        if live.tools and sub.seq is not None:  # a round in progress: its calls are in the entries
            differ.know_calls(await h.storage.get_entries(cid, sub.seq))
        await h.resume()
        for event in differ.step(live):
            yield event
        async with watch.receive:
            async for changed, entries, subs in watch.receive:
                live = changed or live
                for event in differ.step(live, entries, subs):
                    yield event
                if differ.done:
                    return
        h._raise_if_broken()  # closed: the stream ends (the run goes on in the next process)
    finally:
        if watch in session.watchers:
            session.watchers.remove(watch)
        watch.send.close()


__all__ = ["Differ", "stream_submission"]
