"""The JSON text of a record written directly, without the dict in between (the fast path of
`durable.codec.dumps`, which a commit calls for every task, entry, submission and live document).
Each record class gets one generated function that writes its text in one f-string, field by
field: the keys are constants, a string is escaped by the encoder's own C function, an int is its
repr, a nested record or variant is its own generated function.

Same text as the converter's, by construction. The function of a class is generated from the
cattrs hook the converter has for it: the same keys in the same order (read from the hook's
source), and for each field the same handler (the hook's own default argument). A field takes
the fast way only for a value of exactly the type the fast way was made for (a `str` in a `str`
field, a `Running` in a `State` field, a tuple of them...) and when that handler is known to give
that value back unchanged (checked when the function is made); any other value is written the
old way (the converter's: unstructure, then encode), `encode(handler(value))` for that field
alone (JSON text is compositional: a field's text does not depend on its neighbours). A class
whose hook does not have the plain shape (a conditional key, a renamed field, a variant with a
field named `type`) gets no function: `encoder_for` returns None and `dumps` takes the old way
for it. When the fast function raises anything, `dumps` writes the value the old way, which
raises what it always raised.
"""

from __future__ import annotations

import inspect
import json
import linecache
import re
import threading
import types
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

import attrs
import cattrs

Encode = Callable[[Any], str]

_STR: Callable[[str], str] = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.encode_basestring
_FIELD = re.compile(r"'(\w+)': (?:instance\.(\w+)|(__c_unstr_\w+)\(instance\.(\w+)\)),")
_SHAPE = re.compile(r"def \w+\(instance[^)]*\):\s*res = \{((?:\s*'\w+': [^\n]*?,)*)\s*\}"
                    r"((?:\s*if instance\.\w+ != __c_def_\w+:\s*res\['\w+'\] = [^\n]*?(?=\s*(?:if |return res)))*)"
                    r"\s*return res\s*$")
# A field written only when it differs from its default (cattrs' omit_if_default): after the dict.
_OMITTED = re.compile(r"if instance\.(\w+) != (__c_def_\w+):\s*res\['(\w+)'\] = "
                      r"(?:instance\.(\w+)\b|(__c_unstr_\w+)\(instance\.(\w+)\))")
_PRIMS: dict[Any, Any] = {str: "s", int: 7, float: 1.5, bool: True}


class Encoders:
    """The generated text functions of one converter's records, made on first use and kept."""

    def __init__(self, converter: cattrs.Converter, tags: dict[Any, dict[str, type]], encode: Encode) -> None:
        self._conv = converter
        self._tags = tags  # union -> {tag: class}, as the converter's union hooks write them
        self._encode = encode  # the C encoder of JSON values (`codec._encode`)
        self._plain: dict[type, Encode | None] = {}
        self._tagged: dict[type, Encode | None] = {}
        self._guard = threading.RLock()
        self._making: set[tuple[type, bool]] = set()  # classes whose function is being made (under the guard)
        self._ns: dict[str, Any] = {"NULL": "null", "TRUE": "true", "FALSE": "false", "S": _STR,
                                    "V": self._value, "FL": _float}
        self._n = 0
        self.sources: dict[str, str] = {}  # name -> the generated code (to read when debugging)

    # ----------------------------------------------------------------- lookup

    def encoder_for(self, cls: Any) -> Encode | None:
        """A function writing the text `dumps(value, cls)` writes, for a value of exactly class
        `cls` (a record class) or of one of the variants of `cls` (a tagged union); None when
        there is none (the caller writes the value the old way)."""
        if cls in self._tags:
            return self._variant_writer(cls, None)[1]
        if isinstance(cls, type) and attrs.has(cls):
            return self._record(cls, tagged=False)
        return None

    def _variant_writer(self, union: Any, slow: Encode | None) -> tuple[dict[type, Encode], Encode]:
        """(table, write): `write(value)` for a value of a union field: its variant's function
        (made when the variant is first met, so that a process makes only the hooks it uses, and
        kept in `table` by class), else `slow` (None: raise `_NotFast`)."""
        table: dict[type, Encode] = {}
        members = self._tags[union]  # an open variant's members may be registered later: looked up here

        def write(value: Any) -> str:
            enc = table.get(value.__class__)
            if enc is None:
                cls = value.__class__
                found = self._record(cls, tagged=True) if cls in members.values() else None
                if found is None:
                    if slow is None:
                        raise _NotFast
                    return slow(value)
                enc = table[cls] = found
            return enc(value)

        return table, write

    def _record(self, cls: type, *, tagged: bool) -> Encode | None:
        made = self._tagged if tagged else self._plain
        if cls in made:  # made (or refused) for good: another thread's function in the making is
            return made[cls]  # not in `made` yet, so this thread waits for the lock below
        with self._guard:
            if cls in made:
                return made[cls]
            if (cls, tagged) in self._making:  # a class that holds itself: that field the old way
                return None
            self._making.add((cls, tagged))
            try:
                name = self._name(cls.__name__ + ("_t" if tagged else ""))
                text = self._generate(cls, name, tagged)
                fn: Encode | None = None
                if text is not None:
                    self.sources[name] = text
                    exec(text, self._ns)  # code generated above, from field names the regexes checked
                    fn = self._ns[name]
            finally:
                self._making.discard((cls, tagged))
            made[cls] = fn
            return fn

    # ----------------------------------------------------------------- generation

    def _name(self, stem: str) -> str:
        self._n += 1
        return f"_{re.sub(r'[^A-Za-z0-9_]', '_', stem)}_{self._n}"

    def _const(self, value: Any, stem: str = "c") -> str:
        name = self._name(stem)
        self._ns[name] = value
        return name

    def _generate(self, cls: type, name: str, tagged: bool) -> str | None:
        hook = self._conv.get_unstructure_hook(cls)
        code = getattr(hook, "__code__", None)  # cattrs keeps the source of a hook it generates
        source = "".join(linecache.getlines(code.co_filename)) if code is not None else ""
        shape = _SHAPE.match(source)
        if shape is None or not source.startswith(f"def {code.co_name}(" if code else "-"):
            return None
        fields = _FIELD.findall(shape.group(1))
        if len(fields) != shape.group(1).count("':"):
            return None
        omitted = _OMITTED.findall(shape.group(2))
        if len(omitted) != shape.group(2).count("if ") or (omitted and not fields):
            return None  # (every field omitted when default: the opening brace has no first key)
        defaults = {k: p.default for k, p in inspect.signature(hook).parameters.items()}
        try:
            types_ = {a.name: a.type for a in attrs.fields(attrs.resolve_types(cls))}
        except Exception:  # noqa: BLE001 - a type that does not resolve: no function, the old way
            return None
        tag = None
        if tagged:
            tag = _tag_of(self._tags, cls)
            if tag is None or any(key == "type" for key, *_ in fields):
                return None
        lines = [f"def {name}(v):"]
        parts: list[str] = []
        for i, (key, plain_attr, handler_name, handler_attr) in enumerate(fields):
            attr = plain_attr or handler_attr
            if attr != key or attr not in types_:
                return None
            handler = defaults.get(handler_name) if handler_name else None
            if handler_name and handler is None:
                return None
            expr = self._field(f"x{i}", types_[attr], handler)
            lines.append(f" x{i} = v.{attr}")
            opening = ("{" if tag is None else "{" + _STR("type") + ":" + _STR(tag) + ",") if i == 0 else ","
            parts.append("{" + self._const(opening + _STR(key) + ":") + "}{" + expr + "}")
        for j, (attr, default_name, key, plain_attr, handler_name, handler_attr) in enumerate(omitted, len(fields)):
            if (plain_attr or handler_attr) != attr or attr != key or attr not in types_ \
                    or default_name not in defaults:
                return None
            handler = defaults.get(handler_name) if handler_name else None
            if handler_name and handler is None:
                return None
            expr = self._field(f"x{j}", types_[attr], handler)
            lines.append(f" x{j} = v.{attr}")
            # Written as cattrs writes it: only when `value != default`.
            default, prefix = self._const(defaults[default_name], "d"), self._const("," + _STR(key) + ":")
            # (an int field's expression is the int itself, which only the f-string makes text)
            # `is not` first: the default is usually the very object (None, 0, a shared empty record)
            parts.append("{" + f"{prefix} + f\"{{{expr}}}\" if x{j} is not {default} and x{j} != {default} "
                         f"else {self._const('')}" + "}")
        if not parts:
            parts.append("{" + self._const("{" if tag is None else "{" + _STR("type") + ":" + _STR(tag)) + "}")
        parts.append("{" + self._const("}") + "}")
        lines.append(" return f'" + "".join(parts) + "'")
        return "\n".join(lines) + "\n"

    def _field(self, x: str, t: Any, handler: Any) -> str:
        """The expression writing the value `x` of a field of type `t` unstructured by `handler`
        (None: passed as it is, the hook has no handler for it)."""
        if handler is None:
            return self._prim(x, t, "V") if t in _PRIMS or _str_literal(t) else f"V({x})"
        slow = self._const(self._slow(handler), "slow")
        conv = self._conv
        if isinstance(t, type) and attrs.has(t) and handler is conv.get_unstructure_hook(t):
            enc = self._record(t, tagged=False)
            if enc is None:
                return f"{slow}({x})"
            return f"{self._const(enc)}({x}) if {x}.__class__ is {self._const(t)} else {slow}({x})"
        optional, inner = _optional(t)
        if (optional and isinstance(inner, type) and attrs.has(inner)
                and _optional_of(handler, conv.get_unstructure_hook(inner))):
            enc = self._record(inner, tagged=False)
            if enc is None:
                return f"{slow}({x})"
            fast = f"{self._const(enc)}({x}) if {x}.__class__ is {self._const(inner)} else {slow}({x})"
            return f"NULL if {x} is None else {fast}"
        if inner in self._tags and handler is conv.get_unstructure_hook(t):
            table, write = self._variant_writer(inner, self._ns[slow])
            expr = f"({self._const(table)}.get({x}.__class__) or {self._const(write)})({x})"
            return f"NULL if {x} is None else {expr}" if optional else expr
        if (inner in _PRIMS or _str_literal(inner)) and _gives_back(handler, inner, optional):
            expr = self._prim(x, inner, slow)
            return f"NULL if {x} is None else {expr}" if optional else expr
        if not optional and get_origin(t) is tuple and handler is conv.get_unstructure_hook(t):
            return self._tuple(x, t, slow)
        return f"{slow}({x})"

    def _prim(self, x: str, t: Any, slow: str) -> str:
        if t is int:
            return f"{x} if {x}.__class__ is int else {slow}({x})"
        if t is float:
            return f"FL({x}, {slow})"
        if t is bool:
            return f"TRUE if {x} is True else FALSE if {x} is False else {slow}({x})"
        return f"S({x}) if {x}.__class__ is str else {slow}({x})"  # str, or a Literal of strings

    def _tuple(self, x: str, t: Any, slow: str) -> str:
        """A homogeneous tuple (`tuple[X, ...]`) of exactly `tuple`: its elements one by one,
        each the fast way when it is of exactly the element's type, else the whole field the
        old way."""
        args = get_args(t)
        if len(args) != 2 or args[1] is not Ellipsis:
            return f"{slow}({x})"
        elem = args[0]
        if elem in _PRIMS:  # the converter's hook is `list`: elements as they are
            each: Encode = self._value
        elif isinstance(elem, type) and attrs.has(elem):
            enc = self._record(elem, tagged=False)
            if enc is None:
                return f"{slow}({x})"
            each = _exactly(elem, enc)
        elif elem in self._tags:
            each = self._variant_writer(elem, None)[1]
        else:
            return f"{slow}({x})"
        write = self._const(_list_of(each, self._ns[slow]))
        return f"{write}({x}) if {x}.__class__ is tuple else {slow}({x})"

    def _slow(self, handler: Callable[[Any], Any]) -> Encode:
        encode = self._encode
        return lambda value: encode(handler(value))

    def _value(self, x: Any) -> str:
        """A value passed to the encoder as it is (no handler), written as the encoder would."""
        c = x.__class__
        if c is str:
            return _STR(x)
        if c is int:
            return int.__repr__(x)
        if x is None:
            return "null"
        if x is True:
            return "true"
        if x is False:
            return "false"
        return _float(x, self._encode) if c is float else self._encode(x)


class _NotFast(Exception):
    """An element of a tuple that the fast way does not write (the field is written the old way)."""


def _exactly(cls: type, enc: Encode) -> Encode:
    def each(value: Any) -> str:
        if value.__class__ is not cls:
            raise _NotFast
        return enc(value)

    return each


def _list_of(each: Encode, slow: Encode) -> Callable[[tuple[Any, ...]], str]:
    join = ",".join

    def write(value: tuple[Any, ...]) -> str:
        if not value:
            return "[]"
        try:
            return "[" + join([each(e) for e in value]) + "]"
        except _NotFast:
            return slow(value)

    return write


def _float(x: Any, slow: Encode) -> str:
    """A float as the C encoder writes it (its repr); NaN and infinities, and anything not
    exactly a float, the old way."""
    if x.__class__ is float:
        text = float.__repr__(x)
        if text[-1] not in "nf":  # "nan", "inf", "-inf": the encoder's own spelling instead
            return text
    return slow(x)


def _optional(t: Any) -> tuple[bool, Any]:
    """(True, X) for `X | None` of one X, else (False, t)."""
    if get_origin(t) in (Union, types.UnionType):
        args = get_args(t)
        others = tuple(a for a in args if a is not type(None))
        if len(others) == len(args) - 1 and others:
            return True, (others[0] if len(others) == 1 else Union[others])  # noqa: UP007 - as typing spells it
    return False, t


def _optional_of(handler: Any, inner: Any) -> bool:
    """Whether `handler` is cattrs' hook of an optional (`None if v is None else inner(v)`, with
    `inner` its one default argument) for exactly the hook `inner`."""
    defaults = getattr(handler, "__defaults__", None)
    return (getattr(handler, "__name__", "") == "unstructure_optional" and defaults is not None
            and len(defaults) == 1 and defaults[0] is inner and handler(None) is None)


def _str_literal(t: Any) -> bool:
    return get_origin(t) is Literal and all(type(a) is str for a in get_args(t))


def _gives_back(handler: Callable[[Any], Any], t: Any, optional: bool) -> bool:
    """Whether `handler` returns a value of type `t` (and None, for an optional) unchanged."""
    samples = list(get_args(t)) if _str_literal(t) else [_PRIMS[t]]
    if optional:
        samples.append(None)
    try:
        return all(handler(s) is s for s in samples)
    except Exception:  # noqa: BLE001 - a handler that refuses a sample is not the identity
        return False


def _tag_of(tags: dict[Any, dict[str, type]], cls: type) -> str | None:
    """The tag the converter writes for `cls` (`codec.tag_of`: of a class in several unions, the
    last union's)."""
    found = None
    for table in tags.values():
        for tag, member in table.items():
            if member is cls:
                found = tag
    return found


__all__ = ["Encoders"]
