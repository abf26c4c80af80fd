"""Tools from typed functions, and argument validation by JSON schema (Draft 2020-12): the schema
a signature gives, the exact error the model reads for each failed keyword, schemas refused when
the tool is defined, and arguments too deep to check."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

import attrs
import pytest

import durable
from durable import records as r
from durable.tools import MAX_DEPTH, parse_arguments
from durable.errors import DurableError, ToolArgumentError, ToolDefinitionError
from durable.models import FauxModel, faux

from .conftest import settings

# --------------------------------------------------------------------------- typed tools


class Place(TypedDict):
    """Where to look."""

    city: Annotated[str, "The city's name"]
    country: NotRequired[str]


@dataclasses.dataclass
class Window:
    start: int
    end: int = 10

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"the window ends ({self.end}) before it starts ({self.start})")


@attrs.frozen
class Unit:
    """A unit of temperature."""

    name: Literal["C", "F"]
    precision: int = 0


class Detail(enum.Enum):
    SHORT = "short"
    LONG = "long"


@durable.tool(replay="safe")
async def forecast(place: Place, days: Annotated[int, "Days ahead", {"minimum": 1, "maximum": 14}] = 1,
                   unit: Optional[Unit] = None,  # noqa: UP045 - the spelling under test
                   window: Window | None = None, tags: list[str] | None = None,
                   detail: Detail = Detail.SHORT, *, api: durable.ToolApi, ctx: durable.ToolContext) -> dict[str, Any]:
    """The weather forecast for a place.

    Ask for at most 14 days."""
    await api.output(f"attempt {ctx.attempt}\n")
    return {"place": place, "days": days, "unit": unit, "window": window, "tags": tags, "detail": detail.value}


def test_a_typed_function_gives_the_name_the_docstring_and_the_schema():
    assert forecast.name == "forecast"
    assert forecast.description == "The weather forecast for a place.\n\nAsk for at most 14 days."
    assert forecast.replay == "safe"
    assert forecast.parameters == {
        "type": "object",
        "properties": {
            "place": {"description": "Where to look.", "type": "object", "properties": {
                "city": {"type": "string", "description": "The city's name"},
                "country": {"type": "string"}}, "required": ["city"], "additionalProperties": False},
            "days": {"type": "integer", "description": "Days ahead", "minimum": 1, "maximum": 14, "default": 1},
            "unit": {"anyOf": [
                {"description": "A unit of temperature.", "type": "object", "properties": {
                    "name": {"type": "string", "enum": ["C", "F"]}, "precision": {"type": "integer"}},
                 "required": ["name"], "additionalProperties": False},
                {"type": "null"}], "default": None},
            "window": {"anyOf": [
                {"type": "object", "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                 "required": ["start"], "additionalProperties": False},
                {"type": "null"}], "default": None},
            "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
            "detail": {"type": "string", "enum": ["short", "long"], "default": "short"},
        },
        "required": ["place"],
        "additionalProperties": False,
    }


def test_arguments_arrive_converted_to_their_annotated_types():
    args = parse_arguments(forecast, '{"place": {"city": "Oslo"}, "unit": {"name": "C"}, '
                                     '"window": {"start": 2}, "detail": "long", "days": 3.0}')
    assert args == {"place": {"city": "Oslo"}, "unit": Unit("C"), "window": Window(2, 10), "detail": Detail.LONG,
                    "days": 3}
    assert type(args["days"]) is int


def test_scalars_lists_dicts_literals_and_unions():
    @durable.tool
    async def scalars(s: str, i: int, f: float, b: bool, xs: list[int], m: dict[str, float],
                      pair: tuple[str, int], mode: Literal["a", "b"] = "a", either: int | str = 0,
                      anything: Any = None) -> str:
        return "ok"

    props = scalars.parameters["properties"]
    assert props == {
        "s": {"type": "string"}, "i": {"type": "integer"}, "f": {"type": "number"}, "b": {"type": "boolean"},
        "xs": {"type": "array", "items": {"type": "integer"}},
        "m": {"type": "object", "additionalProperties": {"type": "number"}},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 2,
                 "maxItems": 2},
        "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 0},
        "anything": {"default": None},
    }
    assert scalars.parameters["required"] == ["s", "i", "f", "b", "xs", "m", "pair"]
    assert scalars.description == ""
    args = parse_arguments(scalars, '{"s": "x", "i": 1, "f": 2, "b": true, "xs": [1], "m": {"k": 1}, "pair": ["a", 1]}')
    assert args == {"s": "x", "i": 1, "f": 2.0, "b": True, "xs": [1], "m": {"k": 1.0}, "pair": ("a", 1)}


@pytest.mark.anyio
@dataclasses.dataclass
class Circle:
    radius: float


@attrs.frozen
class Square:
    side: float
    _label: str = ""  # an attrs private attribute: its argument (and JSON key) is `label`


def test_a_union_takes_the_branch_its_schema_accepts():
    @durable.tool
    async def area(shape: Circle | Square | None, either: int | str = 0) -> float:
        return 0.0

    assert area.parameters["properties"]["shape"]["anyOf"][1] == {
        "type": "object", "properties": {"side": {"type": "number"}, "label": {"type": "string"}},
        "required": ["side"], "additionalProperties": False}
    assert parse_arguments(area, '{"shape": {"radius": 1}, "either": "x"}') == {"shape": Circle(1.0), "either": "x"}
    assert parse_arguments(area, '{"shape": {"side": 2, "label": "s"}, "either": 3}') == {
        "shape": Square(2.0, "s"), "either": 3}
    assert parse_arguments(area, '{"shape": null}') == {"shape": None}


@pytest.mark.anyio
async def test_a_typed_tool_runs_in_the_harness_with_its_api_and_context(host):
    call = faux.call("forecast", {"place": {"city": "Oslo"}, "unit": {"name": "F", "precision": 1}, "days": 2})
    model = FauxModel([faux.reply("", tool_calls=[call]), faux.reply("Cold.")])
    async with host.open(model, settings=settings(), tools=[forecast]) as h:
        assert await (await h.root.submit("Weather?")).wait() == r.Answered("Cold.", 4)
    assert model.requests[0].tools[0].parameters == forecast.parameters
    result = model.requests[1].messages[-1]
    assert result == r.ToolResultEntry(call.id, "forecast", '{"place": {"city": "Oslo"}, "days": 2, "unit": '
                                       '{"name": "F", "precision": 1}, "window": null, "tags": null, "detail": "short"}')


def test_an_explicit_schema_wins_over_the_signature():
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 5}}, "required": ["city"]}

    @durable.tool(parameters=schema)
    async def short(city: str) -> str:
        return city

    assert short.parameters is schema
    assert parse_arguments(short, '{"city": "Oslo"}') == {"city": "Oslo"}
    with pytest.raises(ToolArgumentError) as info:
        parse_arguments(short, '{"city": "Trondheim"}')
    assert str(info.value) == "Tool short: invalid arguments: $.city: 'Trondheim' is too long (keyword: maxLength)"


@pytest.mark.anyio
async def test_the_raw_form_still_gets_the_parsed_json(host):
    seen = []

    async def raw(args, api, ctx):
        seen.append(args)
        return "done"

    async def annotated(args: dict[str, Any], api: durable.ToolApi, ctx: durable.ToolContext) -> str:
        seen.append(args)
        return "done"

    tools = [durable.define_tool("raw", "r", execute=raw), durable.define_tool("annotated", "a", execute=annotated)]
    assert [t.parameters for t in tools] == [{"type": "object", "properties": {}}] * 2
    calls = [faux.call("raw", {"q": [1, {"x": None}]}), faux.call("annotated", {"n": 1})]
    model = FauxModel([faux.reply("", tool_calls=calls), faux.reply("ok")])
    async with host.open(model, settings=settings(), tools=tools) as h:
        assert await (await h.root.submit("go")).wait() == r.Answered("ok", 5)
    assert sorted(seen, key=str) == [{"n": 1}, {"q": [1, {"x": None}]}]


def test_a_value_a_class_refuses_is_an_argument_error():
    with pytest.raises(ToolArgumentError) as info:
        parse_arguments(forecast, '{"place": {"city": "Oslo"}, "window": {"start": 5, "end": 1}}')
    assert str(info.value) == ("Tool forecast: the arguments cannot be converted: "
                               "ValueError: the window ends (1) before it starts (5)")


# --------------------------------------------------------------------------- what a signature cannot be


class Node(TypedDict):
    children: list[Node]


@pytest.mark.parametrize(("source", "message"), [
    ("async def f(x): ...", "parameter 'x' of f has no type annotation"),
    ("async def f(x: set[bytes]): ...",
     ("parameter 'x' of f: <class 'bytes'> cannot be described as JSON schema (use str, int, float, bool, list, "
      "dict, Literal, an Enum, a TypedDict, an attrs class or a dataclass)")),
    ("async def f(x: dict[int, str]): ...",
     "parameter 'x' of f: the keys of dict[int, str] must be str (JSON object keys are strings)"),
    ("async def f(node: Node): ...",
     "parameter 'node' of f, field Node.children: Node refers to itself; recursive types are not supported"),
    ("async def f(x: int, /): ...", "parameter 'x' of f is positional-only; tool arguments are passed by name"),
    ("async def f(x: Missing): ...",
     ("the annotations of f cannot be resolved (NameError: name 'Missing' is not defined); define the types "
      "they name at module level")),
])
def test_a_signature_that_cannot_be_a_schema_is_refused_naming_the_tool(source, message):
    namespace: dict[str, Any] = {"Node": Node}
    exec(f"from __future__ import annotations\n{source}", namespace)  # noqa: S102 - each case is a signature
    with pytest.raises(ToolDefinitionError) as info:
        durable.tool(namespace["f"])
    assert str(info.value) == f"Tool f: {message}"
    assert isinstance(info.value, DurableError)


# --------------------------------------------------------------------------- every keyword enforced


def checked(schema: dict[str, Any]) -> durable.Tool:
    async def run(args, api, ctx):
        return "ok"

    return durable.define_tool("t", "A tool", {"type": "object", **schema}, execute=run)


@pytest.mark.parametrize(("schema", "arguments", "problem"), [
    ({"properties": {"n": {"type": "integer", "maximum": 14}}}, '{"n": 15}',
     "$.n: 15 is greater than the maximum of 14 (keyword: maximum)"),
    ({"properties": {"n": {"type": "number", "exclusiveMinimum": 0}}}, '{"n": 0}',
     "$.n: 0 is less than or equal to the minimum of 0 (keyword: exclusiveMinimum)"),
    ({"properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}, '{"code": "eur"}',
     "$.code: 'eur' does not match '^[A-Z]{3}$' (keyword: pattern)"),
    ({"properties": {"s": {"type": "string", "maxLength": 3}}}, '{"s": "abcd"}',
     "$.s: 'abcd' is too long (keyword: maxLength)"),
    ({"properties": {"s": {"type": "string", "minLength": 1}}}, '{"s": ""}',
     "$.s: '' should be non-empty (keyword: minLength)"),
    ({"properties": {"xs": {"type": "array", "maxItems": 1}}}, '{"xs": [1, 2]}',
     "$.xs: [1, 2] is too long (keyword: maxItems)"),
    ({"properties": {"xs": {"type": "array", "uniqueItems": True}}}, '{"xs": [1, 1]}',
     "$.xs: [1, 1] has non-unique elements (keyword: uniqueItems)"),
    ({"properties": {"v": {"anyOf": [{"type": "integer"}, {"type": "string", "format": "date"}]}}}, '{"v": 1.5}',
     ("$.v: 1.5 is not valid under any of the given schemas (keyword: anyOf), closest: $.v: 1.5 is not of type "
      "'integer' (keyword: type)")),
    ({"properties": {"v": {"oneOf": [{"type": "integer"}, {"minimum": 0}]}}}, '{"v": 3}',
     "$.v: 3 is valid under each of {'minimum': 0}, {'type': 'integer'} (keyword: oneOf)"),
    ({"properties": {"v": {"const": "yes"}}}, '{"v": "no"}', "$.v: 'yes' was expected (keyword: const)"),
    ({"properties": {"day": {"type": "string", "format": "date"}}}, '{"day": "2026-13-45"}',
     "$.day: '2026-13-45' is not a 'date' (keyword: format)"),
    ({"$defs": {"pos": {"type": "integer", "minimum": 1}}, "properties": {"n": {"$ref": "#/$defs/pos"}}}, '{"n": 0}',
     "$.n: 0 is less than the minimum of 1 (keyword: minimum)"),
    ({"properties": {"a": {"type": "object", "properties": {"b": {"type": "array", "items": {"type": "boolean"}}}}}},
     '{"a": {"b": [true, "no"]}}', "$.a.b[1]: 'no' is not of type 'boolean' (keyword: type)"),
    ({"required": ["city"]}, "{}", "$: 'city' is a required property (keyword: required)"),
    ({"additionalProperties": False}, '{"x": 1}',
     "$: Additional properties are not allowed ('x' was unexpected) (keyword: additionalProperties)"),
    ({}, "[1]", "$: [1] is not of type 'object' (keyword: type)"),
    ({"properties": {"s": {"type": "string", "maxLength": 5}}}, '{"s": "' + "x" * 1000 + '"}',
     "$.s: '" + "x" * 132 + " … " + "x" * 37 + "' is too long (keyword: maxLength)"),
])
def test_every_keyword_is_enforced_and_the_model_reads_the_path_and_the_keyword(schema, arguments, problem):
    with pytest.raises(ToolArgumentError) as info:
        parse_arguments(checked(schema), arguments)
    assert str(info.value) == f"Tool t: invalid arguments: {problem}"
    assert isinstance(info.value, DurableError)


def test_several_problems_are_listed_in_path_order_up_to_five():
    tool = checked({"properties": {k: {"type": "integer"} for k in "abcdefg"}})
    with pytest.raises(ToolArgumentError) as info:
        parse_arguments(tool, '{"g": "x", "b": "x", "a": "x", "c": "x", "d": "x", "e": "x", "f": "x"}')
    assert str(info.value) == "Tool t: invalid arguments: " + "; ".join(
        f"$.{k}: 'x' is not of type 'integer' (keyword: type)" for k in "abcde") + "; and 2 more"


def test_valid_arguments_pass_as_parsed():
    tool = checked({"properties": {"n": {"type": "integer", "maximum": 14}}, "required": ["n"]})
    assert parse_arguments(tool, '{"n": 14}') == {"n": 14}
    assert parse_arguments(checked({}), "   ") == {}


# --------------------------------------------------------------------------- schemas refused at definition


@pytest.mark.parametrize(("parameters", "message"), [
    ({"type": "array"}, "parameters must be a JSON schema of type 'object'"),
    ({"type": "object", "properties": {"n": {"type": "integr"}}},
     ("the parameters are not a valid JSON schema (Draft 2020-12): $.properties.n.type: 'integr' is not valid "
      "under any of the given schemas")),
    ({"type": "object", "properties": {"n": {"maximum": "14"}}},
     ("the parameters are not a valid JSON schema (Draft 2020-12): $.properties.n.maximum: '14' is not of type "
      "'number'")),
    ({"type": "object", "required": "n"},
     "the parameters are not a valid JSON schema (Draft 2020-12): $.required: 'n' is not of type 'array'"),
    ({"type": "object", "properties": {"n": {"$ref": "#/$defs/missing"}}},
     "the parameters' $ref '#/$defs/missing' does not resolve within the schema"),
    ({"type": "object", "properties": {"n": {"$ref": "https://example.com/schema.json"}}},
     "the parameters' $ref 'https://example.com/schema.json' does not resolve within the schema"),
])
def test_an_invalid_schema_is_refused_when_the_tool_is_defined(parameters, message):
    async def run(args, api, ctx):
        return "ok"

    with pytest.raises(ToolDefinitionError) as info:
        durable.define_tool("weather", "w", parameters, execute=run)
    assert str(info.value) == f"Tool weather: {message}"


def test_a_schema_may_refer_to_the_draft_2020_12_metaschema():
    tool = checked({"properties": {"schema": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}})
    assert parse_arguments(tool, '{"schema": {"type": "string"}}') == {"schema": {"type": "string"}}


# --------------------------------------------------------------------------- arguments too deep


def nested(depth: int) -> str:
    return '{"v": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 3_000, 100_000])
def test_arguments_nested_too_deep_are_an_argument_error_not_a_recursion_error(depth):
    with pytest.raises(ToolArgumentError) as info:
        parse_arguments(checked({}), nested(depth))
    assert str(info.value) == "Tool t: the arguments are nested too deeply (at most 64 levels of objects and arrays)"


def test_arguments_just_deep_enough_are_checked_even_by_a_recursive_schema():
    tree = checked({"$defs": {"tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
                    "properties": {"v": {"$ref": "#/$defs/tree"}}})
    assert parse_arguments(tree, nested(MAX_DEPTH))["v"] == parse_arguments(checked({}), nested(MAX_DEPTH))["v"]


@pytest.mark.anyio
async def test_a_call_nested_3000_deep_gets_an_error_result_and_the_run_continues(host):
    async def run(args, api, ctx):
        return "ran"

    tools = [durable.define_tool("echo", "e", execute=run)]
    call = faux.call("echo", raw=nested(3_000), id="deep")
    model = FauxModel([faux.reply("", tool_calls=[call]), faux.reply("Sorry.")])
    async with host.open(model, settings=settings(), tools=tools) as h:
        assert await (await h.root.submit("go")).wait() == r.Answered("Sorry.", 4)
    result = model.requests[1].messages[-1]
    assert (result.call_id, result.is_error, result.diagnostics[0].code) == ("deep", True, "invalid_arguments")
    assert result.content == "Tool echo: the arguments are nested too deeply (at most 64 levels of objects and arrays)"
    assert await host.transcript() == ["user", "assistant:tool_use", "tool_result:error", "assistant:stop"]
