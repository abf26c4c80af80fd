"""The invariants of what agents are built with, on the file and its witnesses: instructions,
structured output and usage. Each check returns its violations, one sentence each.

- instructions: every request of a run whose instructions were committed sent exactly them (the
  model's requests witness it), and once committed they never change within the run (the commit
  history witnesses it);
- structured output: an answered input of an output schema holds a value that matches it and is
  its answer's text; no run sent back more answers than `output_retries` allows;
- usage: a conversation's totals count at least every answer in it, and every distinct request
  the model saw for it;
- reasoning: a partial (unsigned) reasoning block is only on an entry never sent back (aborted
  or error), and no request the model saw carried one.
- attachments: every image or file an input, an entry or a tool's result references is stored,
  with the media type and size the reference says (its bytes came with the first reference).
- sub-agents: every child conversation was started by its call (named after it, one input), a
  waiting call's child and input exist, a call's wait is never billed as tool runtime; settled,
  no call waits for a child that answered and no child runs for a call that ended.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from ...records import (
    Answered,
    AssistantEntry,
    Attachment,
    CompactionEntry,
    StoredEntry,
    Task,
    ToolResultEntry,
    Usage,
    UserEntry,
)
from ...tasks.generation.records import notes_of
from ...tasks.tool import Delegated, ToolInput, ToolProgress
from ...texts import times
from ...tools.arguments import check_value
from .file_checks import Bounds
from .image import SessionImage

_KEY = re.compile(r"^g(\d+)-")


def check_outputs(image: SessionImage, runs: dict[int, list[StoredEntry]], bounds: Bounds) -> list[str]:
    out = []
    for sub in image.submissions.values():
        if sub.output is None or not isinstance(sub.status, Answered):
            continue
        value, problems = check_value(sub.output, sub.status.text)
        if problems:
            out.append(f"Submission {sub.id} is answered with text that does not match its output schema: "
                       f"{'; '.join(problems)}")
        elif value != sub.status.output:
            out.append(f"Submission {sub.id} holds an output that is not its answer's JSON")
    for task in image.tasks.values():
        if task.kind == "generation" and notes_of(task.checkpoint).output_retries > bounds.output_retries:
            out.append(f"Task {task.id} (generation) sent {notes_of(task.checkpoint).output_retries} answers back, "
                       f"past output_retries = {bounds.output_retries}")
    for task_id, entries in runs.items():
        sent_back = sum(1 for e in entries if isinstance(e.entry, UserEntry) and e.entry.submission_id is None)
        if sent_back > bounds.output_retries:
            out.append(f"The run of task {task_id} holds {sent_back} answers sent back to the model, past "
                       f"output_retries = {bounds.output_retries}")
    return out


def check_usage(image: SessionImage) -> list[str]:
    out = []
    for cid, entries in image.entries.items():
        copied = image.live[cid].forked_at if cid in image.live else 0  # a fork's copies: the source's usage
        answers = sum((e.entry.usage for e in entries
                       if isinstance(e.entry, (AssistantEntry, CompactionEntry)) and e.seq > copied), Usage())
        totals = image.live[cid].usage if cid in image.live else None
        counted = (totals.input_tokens, totals.output_tokens) if totals is not None else (0, 0)
        if counted[0] < answers.input_tokens or counted[1] < answers.output_tokens:
            out.append(f"The usage of conversation {cid!r} counts {counted[0]} input / {counted[1]} output tokens, "
                       f"fewer than its answers hold ({answers.input_tokens} / {answers.output_tokens})")
    return out


def check_requests_sent(image: SessionImage, requests: Sequence[Any]) -> list[str]:
    """What the model's requests witness: each sent a run's committed instructions and the bytes
    of every image and file its messages reference, and each conversation counts at least the
    distinct requests its runs sent."""
    out = []
    keys: dict[str, set[str]] = defaultdict(set)
    for request in requests:
        out += _unsent_bytes(request)
        match = _KEY.match(request.key)
        task = image.tasks.get(int(match.group(1))) if match else None
        if task is None:
            continue
        keys[task.conversation_id].add(request.key)
        text = notes_of(task.checkpoint).instructions
        if text is not None and request.system != text:
            out.append(f"Request {request.key} of task {task.id} was sent with other instructions than the run "
                       f"committed")
        if any(isinstance(e, AssistantEntry) and any(b.partial for b in e.reasoning) for e in request.messages):
            out.append(f"Request {request.key} of task {task.id} sent back a partial reasoning block")
    for cid, sent in sorted(keys.items()):
        counted = image.live[cid].usage.requests if cid in image.live else 0
        if counted < len(sent):
            out.append(f"Conversation {cid!r} counts {counted} request(s), but the model saw {len(sent)} of its runs")
    return out


def check_reasoning(image: SessionImage) -> list[str]:
    """A partial reasoning block (cut off, unsigned) is kept only on an entry never sent back."""
    return [f"Assistant entry {stored.seq} of conversation {cid!r} ({stored.entry.stop_reason}) holds a partial "
            f"reasoning block, which would be sent back"
            for cid, entries in sorted(image.entries.items()) for stored in entries
            if isinstance(stored.entry, AssistantEntry) and stored.entry.stop_reason not in ("aborted", "error")
            and any(b.partial for b in stored.entry.reasoning)]


def _unsent_bytes(request: Any) -> list[str]:
    sent = getattr(request, "attachments", {})
    out = []
    for entry in request.messages:
        for part in entry.parts if isinstance(entry, (UserEntry, ToolResultEntry)) else ():
            if not isinstance(part, Attachment):
                continue
            data = sent.get(part.sha256)
            if data is None or hashlib.sha256(data).hexdigest() != part.sha256:
                out.append(f"Request {request.key} was sent without the bytes of the {part.kind} {part.sha256}")
    return out


def check_instruction_history(batches: Iterable[Any]) -> list[str]:
    """Once a run's instructions are committed, no later commit of the run changes them."""
    out = []
    committed: dict[int, str] = {}
    changed: Counter[int] = Counter()
    for batch in batches:
        for task in {t.id: t for t in batch.tasks}.values():
            if not isinstance(task, Task) or task.kind != "generation":
                continue
            text = notes_of(task.checkpoint).instructions
            known = committed.get(task.id)
            if known is not None and text != known:
                changed[task.id] += 1
            if text is not None and known is None:
                committed[task.id] = text
    out += [f"The instructions of the run of task {tid} changed after they were committed ({times(n)})"
            for tid, n in sorted(changed.items())]
    return out


def check_attachments(image: SessionImage) -> list[str]:
    out = []
    referenced: list[tuple[str, tuple[Any, ...]]] = [(f"Submission {s.id}", s.parts)
                                                     for s in image.submissions.values()]
    for cid, entries in image.entries.items():
        referenced += [(f"Entry {e.seq} of conversation {cid!r}", e.entry.parts) for e in entries
                       if isinstance(e.entry, (UserEntry, ToolResultEntry))]
    for task in image.tasks.values():
        result = getattr(task.checkpoint, "result", None)
        if isinstance(result, ToolResultEntry):
            referenced.append((f"The result of task {task.id}", result.parts))
    for what, parts in referenced:
        for part in parts:
            if not isinstance(part, Attachment):
                continue
            stored = image.attachments.get(part.sha256)
            if stored is None:
                out.append(f"{what} references the {part.kind} {part.sha256}, which is not stored")
            elif stored != (part.media_type, part.size):
                out.append(f"{what} references the {part.kind} {part.sha256} as {part.media_type}, {part.size} bytes; "
                           f"it is stored as {stored[0]}, {stored[1]} bytes")
    return out


def check_subagents(image: SessionImage, quiescent: bool) -> list[str]:
    out = []
    for cid, live in sorted(image.live.items()):
        link = live.parent
        if link is None:
            continue
        call = image.tasks.get(link.task_id)
        if (call is None or call.conversation_id != link.conversation_id or not isinstance(call.input, ToolInput)
                or cid != f"{link.conversation_id}/{call.input.call.name}-{call.id}"):
            out.append(f"Conversation {cid!r} names task {link.task_id} as the sub-agent call that started it, "
                       f"which is not that call")
            continue
        sub = image.submissions.get(f"subagent-{call.id}")
        if sub is None or sub.conversation_id != cid:
            out.append(f"Conversation {cid!r} (a sub-agent) does not hold its input subagent-{call.id}")
        if quiescent and call.terminal and live.run is not None:
            out.append(f"Conversation {cid!r} (a sub-agent) still runs, but its call (task {call.id}) ended")
    for task in image.tasks.values():
        phase = task.checkpoint
        if isinstance(phase, Delegated) and not task.terminal:
            sub = image.submissions.get(phase.submission_id)
            if sub is None or sub.conversation_id != phase.conversation_id:
                out.append(f"Task {task.id} (tool) waits for conversation {phase.conversation_id!r}, which does not "
                           f"hold its input {phase.submission_id}")
            elif quiescent and sub.settled:
                out.append(f"Task {task.id} (tool) still waits for its sub-agent, whose input settled")
        elif (isinstance(task.input, ToolInput) and isinstance(phase, ToolProgress) and phase.started_at is not None
              and f"{task.conversation_id}/{task.input.call.name}-{task.id}" in image.live):
            out.append(f"Task {task.id} (tool) ran a sub-agent but was billed as tool runtime")
    return out


__all__ = ["check_attachments", "check_instruction_history", "check_outputs", "check_reasoning", "check_requests_sent",
           "check_subagents", "check_usage"]
