"""Checking a tool's arguments: its schema when the tool is defined (`compile_schema`: Draft
2020-12, of type object, every `$ref` resolvable within it, no remote schema ever fetched), and
each call's arguments before the tool runs (`parse_arguments`) with `jsonschema`, so every keyword
is enforced (`maximum`, `pattern`, `maxLength`, `anyOf`, `$ref`, `format`...). Invalid JSON, a
mismatch or nesting deeper than `MAX_DEPTH` raise `ToolArgumentError` with sentences the model can
act on (the JSON path and the failed keyword); the run continues."""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Mapping
from typing import Any

from ..errors import EditRejected, ToolArgumentError, ToolDefinitionError
from ..records import ApprovalSlot
from .protocol import Tool

MAX_DEPTH = 64
"""Arguments nested deeper than this (objects and arrays) are refused before validation: the
validator and the conversion recurse, and no real tool takes JSON this deep."""
_MAX_PROBLEMS = 5  # problems listed in one argument error

ArgumentError = ToolArgumentError  # the name the tool task catches


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
    validator = tool.validator if tool.validator is not None else compile_schema(tool.name, tool.parameters)
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


def check_value(schema: dict[str, Any], text: str) -> tuple[Any, list[str]]:
    """A JSON text checked against a JSON schema (Draft 2020-12, formats asserted, as tools'
    arguments are): `(value, [])`, or `(None, problems)`, at most five sentences the model can act
    on (`$.age: 'x' is not of type 'integer' (keyword: type)`). Structured output's check."""
    try:
        value = json.loads(text)
    except RecursionError:
        return None, [f"the answer is nested too deeply (at most {MAX_DEPTH} levels of objects and arrays)"]
    except ValueError as exc:
        return None, [f"the answer is not valid JSON ({exc})"]
    if _depth_exceeds(value, MAX_DEPTH):
        return None, [f"the answer is nested too deeply (at most {MAX_DEPTH} levels of objects and arrays)"]
    errors = sorted(_validator(json.dumps(schema, sort_keys=True)).iter_errors(value),
                    key=lambda e: (e.json_path, str(e.validator)))
    if not errors:
        return value, []
    problems = [_problem(e) for e in errors[:_MAX_PROBLEMS]]
    if len(errors) > _MAX_PROBLEMS:
        problems.append(f"and {len(errors) - _MAX_PROBLEMS} more")
    return None, problems


@functools.lru_cache(maxsize=64)
def check_edit(slot: ApprovalSlot | None, call_id: str, arguments: str | None) -> Mapping[str, Any] | None:
    """The edited `arguments` (JSON text, None: the model's) of the waiting call `slot` as an
    object, once valid against the tool's schema kept with it (when it is; rows written before
    it was kept are checked by the owner alone): what a decider outside the owner (the console,
    `durable.remote`) checks before it puts a decision. Raises `EditRejected`."""
    value = _edited(arguments, call_id)
    if value is None or slot is None or slot.parameters is None:
        return value
    _, problems = check_value(json.loads(slot.parameters), json.dumps(value, ensure_ascii=False))
    if problems:
        raise EditRejected(f"Tool call {call_id} ({slot.tool}) was not approved: Tool {slot.tool}: invalid "
                           f"arguments: " + "; ".join(problems), call_id=call_id, tool=slot.tool)
    return value


def _edited(arguments: str | None, call_id: str) -> Mapping[str, Any] | None:
    if arguments is None:
        return None
    try:
        value = json.loads(arguments)
    except ValueError as exc:
        raise EditRejected(f"Tool call {call_id} was not approved: the edited arguments are not JSON ({exc})",
                           call_id=call_id) from None
    if not isinstance(value, dict):
        raise EditRejected(f"Tool call {call_id} was not approved: the edited arguments are not a JSON object",
                           call_id=call_id)
    return value


def _validator(schema_text: str) -> Any:
    """The validator of a schema (by its canonical text: a run checks each answer with it)."""
    jsonschema = importlib.import_module("jsonschema")
    validator = jsonschema.Draft202012Validator
    return validator(json.loads(schema_text), format_checker=validator.FORMAT_CHECKER)


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


def compile_schema(tool_name: str, schema: Any) -> Any:
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



__all__ = ["MAX_DEPTH", "ArgumentError", "check_value", "compile_schema", "parse_arguments"]
