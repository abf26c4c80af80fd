"""Typed tools: a tool's JSON schema derived from its function's type hints, and the conversion
of validated JSON arguments into the annotated types (and of its result back into JSON).

Each argument arrives converted to its annotation (attrs classes, dataclasses and TypedDicts as
instances or dicts, enums as members, tuples and sets as such); parameters annotated `ToolApi` /
`ToolContext` are not in the schema and are passed in by type. A result that is not a string is
turned back into JSON (attrs and dataclass instances as objects, enums as their values). A hint
that cannot be a schema raises `ToolDefinitionError` naming the tool and the parameter. The same
conversions give structured output its schema and its typed answer (`output_schema`,
`output_value`)."""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import importlib
import inspect
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal

import attrs

from .._frozen import frozen
from ..errors import ToolDefinitionError
from .protocol import AnyExecute, Execute, ToolApi, ToolContext
from .threads import in_thread

# A small converter from Python annotations to JSON schema, written here rather than taken from
# a library. Measured (Python 3.11): pydantic's TypeAdapter would add pydantic + pydantic-core
# (9.6 MB installed, ~90 ms to import and build the first adapter), it is not a core dependency
# (only the openai extra brings it), it refuses attrs classes (`PydanticSchemaGenerationError`),
# and it ignores a bare-string `Annotated[int, "how many"]` description. The schema is plain JSON
# with nested classes inlined (no `$defs`), which every provider accepts. Values are converted by
# `_structure` below rather than by cattrs: cattrs hashes each annotation, so it refuses an
# `Annotated[int, {"maximum": 14}]`, and it trusts `__required_keys__`, which Python 3.11 gets
# wrong for `NotRequired` under `from __future__ import annotations`.


@frozen
class TypedCall:
    """How to call a typed tool: its derived schema, the conversion of its validated arguments,
    and an `execute(args, api, ctx)` that passes them (and the injected api/context) by name."""

    schema: dict[str, Any]
    convert: Callable[[Any], Any]
    execute: Execute


def typed_call(tool_name: str, fn: AnyExecute) -> TypedCall | None:
    """How to call `fn` as a typed tool, or None when it is a raw `execute(args, api, ctx)`."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None  # a callable without a readable signature: called the raw way
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - NameError, TypeError...: any unresolvable annotation
        if _is_raw(params, {}):
            return None
        raise ToolDefinitionError(f"Tool {tool_name}: the annotations of {_qualname(fn)} cannot be resolved "
                                  f"({type(exc).__name__}: {exc}); define the types they name at module level") \
            from None
    if _is_raw(params, hints):
        return None
    call = fn if is_async(fn) else in_thread(fn)  # a plain def runs in a worker thread
    properties: dict[str, Any] = {}
    required: list[str] = []
    types_by_name: dict[str, Any] = {}
    injected: dict[str, type] = {}
    extra: Any = None  # the annotation of **kwargs, when there is one
    for p in params:
        where = f"parameter {p.name!r} of {_qualname(fn)}"
        if p.kind is p.POSITIONAL_ONLY:
            raise ToolDefinitionError(f"Tool {tool_name}: {where} is positional-only; tool arguments are passed "
                                      "by name")
        if p.name not in hints:
            raise ToolDefinitionError(f"Tool {tool_name}: {where} has no type annotation")
        hint = hints[p.name]
        plain = _strip_annotated(hint)
        plain = typing.get_origin(plain) or plain  # `ToolContext[MyDeps]` is a ToolContext
        if plain in (ToolApi, ToolContext):
            injected[p.name] = plain
            continue
        if p.kind is p.VAR_KEYWORD:
            extra = hint
            continue
        prop = _schema(hint, tool_name, where, ())
        if p.default is p.empty:
            required.append(p.name)
        else:  # a JSON scalar default is shown to the model
            default = p.default.value if isinstance(p.default, enum.Enum) else p.default
            if isinstance(default, (str, int, float, bool)) or default is None:
                prop = {**prop, "default": default}
        properties[p.name] = prop
        types_by_name[p.name] = hint
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False if extra is None else _schema(extra, tool_name, "**kwargs", ())

    def convert(args: dict[str, Any]) -> dict[str, Any]:
        # a key the function does not name (only an explicit schema lets one through) is passed
        # as is: the call then fails with the function's own TypeError
        return {key: _structure(value, types_by_name.get(key, extra if extra is not None else Any))
                for key, value in args.items()}

    async def execute(args: dict[str, Any], api: ToolApi, ctx: ToolContext) -> Any:
        passed = {name: api if kind is ToolApi else ctx for name, kind in injected.items()}
        value = await call(**args, **passed)
        return value if isinstance(value, str) else _unstructure(value)

    execute.__name__ = getattr(fn, "__name__", tool_name)
    execute.__qualname__ = _qualname(fn)
    execute.__doc__ = fn.__doc__
    return TypedCall(schema, convert, execute)


def is_async(fn: Any) -> bool:
    """Whether calling `fn` gives a coroutine (an `async def`, or an object with one as `__call__`)."""
    if inspect.iscoroutinefunction(fn):
        return True
    return not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)


def _is_raw(params: list[inspect.Parameter], hints: dict[str, Any]) -> bool:
    """`execute(args, api, ctx)`: three positional parameters; the first unannotated or a dict /
    mapping / Any, the other two unannotated, Any, or ToolApi / ToolContext."""
    if len(params) != 3 or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        return False

    def fits(p: inspect.Parameter, *accepted: Any) -> bool:
        if p.annotation is p.empty:
            return True
        hint = _strip_annotated(hints[p.name]) if p.name in hints else p.annotation
        if isinstance(hint, str):  # unresolvable: judge by the name
            return hint.rsplit(".", 1)[-1].split("[", 1)[0] in {getattr(a, "__name__", str(a)) for a in accepted}
        return hint in accepted or typing.get_origin(hint) in accepted

    return (fits(params[0], Any, object, dict, collections.abc.Mapping, typing.Mapping)
            and fits(params[1], Any, ToolApi) and fits(params[2], Any, ToolContext))


def _qualname(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


def _strip_annotated(hint: Any) -> Any:
    return hint.__origin__ if typing.get_origin(hint) is Annotated else hint


_SCALARS: tuple[tuple[Any, dict[str, Any]], ...] = (
    (str, {"type": "string"}), (int, {"type": "integer"}), (float, {"type": "number"}), (bool, {"type": "boolean"}),
    (type(None), {"type": "null"}), (None, {"type": "null"}), (Any, {}),
)
_ARRAYS = (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Set, collections.abc.MutableSequence,
           collections.abc.MutableSet, collections.abc.Collection, collections.abc.Iterable)
_OBJECTS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)
_LITERAL_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}


def _schema(hint: Any, tool_name: str, where: str, seen: tuple[type, ...]) -> dict[str, Any]:
    """The JSON schema of one annotation. Supported: str, int, float, bool, None, Any; list /
    Sequence / set / tuple; dict / Mapping with str keys; Optional and unions; Literal; Enum;
    Annotated (a str is the description, a dict is merged in as schema keywords); TypedDict,
    attrs classes and dataclasses (inlined; recursive classes are refused)."""

    def refuse(why: str) -> ToolDefinitionError:
        return ToolDefinitionError(f"Tool {tool_name}: {where}: {why}" if tool_name else f"{where}: {why}")

    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Annotated:
        schema = _schema(args[0], tool_name, where, seen)
        for meta in hint.__metadata__:
            if isinstance(meta, str):
                schema = {**schema, "description": meta}
            elif isinstance(meta, dict):
                schema = {**schema, **meta}
        return schema
    if origin in (typing.Required, typing.NotRequired):
        return _schema(args[0], tool_name, where, seen)
    if origin is Literal:
        return _enum_schema([v.value if isinstance(v, enum.Enum) else v for v in args])
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_schema(a, tool_name, where, seen) for a in args]}
    scalar = next((schema for kind, schema in _SCALARS if hint is kind), None)
    if scalar is not None:
        return dict(scalar)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_schema([m.value for m in hint])
    if hint in _ARRAYS or origin in _ARRAYS:
        container = origin or hint
        schema = {"type": "array"}
        if _is_set(container):
            schema["uniqueItems"] = True
        if container is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if args == ((),):
                return {"type": "array", "maxItems": 0}
            items = [_schema(a, tool_name, where, seen) for a in args]
            return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
        if args:
            schema["items"] = _schema(args[0], tool_name, where, seen)
        return schema
    if hint in _OBJECTS or origin in _OBJECTS:
        schema = {"type": "object"}
        if args:
            if _strip_annotated(args[0]) is not str:
                raise refuse(f"the keys of {hint!r} must be str (JSON object keys are strings)")
            schema["additionalProperties"] = _schema(args[1], tool_name, where, seen)
        return schema
    if isinstance(hint, type) and (typing.is_typeddict(hint) or dataclasses.is_dataclass(hint) or attrs.has(hint)):
        if hint in seen:
            raise refuse(f"{hint.__qualname__} refers to itself; recursive types are not supported")
        return _class_schema(hint, tool_name, where, (*seen, hint))
    raise refuse(f"{hint!r} cannot be described as JSON schema (use str, int, float, bool, list, dict, Literal, "
                 "an Enum, a TypedDict, an attrs class or a dataclass)")


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    kinds = {_LITERAL_TYPES.get(type(v), "?") for v in values}
    return {"type": kinds.pop(), "enum": values} if len(kinds) == 1 and "?" not in kinds else {"enum": values}


def _class_schema(cls: type, tool_name: str, where: str, seen: tuple[type, ...]) -> dict[str, Any]:
    try:
        hints = _class_hints(cls)
    except Exception as exc:  # noqa: BLE001 - NameError, TypeError...: any unresolvable annotation
        raise ToolDefinitionError(f"{f'Tool {tool_name}: ' if tool_name else ''}{where}: the annotations of "
                                  f"{cls.__qualname__} cannot be "
                                  f"resolved ({type(exc).__name__}: {exc})") from None
    fields: list[tuple[str, Any, bool]] = []  # name, annotation, required
    if typing.is_typeddict(cls):
        # Required / NotRequired decide; else the class's own record (which, on Python 3.11, misses
        # markers written under `from __future__ import annotations`)
        required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset(hints))
        marked = {key: typing.get_origin(hint) for key, hint in hints.items()}
        fields = [(key, hint, marked[key] is typing.Required or (marked[key] is not typing.NotRequired
                                                                  and key in required_keys))
                  for key, hint in hints.items()]
    elif dataclasses.is_dataclass(cls):
        fields = [(f.name, hints.get(f.name, f.type), f.default is dataclasses.MISSING
                   and f.default_factory is dataclasses.MISSING) for f in dataclasses.fields(cls) if f.init]
    else:
        fields = [(a.alias, hints.get(a.name, a.type), a.default is attrs.NOTHING)
                  for a in attrs.fields(cls) if a.init]
    properties = {name: _schema(hint, tool_name, f"{where}, field {cls.__qualname__}.{name}", seen)
                  for name, hint, _ in fields}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name, _, needed in fields if needed]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    doc = cls.__doc__
    generated = dataclasses.is_dataclass(cls) and doc is not None and doc.startswith(f"{cls.__name__}(")
    if doc and not generated:
        schema = {"description": inspect.cleandoc(doc), **schema}
    return schema


def output_schema(hint: Any) -> dict[str, Any]:
    """The JSON schema of an answer of type `hint` (structured output): the schema a tool
    parameter of that type gets, always of type object (what providers' structured modes take):
    any other is wrapped as the object's one property `response` (`{"response": 3}` for an
    `int`). Raises `ToolDefinitionError` naming what cannot be a schema."""
    schema = _schema(hint, "", f"The output type {_type_name(hint)}", ())
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {_WRAPPED: schema}, "required": [_WRAPPED], "additionalProperties": False}


def output_value(value: Any, hint: Any) -> Any:
    """A validated answer's JSON `value` (of `output_schema(hint)`) as an instance of `hint`, as a
    tool's arguments are converted (a wrapped answer unwrapped)."""
    if _schema(hint, "", "", ()).get("type") != "object" and isinstance(value, dict) and _WRAPPED in value:
        value = value[_WRAPPED]
    return _structure(value, hint)


_WRAPPED = "response"


def _type_name(hint: Any) -> str:
    return hint.__qualname__ if isinstance(hint, type) else repr(hint)


# --------------------------------------------------------------------------- typed values
#
# Arguments are converted after validation, so the JSON already has the shape of the annotation;
# what is left is to build instances (classes, enums, tuples, sets) and to pick a union's branch.


def _structure(value: Any, hint: Any) -> Any:
    """The validated JSON `value` as an instance of the annotation `hint`."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Annotated or origin in (typing.Required, typing.NotRequired):
        return _structure(value, args[0])
    if hint is float:
        return float(value)
    if hint is int:
        return int(value)
    if origin is Literal:
        return next((v for v in args if isinstance(v, enum.Enum) and v.value == value), value)
    if origin in (typing.Union, types.UnionType):
        branch = next((a for a in args if _fits(value, a)), None)
        return value if branch is None else _structure(value, branch)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)
    container = origin or hint
    if container in _ARRAYS and isinstance(value, list):
        if container is tuple:
            fixed = args and not (len(args) == 2 and args[1] is Ellipsis) and args != ((),)
            kinds = args if fixed else (args[0] if args else Any,) * len(value)
            return tuple(_structure(v, k) for v, k in zip(value, kinds, strict=False))
        items = [_structure(v, args[0]) if args else v for v in value]
        return (frozenset(items) if container is frozenset else set(items)) if _is_set(container) else items
    if container in _OBJECTS and isinstance(value, dict):
        return {k: _structure(v, args[1]) for k, v in value.items()} if args else value
    if isinstance(hint, type) and isinstance(value, dict):
        if typing.is_typeddict(hint):
            hints = _class_hints(hint)
            return {k: _structure(v, hints[k]) if k in hints else v for k, v in value.items()}
        if dataclasses.is_dataclass(hint) or attrs.has(hint):
            hints = _class_hints(hint)
            names = {f.name: f.name for f in dataclasses.fields(hint) if f.init} if dataclasses.is_dataclass(hint) \
                else {a.alias: a.name for a in attrs.fields(hint) if a.init}
            return hint(**{k: _structure(v, hints.get(names[k], Any)) for k, v in value.items() if k in names})
    return value


@functools.cache
def _class_hints(cls: type) -> dict[str, Any]:
    """A class's resolved annotations, once per class (so that union branches inside stay the
    same objects, and `_fits` caches their validators)."""
    return typing.get_type_hints(cls, include_extras=True)


def _fits(value: Any, hint: Any) -> bool:
    """Whether `value` is valid for the union branch `hint` (its own schema decides)."""
    key = id(hint)
    cached = _BRANCHES.get(key)
    if cached is None or cached[0] is not hint:
        validator = importlib.import_module("jsonschema").Draft202012Validator(_schema(hint, "", "", ()))
        cached = _BRANCHES[key] = (hint, validator)
    return bool(cached[1].is_valid(value))


_BRANCHES: dict[int, tuple[Any, Any]] = {}  # union branch -> (the branch, its validator)


def _is_set(container: Any) -> bool:
    return container in (set, frozenset, collections.abc.Set, collections.abc.MutableSet)


def _unstructure(value: Any) -> Any:
    """A typed tool's result as JSON: class instances as objects, enums as their values."""
    if isinstance(value, enum.Enum):
        return _unstructure(value.value)
    if attrs.has(type(value)):
        return {a.name: _unstructure(getattr(value, a.name)) for a in attrs.fields(type(value))}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _unstructure(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _unstructure(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_unstructure(v) for v in value]
    return value


__all__ = ["TypedCall", "output_schema", "output_value", "typed_call"]
