"""The one converter that knows the JSON shape of every record.

Variants are stored as objects with a `type` tag (`{"type": "sleeping", "until": 12.5}`); the tag
names are listed here, once. Unknown tags and unknown keys are refused with `CodecError`, never
loaded as something else. Hooks are generated once per class by cattrs and cached, so encoding
costs about what a hand-written dict conversion costs.
"""

from __future__ import annotations

import json
from typing import Any, Optional, TypeVar

import cattrs

from . import records as r

T = TypeVar("T")


class CodecError(ValueError):
    """A stored value does not have the shape of the record it should be."""


_TAGS: dict[Any, dict[str, type]] = {
    r.State: {"pending": r.Pending, "running": r.Running, "sleeping": r.Sleeping,
              "waiting": r.Waiting, "terminal": r.Terminal},
    r.Outcome: {"done": r.Done, "failed": r.Failed, "aborted": r.Aborted, "faulted": r.Faulted},
    r.Checkpoint: {"prepare": r.Prepare, "request": r.Request, "poll": r.Poll, "retry": r.Retry,
                   "tools": r.ToolRound, "tool_progress": r.ToolProgress},
    r.Phase: {"prepare": r.Prepare, "request": r.Request, "poll": r.Poll, "retry": r.Retry,
              "tools": r.ToolRound},
    r.Entry: {"user": r.UserEntry, "assistant": r.AssistantEntry, "tool_result": r.ToolResultEntry,
              "compaction": r.CompactionEntry},
    r.TaskInput: {"generation": r.GenerationInput, "tool": r.ToolInput,
                  "compaction": r.CompactionInput},
    r.SubmissionStatus: {"queued": r.Queued, "done": r.Answered, "unanswered": r.Unanswered},
}


def tag_of(value: Any) -> str:
    """The stored tag of a variant value (`"sleeping"` for `Sleeping(...)`)."""
    return _TAG_BY_CLASS[type(value)]


_TAG_BY_CLASS: dict[type, str] = {cls: tag for tags in _TAGS.values() for tag, cls in tags.items()}


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)

    def register(union: Any, tags: dict[str, type]) -> None:
        def unstructure(value: Any) -> dict[str, Any]:
            cls = type(value)
            body = conv.unstructure(value, cls)
            return {"type": _TAG_BY_CLASS[cls], **body}

        def structure(data: Any, _: Any) -> Any:
            if not isinstance(data, dict):
                raise CodecError(f"expected an object with a 'type' tag, got {data!r}")
            tag = data.get("type")
            cls = tags.get(tag)  # type: ignore[arg-type]
            if cls is None:
                raise CodecError(f"unknown tag {tag!r} (expected one of {', '.join(tags)})")
            body = {k: v for k, v in data.items() if k != "type"}
            return conv.structure(body, cls)

        def structure_optional(data: Any, t: Any) -> Any:
            return None if data is None else structure(data, t)

        def unstructure_optional(value: Any) -> Any:
            return None if value is None else unstructure(value)

        conv.register_unstructure_hook(union, unstructure)
        conv.register_structure_hook(union, structure)
        conv.register_unstructure_hook(Optional[union], unstructure_optional)
        conv.register_structure_hook(Optional[union], structure_optional)

    for union, tags in _TAGS.items():
        register(union, tags)
    return conv


converter = _make_converter()


def to_data(value: Any, cls: type | None = None) -> Any:
    return converter.unstructure(value, cls or type(value))


def from_data(data: Any, cls: type[T]) -> T:
    try:
        return converter.structure(data, cls)
    except CodecError:
        raise
    except Exception as exc:  # cattrs groups: flatten into one readable sentence
        raise CodecError(_explain(exc)) from exc


def dumps(value: Any, cls: Any = None) -> str:
    return json.dumps(to_data(value, cls), separators=(",", ":"), ensure_ascii=False)


def loads(text: str | bytes, cls: type[T]) -> T:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CodecError(f"not valid JSON ({exc})") from exc
    return from_data(data, cls)


def _explain(exc: BaseException) -> str:
    if isinstance(exc, CodecError):
        return str(exc)
    if isinstance(exc, cattrs.ClassValidationError | cattrs.IterableValidationError):
        notes = cattrs.transform_error(exc)
        # A CodecError raised deep inside (an unknown tag) is the most useful sentence.
        for sub in _leaves(exc):
            if isinstance(sub, CodecError):
                return str(sub)
        return "; ".join(notes)
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        return f"unknown field(s) {', '.join(sorted(exc.extra_fields))}"
    return f"{type(exc).__name__}: {exc}"


def _leaves(exc: BaseException):
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            yield from _leaves(sub)
    else:
        yield exc


__all__ = ["CodecError", "converter", "dumps", "loads", "to_data", "from_data", "tag_of"]

