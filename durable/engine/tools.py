"""The tool protocol: how a host defines tools, how a call's arguments are checked, and how a
running tool talks back.

A tool has a name, a description, a JSON schema for its arguments (Draft 2020-12), a replay
policy and an `execute`. `replay="unsafe"` (the default) means a call cut off by a crash is never
run again; `"safe"` means it may run again (below the restart limit). A client tool
(`client=True`) has no `execute`: the host runs it and submits the result.

A tool is written in one of two forms; `define_tool` and `@tool` tell them apart by the signature:

- **typed**: `async def get_weather(city: str, days: Annotated[int, "1 to 14"] = 1) -> str`. The
  name, the description (the docstring) and the schema come from the function (see
  `schema_of_function`); each argument arrives converted to its annotated type (attrs classes and
  dataclasses as instances); parameters annotated `ToolApi` / `ToolContext` are passed in by type.
- **raw**: `async def execute(args, api, ctx)` (three positional parameters, the last two
  unannotated, `Any`, `ToolApi` / `ToolContext`): `args` is the parsed JSON, the schema is the
  `parameters` given (an object that accepts anything when none is).

An explicit `parameters` schema is always possible and wins over the derived one. Every schema is
checked when the tool is defined (`ToolDefinitionError` naming the tool), and every call's
arguments are validated with `jsonschema` before the tool runs, so every keyword is enforced
(`maximum`, `pattern`, `maxLength`, `anyOf`, `$ref`, `format`...). A mismatch, invalid JSON or arguments
nested deeper than `MAX_DEPTH` raise `ToolArgumentError`: the model reads its message (the JSON
path and the failed keyword) as an error result and the run continues.

`execute` streams output with `await api.output(text)` (committed coalesced), may be cancelled
(an abort, an interrupt or a clean close), and returns a string or any JSON value (a typed tool
may also return attrs/dataclass instances). Raising an exception turns into an error result the
model can read.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import importlib
import inspect
import json
import re
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Annotated, Any, Literal, overload

import attrs
from attrs import field, frozen

from ..errors import ToolArgumentError, ToolDefinitionError
from ..models.protocol import ToolSpec

Execute = Callable[[Any, "ToolApi", "ToolContext"], Awaitable[Any]]
AnyExecute = Callable[..., Awaitable[Any]]
Replay = Literal["safe", "unsafe"]
ArgumentError = ToolArgumentError  # the name the tool task catches

MAX_DEPTH = 64
"""Arguments nested deeper than this (objects and arrays) are refused before validation: the
validator and the conversion recurse, and no real tool takes JSON this deep."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
_MAX_PROBLEMS = 5  # problems listed in one argument error


@frozen
class ToolContext:
    """Given to `execute` with the arguments: which call this is. `task_id` is the tool's task,
    `call_id` the model's call id, `conversation_id` its conversation; `attempt` is 1 on the first
    run and 2, 3... when a safe tool runs again after a crash cut it off (an unsafe tool never
    runs a second time)."""

    task_id: int
    call_id: str
    conversation_id: str
    attempt: int  # 1 on the first run; 2.. when a safe tool runs again after a crash


class ToolApi:
    """Given to `execute`; `output()` appends streamed output (committed coalesced)."""

    def __init__(self, output: Callable[[str], Awaitable[None]]) -> None:
        self._output = output

    async def output(self, text: str) -> None:
        await self._output(text)


@frozen
class Tool:
    """A tool the model may call. Make one with `define_tool` or `@tool`, which check it.

    `convert` turns validated JSON arguments into what `execute` receives (a typed tool's
    keyword arguments); None passes the parsed JSON as is. `validator` is the compiled schema
    (compiled on each call when None)."""

    name: str
    description: str
    parameters: dict[str, Any] = field(factory=lambda: dict(_EMPTY_SCHEMA))
    replay: Replay = "unsafe"
    execute: Execute | None = None
    client: bool = False
    convert: Callable[[Any], Any] | None = field(default=None, eq=False, repr=False)
    validator: Any = field(default=None, eq=False, repr=False)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)


def define_tool(
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    *,
    replay: Replay = "unsafe",
    execute: AnyExecute | None = None,
    client: bool = False,
) -> Tool:
    """Define a tool; raises `ToolDefinitionError` (naming the tool) for a bad name, schema,
    signature or policy.

    `name` defaults to the function's name and `description` to its docstring. Without
    `parameters`, a typed `execute` gets its schema from its signature; a raw one
    (`execute(args, api, ctx)`) accepts any object. With `parameters`, that schema is used as
    given (it must be a valid Draft 2020-12 schema of type object)."""
    if name is None:
        if execute is None:
            raise ToolDefinitionError("A tool needs a name (or an execute function to take it from)")
        name = getattr(execute, "__name__", "")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ToolDefinitionError(f"Tool name {name!r} is not valid (letters, digits, _ and -, at most 64)")
    if replay not in ("safe", "unsafe"):
        raise ToolDefinitionError(f"Tool {name}: replay must be 'safe' or 'unsafe', not {replay!r}")
    if client and execute is not None:
        raise ToolDefinitionError(f"Tool {name}: a client tool is run by the host and has no execute")
    if not client and execute is None:
        raise ToolDefinitionError(f"Tool {name}: execute is required (or client=True)")
    if description is None:
        description = (inspect.getdoc(execute) or "") if execute is not None else ""
    convert: Callable[[Any], Any] | None = None
    run: Execute | None = execute
    if execute is not None:
        typed = _typed_call(name, execute)
        if typed is not None:
            convert, run = typed.convert, typed.execute
            if parameters is None:
                parameters = typed.schema
    params = parameters if parameters is not None else dict(_EMPTY_SCHEMA)
    validator = _compile_schema(name, params)
    return Tool(name, description, params, replay, run, client, convert, validator)


@overload
def tool(name: AnyExecute, /) -> Tool: ...


@overload
def tool(name: str | None = None, description: str | None = None, parameters: dict[str, Any] | None = None,
         *, replay: Replay = "unsafe") -> Callable[[AnyExecute], Tool]: ...


def tool(name: str | AnyExecute | None = None, description: str | None = None,
         parameters: dict[str, Any] | None = None, *, replay: Replay = "unsafe") -> Tool | Callable[[AnyExecute], Tool]:
    """Decorator form of `define_tool`: `@tool` or `@tool(name, description, parameters, replay=)`.
    The function's name and docstring are the defaults; its signature gives the schema."""
    if callable(name):
        return define_tool(execute=name)

    def wrap(fn: AnyExecute) -> Tool:
        return define_tool(name, description, parameters, replay=replay, execute=fn)

    return wrap


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self._tools:
                raise ToolDefinitionError(f"Tool {t.name} is defined twice")
            self._tools[t.name] = t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())


# --------------------------------------------------------------------------- argument checking


def parse_arguments(tool: Tool, raw: str) -> Any:
    """Parse, validate and convert a call's arguments into what `tool.execute` receives. Raises
    `ToolArgumentError` with sentences the model can act on: the JSON path and the failed keyword
    of each problem (at most five), e.g. `$.days: 30 is greater than the maximum of 14 (keyword:
    maximum)`."""
    try:
        args = json.loads(raw) if raw.strip() else {}
    except RecursionError:
        raise _too_deep(tool) from None
    except ValueError as exc:
        raise ToolArgumentError(f"Tool {tool.name}: the arguments are not valid JSON ({exc})") from None
    if _depth_exceeds(args, MAX_DEPTH):
        raise _too_deep(tool)
    validator = tool.validator if tool.validator is not None else _compile_schema(tool.name, tool.parameters)
    try:
        errors = sorted(validator.iter_errors(args), key=lambda e: (e.json_path, str(e.validator)))
    except RecursionError:  # a recursive `$ref` schema on arguments just under MAX_DEPTH
        raise _too_deep(tool) from None
    if errors:
        problems = [_problem(e) for e in errors[:_MAX_PROBLEMS]]
        if len(errors) > _MAX_PROBLEMS:
            problems.append(f"and {len(errors) - _MAX_PROBLEMS} more")
        raise ToolArgumentError(f"Tool {tool.name}: invalid arguments: " + "; ".join(problems))
    if tool.convert is None:
        return args
    try:
        return tool.convert(args)
    except ToolArgumentError:
        raise
    except Exception as exc:  # noqa: BLE001 - a class's own check (e.g. __post_init__) refused a value
        raise ToolArgumentError(f"Tool {tool.name}: the arguments cannot be converted: {_conversion_error(exc)}") \
            from None


def _too_deep(tool: Tool) -> ToolArgumentError:
    return ToolArgumentError(f"Tool {tool.name}: the arguments are nested too deeply "
                             f"(at most {MAX_DEPTH} levels of objects and arrays)")


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether `value` nests objects/arrays more than `limit` deep (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _problem(error: Any) -> str:
    """One problem from a `jsonschema.ValidationError`: path, message, keyword."""
    text = f"{error.json_path}: {_shorten(error.message)} (keyword: {error.validator})"
    if error.context:  # anyOf / oneOf: name the branch that came closest (it got deepest in)
        closest = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
        text += f", closest: {closest.json_path}: {_shorten(closest.message)} (keyword: {closest.validator})"
    return text


def _shorten(text: str, limit: int = 200) -> str:
    """A message quotes the offending value; a long one keeps its start and its end."""
    return text if len(text) <= limit else f"{text[:limit * 2 // 3]} … {text[-limit // 4:]}"


def _conversion_error(exc: BaseException) -> str:
    leaves: list[BaseException] = []

    def collect(e: BaseException) -> None:
        if isinstance(e, BaseExceptionGroup):
            for sub in e.exceptions:
                collect(sub)
        else:
            leaves.append(e)

    collect(exc)
    return "; ".join(_shorten(f"{type(e).__name__}: {e}") for e in leaves[:_MAX_PROBLEMS])


def _compile_schema(tool_name: str, schema: Any) -> Any:
    """Check a tool's schema (Draft 2020-12) and every `$ref` in it; return its validator (a
    `jsonschema.Draft202012Validator`)."""
    # jsonschema is imported here, not at the top: it takes ~75 ms to import, and only programs
    # that define tools need it (`durable inspect` never does). It is imported by name because it
    # ships no type information (its stubs are a separate package): its objects are Any here.
    jsonschema = importlib.import_module("jsonschema")
    Draft202012Validator = jsonschema.Draft202012Validator
    SchemaError = jsonschema.SchemaError

    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ToolDefinitionError(f"Tool {tool_name}: parameters must be a JSON schema of type 'object'")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = exc.json_path if exc.json_path != "$" else "the schema"
        raise ToolDefinitionError(f"Tool {tool_name}: the parameters are not a valid JSON schema (Draft 2020-12): "
                                  f"{where}: {_shorten(exc.message)}") from None
    _check_refs(tool_name, schema)
    # `format` is only an annotation in Draft 2020-12 unless a format checker asserts it: we do
    # (date, time, email, ipv4/ipv6, uuid, regex...; formats whose checker needs a package that
    # is not installed are let through)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _check_refs(tool_name: str, schema: dict[str, Any]) -> None:
    """Every `$ref` must resolve inside the schema (no remote schema is ever fetched)."""
    from urllib.parse import urljoin

    from referencing import Resource
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    specifications = importlib.import_module("jsonschema_specifications").REGISTRY  # the metaschemas
    root = Resource.from_contents(schema, default_specification=DRAFT202012)
    registry = specifications.with_resource(root.id() or "", root).crawl()
    stack: list[tuple[Any, str]] = [(schema, root.id() or "")]
    while stack:
        node, base = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$id"), str):
                base = urljoin(base, node["$id"])
            ref = node.get("$ref")
            if isinstance(ref, str):
                try:
                    registry.resolver(base_uri=base).lookup(ref)
                except Unresolvable:
                    raise ToolDefinitionError(f"Tool {tool_name}: the parameters' $ref {ref!r} does not resolve "
                                              "within the schema") from None
            stack.extend((v, base) for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(node, list):
            stack.extend((v, base) for v in node)


# --------------------------------------------------------------------------- typed tools
#
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
class _TypedCall:
    schema: dict[str, Any]
    convert: Callable[[Any], Any]
    execute: Execute


def _typed_call(tool_name: str, fn: AnyExecute) -> _TypedCall | None:
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
    if not inspect.iscoroutinefunction(fn):
        raise ToolDefinitionError(f"Tool {tool_name}: {_qualname(fn)} must be an async function (async def)")
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
        if _strip_annotated(hint) in (ToolApi, ToolContext):
            injected[p.name] = _strip_annotated(hint)
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
        value = await fn(**args, **passed)
        return value if isinstance(value, str) else _unstructure(value)

    execute.__name__ = getattr(fn, "__name__", tool_name)
    execute.__qualname__ = _qualname(fn)
    execute.__doc__ = fn.__doc__
    return _TypedCall(schema, convert, execute)


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
        return ToolDefinitionError(f"Tool {tool_name}: {where}: {why}")

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
        raise ToolDefinitionError(f"Tool {tool_name}: {where}: the annotations of {cls.__qualname__} cannot be "
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
            return tuple(_structure(v, k) for v, k in zip(value, kinds))
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
