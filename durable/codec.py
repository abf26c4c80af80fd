"""The one converter that knows the JSON shape of every record.

Variants are stored as objects with a `type` tag (`{"type": "sleeping", "until": 12.5}`). The
closed variants (states, outcomes, entries, submission statuses) are listed here; the open ones
(`TaskInput`, `Checkpoint`) are filled by the task kinds through `register_variants`, so a kind
adds its records without an edit here. An unknown tag or key is refused with `CodecError` (for
a task kind this process does not know, `UnknownVariant` naming it), never loaded as something
else. A field marked `OMITTED_WHEN_DEFAULT` (`durable._frozen`) is written only when it differs
from its default; a missing one reads as the default.

Two converters share that configuration: the fast one (cattrs `detailed_validation=False`) does
every conversion; a refused value is run through the detailed one, made on the first refusal,
only to explain where and why. Hooks are made once per class, on first use (a reader makes
just those it reads with), except those an open and a first turn need (`_FIRST_TURN_*`, kinds'
records registered `warm`), made by `warm()` when the engine is imported. The fast one's hooks
of durable's records are cattrs' own source checked in (`durable._codec_hooks`): not compiled.
`dumps` writes a record through a text function generated from its hook (`durable._json_text`:
the same text without the dicts in between) from its `_MAKE_AFTER`th write on, and refuses a
value JSON cannot hold with `CodecError` before anything is written. Text is made and read by the
standard library's `json` (orjson's edges differ: see benchmarks/README.md).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from . import records as r
from ._frozen import OMITTED_WHEN_DEFAULT
from ._json_text import Encoders
from ._written_hooks import written_hook
from .errors import DurableError

T = TypeVar("T")

_OMIT_KEY = next(iter(OMITTED_WHEN_DEFAULT))


class CodecError(DurableError, ValueError):
    """A stored value does not have the shape of the record it should be. Also a `ValueError`,
    as it always was, so code that caught it as one still does."""


_TAGS: dict[Any, dict[str, type]] = {
    r.State: {"pending": r.Pending, "running": r.Running, "sleeping": r.Sleeping,
              "waiting": r.Waiting, "terminal": r.Terminal},
    r.Outcome: {"done": r.Done, "failed": r.Failed, "aborted": r.Aborted, "faulted": r.Faulted},
    r.Entry: {"user": r.UserEntry, "assistant": r.AssistantEntry, "tool_result": r.ToolResultEntry,
              "compaction": r.CompactionEntry},
    r.SubmissionStatus: {"queued": r.Queued, "done": r.Answered, "unanswered": r.Unanswered},
    r.Part: {"text": r.TextPart, "attachment": r.Attachment},
    # Open variants: empty here, filled by the task kinds (`register_variants`).
    r.TaskInput: {},
    r.Checkpoint: {},
}
_OPEN: dict[Any, str] = {r.TaskInput: "task kind", r.Checkpoint: "checkpoint"}
"""The open variants (base classes the task kinds extend), with what their tag names."""


class UnknownVariant(CodecError):
    """A stored tag that no registered variant has: for a task's input, a task kind this process
    does not know (`tag` names it). A subclass of `CodecError`."""

    def __init__(self, message: str, tag: Any, what: str) -> None:
        super().__init__(message)
        self.tag = tag
        self.what = what


def tag_of(value: Any) -> str:
    """The stored tag of a variant value (`"sleeping"` for `Sleeping(...)`)."""
    return _TAG_BY_CLASS[type(value)]


_TAG_BY_CLASS: dict[type, str] = {cls: tag for tags in _TAGS.values() for tag, cls in tags.items()}


def variants(base: type) -> dict[str, type]:
    """The variants registered for the open variant `base` (`TaskInput`, `Checkpoint`): tag -> class."""
    if base not in _OPEN:
        raise ValueError(f"{base!r} is not an open variant")
    return dict(_TAGS[base])


def register_variants(variants: Iterable[tuple[type, str, type]], *, warm: bool = False) -> None:
    """Make each `cls` of `(base, tag, cls)` (an attrs record subclassing the open variant `base`:
    `TaskInput` or `Checkpoint`) storable under `tag`, all or none: a tag already taken by another
    class, a class stored under another tag, or a class that is not a `base` is a `ValueError` and
    registers nothing. Registering a class again under its tag does nothing. `warm` makes their
    hooks now (records every first turn writes), not on first use."""
    new: list[tuple[dict[str, type], str, type]] = []
    for base, tag, cls in variants:
        tags = _TAGS.get(base)
        if base not in _OPEN or tags is None:
            raise ValueError(f"{base!r} is not an open variant (one of {', '.join(c.__name__ for c in _OPEN)})")
        if not (isinstance(cls, type) and issubclass(cls, base) and attrs.has(cls)):
            raise ValueError(f"{cls!r} cannot be a {_OPEN[base]} record: it is not an attrs subclass of "
                             f"{base.__name__}")
        found = tags.get(tag)
        if found is cls:
            continue
        if found is not None or any(t == tag and b is tags for b, t, _ in new):
            raise ValueError(f"The {_OPEN[base]} tag {tag!r} is taken by {(found or cls).__qualname__}")
        if cls in _TAG_BY_CLASS:
            raise ValueError(f"{cls.__qualname__} is stored as {_TAG_BY_CLASS[cls]!r} already")
        new.append((tags, tag, cls))
    for tags, tag, cls in new:
        tags[tag] = cls
        _TAG_BY_CLASS[cls] = tag
        if warm:
            converter.get_unstructure_hook(cls)


def _is_homogeneous_tuple(t: Any) -> bool:
    args = get_args(t)
    return get_origin(t) is tuple and len(args) == 2 and args[1] is Ellipsis


def _is_simple_optional(t: Any) -> bool:
    """`X | None` of one type X (an optional union has its own hooks, registered below)."""
    args = get_args(t)
    return get_origin(t) in (Union, UnionType) and len(args) == 2 and type(None) in args


# The hooks that opening a session and running its first turn use (all that the cold child of
# benchmarks/agent_turns.py makes), made by `warm()`; nested records' hooks come with their
# holder's. Any other is made on first use and kept: a recovering process makes 62 of the 120.
_FIRST_TURN_WRITES: tuple[type, ...] = (
    r.Task, r.Submission, r.Live, r.Queued, r.Answered, r.Running, r.Waiting, r.Terminal, r.Done,
    r.UserEntry, r.AssistantEntry, r.ToolResultEntry,
)
_FIRST_TURN_READS: tuple[type, ...] = (r.Submission, r.Live, r.Queued, r.Answered)


def _make_converter(detailed: bool) -> tuple[cattrs.Converter, Callable[[], None]]:
    """The converter, and what makes its first turn's hooks (`warm`)."""
    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=detailed)

    # One hook per record class, made once and shared (cattrs makes a field's afresh per holder).
    made: dict[tuple[bool, Any], Any] = {}

    def unstructure_attrs(cls: Any) -> Any:
        # A field marked OMITTED_WHEN_DEFAULT is written only when it differs from its default.
        omitted: dict[str, Any] = {a.name: override(omit_if_default=True) for a in attrs.fields(cls)
                                   if a.metadata.get(_OMIT_KEY)}
        if not omitted:
            return conv.gen_unstructure_attrs_fromdict(cls)
        return make_dict_unstructure_fn(attrs.resolve_types(cls), conv, **omitted)

    def attrs_hook(structure: bool) -> Any:
        gen = conv.gen_structure_attrs_fromdict if structure else unstructure_attrs
        kind = "structure" if structure else "unstructure"

        def factory(cls: Any) -> Any:  # the fast converter's hooks of durable's records: checked in
            hook = made.get((structure, cls))
            if hook is None:
                hook = made[structure, cls] = (not detailed and written_hook(kind, cls, conv)) or gen(cls)
            return hook

        return factory

    def is_record(t: Any) -> bool:
        return isinstance(t, type) and attrs.has(t)

    conv.register_structure_hook_factory(is_record, attrs_hook(structure=True))
    conv.register_unstructure_hook_factory(is_record, attrs_hook(structure=False))

    variant_hooks: dict[type, tuple[type, Any, frozenset[str]]] = {}  # a class may be in two unions

    def make_structure(cls: type) -> tuple[type, Any, frozenset[str]]:
        found = variant_hooks.get(cls)
        if found is None:
            if detailed:
                hook = conv.get_structure_hook(cls)
            else:  # the tag is allowed next to the fields; other keys are checked below
                hook = written_hook("variant", cls, conv) or make_dict_structure_fn(
                    cls, conv, _cattrs_forbid_extra_keys=False)
            found = variant_hooks[cls] = (cls, hook, frozenset(a.name for a in attrs.fields(cls)) | {"type"})
        return found

    def register(union: Any, tags: dict[str, type]) -> None:
        # A variant's hooks are made on its first use (or below, for the first turn's), once every
        # union is registered: a class's hook embeds the hooks of its fields, which may be unions.
        unstructure_hooks: dict[type, tuple[str, Any]] = {}
        structure_hooks: dict[str, tuple[type, Any, frozenset[str]]] = {}

        def unstructure(value: Any) -> dict[str, Any]:
            found = unstructure_hooks.get(value.__class__)
            if found is None:
                cls = type(value)
                found = unstructure_hooks[cls] = (_TAG_BY_CLASS[cls], conv.get_unstructure_hook(cls))
            return {"type": found[0], **found[1](value)}

        def structure(data: Any, _: Any) -> Any:
            if not isinstance(data, dict):
                raise CodecError(f"expected an object with a 'type' tag, got {data!r}")
            tag: Any = data.get("type")  # any JSON value; one that names no variant is refused below
            found = structure_hooks.get(tag)
            if found is None:
                if tag not in tags:
                    raise _unknown(union, tag, tags)
                found = structure_hooks[tag] = make_structure(tags[tag])
            cls, hook, keys = found
            if detailed:  # cattrs names the unknown keys and where they are
                return hook({k: v for k, v in data.items() if k != "type"}, cls)
            if not keys.issuperset(data):
                raise CodecError(f"unknown field(s) {', '.join(sorted(set(data) - keys))}")
            return hook(data, cls)

        def structure_optional(data: Any, t: Any) -> Any:
            return None if data is None else structure(data, t)

        def unstructure_optional(value: Any) -> Any:
            return None if value is None else unstructure(value)

        if union in _OPEN:  # a base class: its hooks must not be inherited by its variants
            conv.register_unstructure_hook_func(lambda t: t is union, unstructure)
            conv.register_structure_hook_func(lambda t: t is union, structure)
        else:
            conv.register_unstructure_hook(union, unstructure)
            conv.register_structure_hook(union, structure)
        conv.register_unstructure_hook(union | None, unstructure_optional)
        conv.register_structure_hook(union | None, structure_optional)

    for union, tags in _TAGS.items():
        register(union, tags)

    if not detailed:
        # cattrs dispatches on the element type for every element of every tuple; resolve it once.
        def tuple_structure(t: Any) -> Any:
            elem = get_args(t)[0]
            if elem in (str, int, float):  # what cattrs does for these: call the type
                return lambda data, _: tuple(map(elem, data))
            hook = conv.get_structure_hook(elem)
            return lambda data, _: tuple([hook(e, elem) for e in data])

        def optional_structure(t: Any) -> Any:
            inner = next(a for a in get_args(t) if a is not type(None))
            if inner in (str, int, float):
                return lambda data, _: None if data is None else inner(data)
            hook = conv.get_structure_hook(inner)
            return lambda data, _: None if data is None else hook(data, inner)

        tuple_hooks: dict[Any, Any] = {}

        def tuple_unstructure(t: Any) -> Any:
            # One hook per tuple type, made once (as for records): `durable._json_text` knows a
            # field's handler by identity.
            found = tuple_hooks.get(t)
            if found is None:
                elem = get_args(t)[0]
                if elem in (str, int, float, bool):
                    found = list
                else:
                    hook = conv.get_unstructure_hook(elem)
                    found = tuple_hooks[t] = lambda value: [hook(e) for e in value]
            return found

        conv.register_structure_hook_factory(_is_homogeneous_tuple, tuple_structure)
        conv.register_structure_hook_factory(_is_simple_optional, optional_structure)
        conv.register_unstructure_hook_factory(_is_homogeneous_tuple, tuple_unstructure)

    def warm() -> None:
        for cls in _FIRST_TURN_WRITES:
            conv.get_unstructure_hook(cls)
        for cls in _FIRST_TURN_READS:
            if cls in _TAG_BY_CLASS:
                make_structure(cls)
            else:
                conv.get_structure_hook(cls)

    return conv, warm


converter, _warm = _make_converter(detailed=False)


@functools.cache
def warm() -> None:
    """Make the hooks of an open and a first turn (`_FIRST_TURN_*`) now, once: the engine does
    when it is imported (`durable.engine.kinds`), so a first turn does not wait for them."""
    _warm()


@functools.cache
def _explaining_converter() -> cattrs.Converter:
    """The detailed converter, made on the first refusal: only errors need it."""
    return _make_converter(detailed=True)[0]


def to_data(value: Any, cls: type | None = None) -> Any:
    return converter.unstructure(value, cls or type(value))


def from_data(data: Any, cls: type[T]) -> T:
    try:
        return converter.structure(data, cls)
    except Exception as fast_error:  # any refusal by cattrs: explained below
        if isinstance(fast_error, UnknownVariant):  # a kind this process does not know: says it all
            kind = data.get("input") if isinstance(data, dict) else None  # a task's own kind comes first
            tag = kind.get("type") if isinstance(kind, dict) else None
            if cls is r.Task and isinstance(tag, str) and tag not in _TAGS[r.TaskInput]:
                raise _unknown(r.TaskInput, tag, _TAGS[r.TaskInput]) from None
            raise fast_error from None
        if attrs.has(cls) and not isinstance(data, dict):
            raise CodecError(f"expected an object for {cls.__name__}, got {type(data).__name__}") from None
        try:
            _explaining_converter().structure(data, cls)
        except Exception as exc:  # cattrs groups: one readable sentence
            raise CodecError(_explain(exc)) from exc
        raise CodecError(_explain(fast_error)) from fast_error


# One encoder, made once (`json.dumps` with options builds a new one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _make_fast_encode() -> Callable[[Any], str]:
    """`_ENCODER.encode`, without what it redoes on every call: it builds a new C encoder object
    each time and keeps a dict of the containers it is in, to refuse a circular value (`to_data`
    already recurses through every container first, and refuses one with `RecursionError`). One
    C encoder with the same options, made once, writes the same text (5-6 µs less for the three
    records of a commit). Without the C accelerator (not CPython): `_ENCODER.encode`."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _ENCODER.encode
    encoder = make(None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    join = "".join

    def encode(data: Any) -> str:
        return join(encoder(data, 0))

    return encode


_encode = _make_fast_encode()


_ENCODERS = Encoders(converter, _TAGS, _encode)
_FAST: dict[int, tuple[Any, Callable[[Any], str] | None, bool]] = {}
"""id(class or union) -> (it, its text function or None, whether it is a union). By id: hashing
a `typing.Union` hashes a frozenset of its members on every call. The entry holds the object, so
its id is not reused while it is here."""
_USES: dict[int, tuple[Any, int]] = {}  # id -> (class or union, writes so far) before it has a function
_MAKE_AFTER = 32
"""A class's text function is made at its 32nd write, not its first: making one costs ~0.2 ms
a record class (compiling it), which the first turn after an open should not wait for."""


def _fast_text(value: Any, cls: Any) -> str | None:
    """The text of `value` written by its generated function (`durable._json_text`), or None:
    no function for it (yet), or it raised (the old way then writes the value, or raises as it
    did)."""
    key = value.__class__ if cls is None else cls
    found = _FAST.get(id(key))
    if found is None or found[0] is not key:
        found = _count_use(key)
        if found is None:
            return None
    _, fast, union = found
    if fast is None or not (union or value.__class__ is key):
        return None
    try:
        return fast(value)
    except Exception:  # noqa: BLE001 - written (or refused) the old way, exactly as before
        return None


def _count_use(key: Any) -> tuple[Any, Callable[[Any], str] | None, bool] | None:
    """One more write of `key` without a text function: make it at the `_MAKE_AFTER`th."""
    seen = _USES.get(id(key))
    uses = seen[1] + 1 if seen is not None and seen[0] is key else 1
    if uses < _MAKE_AFTER:
        _USES[id(key)] = (key, uses)
        return None
    _USES.pop(id(key), None)
    try:
        union, fast = key in _TAGS, _ENCODERS.encoder_for(key)
    except Exception:  # noqa: BLE001 - an unhashable or odd `cls`: no function, the old way
        union, fast = False, None
    found = _FAST[id(key)] = (key, fast, union)
    return found


def dumps(value: Any, cls: Any = None) -> str:
    """The JSON text of `value`; `CodecError` when a value in it cannot be stored as JSON."""
    text = _fast_text(value, cls)
    if text is None:
        try:
            text = _encode(to_data(value, cls))
        except (TypeError, ValueError) as exc:
            raise CodecError(f"{type(value).__name__} cannot be stored as JSON: {exc}") from exc
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (text decoded with "surrogateescape") is not UTF-8; escaped as
            # \\udXXX it round-trips exactly and stays storable in a TEXT column.
            text = json.dumps(to_data(value, cls), separators=(",", ":"), ensure_ascii=True)
    return text


def loads(text: str | bytes, cls: type[T]) -> T:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CodecError(f"not valid JSON ({exc})") from exc
    return from_data(data, cls)


def _unknown(union: Any, tag: Any, tags: dict[str, type]) -> CodecError:
    what = _OPEN.get(union)
    if what is None:
        return CodecError(f"unknown tag {tag!r} (expected one of {', '.join(tags)})")
    return UnknownVariant(f"unknown {what} {tag!r} (this process knows {', '.join(sorted(tags)) or 'none'})", tag, what)


def _explain(exc: BaseException) -> str:
    if isinstance(exc, CodecError):
        return str(exc)
    if isinstance(exc, cattrs.ClassValidationError | cattrs.IterableValidationError):
        notes = cattrs.transform_error(exc)
        # A CodecError raised deep inside (an unknown tag) is the most useful sentence.
        for sub in exception_leaves(exc):
            if isinstance(sub, CodecError):
                return str(sub)
        return "; ".join(notes)
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        return f"unknown field(s) {', '.join(sorted(exc.extra_fields))}"
    return f"{type(exc).__name__}: {exc}"


def exception_leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside `exc`, however deep its exception groups nest (`exc` if none)."""
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            yield from exception_leaves(sub)
    else:
        yield exc


__all__ = ["CodecError", "UnknownVariant", "converter", "dumps", "exception_leaves", "from_data", "loads",
           "register_variants", "tag_of", "to_data", "variants", "warm"]
