"""A generation's requests: what each one holds, the step to the next one within a run, and the
usage limits checked before each is sent.

`build` makes the request of an attempt: the run's instructions (assembled in `prepare`, else
the static ones), the conversation's context (a view, never a copy), the run's output schema and
the stored bytes of the images and files the context references (read again by every attempt:
a request cut off by a crash is sent again with the same bytes).
`next_request` writes, in the commit that closes a tool round or sends an answer back, the run's
next position: `request` (a barrier, counted as a request) or `prepare` when a compaction, a
deferred job or a usage limit must come first. `limit_passed` says which limit the next request
(or round of tool calls) would pass: a run ends `unanswered{usage_limit}` instead of sending it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..._frozen import evolve
from ...engine.instructions import static_text
from ...models.caching import cache_key
from ...models.fallback import member_of, model_name
from ...models.protocol import ModelRequest
from ...records import EMPTY_USAGE, GenerationLive, Live, ModelSettings, Running, StoredEntry, Task, UsageTotals
from ...records.model_settings import NO_SETTINGS
from ...settings import UsageLimits
from ...tokens import entry_tokens, estimate_tokens, in_context
from .. import usage
from . import members, output
from .records import LIMIT_PASSED, Prepare, Request, RunNotes, notes_of

if TYPE_CHECKING:
    from ...engine.head import Change
    from ...engine.runtime import Runtime
    from ..compaction import CompactionKind


async def build(rt: Runtime, task: Task, attempt: int, pending: Sequence[StoredEntry] = (),
                notes: RunNotes | None = None) -> ModelRequest:
    """The request of `attempt`: the run's instructions, the conversation's context, and
    `pending`, entries of the change being built that will be committed with the request's
    checkpoint; `notes` (default: the task's) hold instructions not committed yet."""
    cid = task.conversation_id
    context = await rt.context(cid)
    comp = rt.compaction(cid)
    # A view of the context as it is now (it only grows), not a copy of it per request.
    messages = context.messages(len(context), (comp.entry,) if comp is not None else (),
                                tuple(e.entry for e in pending if in_context(e.entry)))
    settings = rt.settings
    last_seq = max([rt.last_seq(cid), *(e.seq for e in pending)])
    notes = notes_of(task.checkpoint) if notes is None else notes
    # Each member of a FallbackModel has its own attempts: its keys say which member they are for.
    key = f"g{task.id}-s{last_seq}-a{attempt}" + (f"-m{notes.model}" if notes.model else "")
    system = notes.instructions if notes.instructions is not None else static_text(settings.system_prompt,
                                                                                     rt.instructions_for(cid))
    hashes = [a.sha256 for a in messages.attachments()]
    asked = run_settings(task)
    return ModelRequest(system, messages, rt.tools_for(cid).specs, asked.as_options(), attempt, key,
                        output.schema_of(rt, task), attachments=await rt.attachments(hashes) if hashes else {},
                        settings=asked, cache_key=cache_key(rt.location, cid))


def run_settings(task: Task) -> ModelSettings:
    """The model settings a run's requests ask for, as stored with it when it began."""
    settings = getattr(task.input, "settings", None)
    return settings if isinstance(settings, ModelSettings) else NO_SETTINGS


async def next_request(rt: Runtime, change: Change, task: Task, rounds: int, notes: RunNotes,
                       pending: Sequence[StoredEntry], compaction: CompactionKind | None) -> Task:
    """In `change`: the run's next request, after a tool round or an answer sent back, whose
    entries (`pending`) the change appends: `request` (a barrier: it is sent once committed), or
    `prepare` when a compaction, a deferred job or the end at a usage limit has to come first."""
    cid = task.conversation_id
    model = member_of(rt.model_for(cid), notes.model)
    first = members.deferred(rt, model) or (compaction is not None and await compaction.may_compact(rt, cid, pending))
    if not first and limited(rt):
        system = notes.instructions if notes.instructions is not None else static_text(rt.settings.system_prompt,
                                                                                         rt.instructions_for(cid))
        first = limit_passed(rt, change.live(cid), await estimate(rt, cid, system, pending)) is not None
    if first:
        task = change.put_task(evolve(task, state=Running(), checkpoint=Prepare(1, rounds, notes)))
    else:
        task = change.put_task(evolve(task, state=Running(),
                                      checkpoint=Request(1, run_settings(task).as_options(), rounds, notes)))
        change.barrier = True
        usage.count(rt, change, cid, requests=1, model=model_name(model))
    change.edit_live(cid, generation=GenerationLive(1))
    return task


# ------------------------------------------------------------------ usage limits


def limited(rt: Runtime) -> bool:
    """Whether any usage limit is set (a run then starts in `prepare`, where they are checked)."""
    return rt.settings.usage_limits is not None or rt.settings.conversation_usage_limits is not None


async def estimate(rt: Runtime, cid: str, system: str, pending: Sequence[StoredEntry] = ()) -> int:
    """The estimated input tokens of the conversation's next request (4 characters a token): its
    instructions, context (the running count: nothing is read) and the `pending` entries."""
    context = await rt.context(cid)
    comp = rt.compaction(cid)
    return (estimate_tokens(system) + context.tokens + (entry_tokens(comp.entry) if comp is not None else 0)
            + sum(entry_tokens(e.entry) for e in pending if in_context(e.entry)))


def limit_passed(rt: Runtime, live: Live, tokens: int | None = None, calls: int | None = None) -> str | None:
    """The detail of the first limit that the next request (of about `tokens` input tokens) or the
    next round of `calls` tool calls would pass, the run's before the conversation's; None: none."""
    scopes: list[tuple[str, str, UsageLimits | None, UsageTotals | None]] = [
        ("The run", "usage_limits", rt.settings.usage_limits, live.run.usage if live.run is not None else None),
        ("The conversation", "conversation_usage_limits", rt.settings.conversation_usage_limits, live.usage),
    ]
    for scope, setting, limits, used in scopes:
        if limits is None:
            continue
        used = used or EMPTY_USAGE  # a run begun before a per-run limit was set counts from nothing
        checks: list[tuple[str, str, int | None, bool, str]] = []
        if calls is not None:
            checks.append(("tool call limit", "tool_calls_limit", limits.tool_calls_limit,
                           used.tool_calls + calls > (limits.tool_calls_limit or 0),
                           f"{_count(used.tool_calls, 'tool call')} made, {calls} more asked for"))
        if tokens is not None:
            checks += [
                ("request limit", "request_limit", limits.request_limit,
                 used.requests + 1 > (limits.request_limit or 0), f"{_count(used.requests, 'request')} sent"),
                ("input token limit", "input_tokens_limit", limits.input_tokens_limit,
                 used.input_tokens + tokens > (limits.input_tokens_limit or 0),
                 f"{used.input_tokens} input tokens used, about {tokens} in the next request"),
                ("output token limit", "output_tokens_limit", limits.output_tokens_limit,
                 used.output_tokens >= (limits.output_tokens_limit or 0), f"{used.output_tokens} output tokens used"),
                ("total token limit", "total_tokens_limit", limits.total_tokens_limit,
                 used.total_tokens + tokens > (limits.total_tokens_limit or 0),
                 f"{used.total_tokens} tokens used, about {tokens} in the next request"),
            ]
        for name, field, limit, passed, figures in checks:
            if limit is not None and passed:
                return LIMIT_PASSED.format(scope=scope, name=name, setting=f"{setting}.{field}", limit=limit,
                                           figures=figures)
    return None


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


__all__ = ["build", "estimate", "limit_passed", "limited", "next_request", "run_settings"]
