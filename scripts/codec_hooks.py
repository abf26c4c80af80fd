"""Writes durable/_codec_hooks.py: the codec's cattrs hooks as checked-in Python source.

Run: `python scripts/codec_hooks.py` (after changing a record class, a task kind's records or
cattrs; tests/storage/test_codec_hooks.py fails while the file differs from what this writes;
`--check` only says whether it does).

cattrs makes each hook by generating a function's source and compiling it, after resolving the
class's string annotations: ~0.3 ms a class, ~74 classes in a process that recovers a turn. This
script lets cattrs make every hook the fast converter of `durable.codec` makes for durable's own
records (the task kinds' included), and writes each one's source, unchanged, inside a function
that computes what the source refers to (the hooks of its fields, their types, their defaults)
the way cattrs did. `durable.codec` uses a hook from the file when the class still has the same
fields, and lets cattrs make any other (a class registered by code outside durable).
"""

from __future__ import annotations

import builtins
import linecache
import re
import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "durable" / "_codec_hooks.py"
_FILENAME = re.compile(r"<cattrs generated (structure|unstructure) (.+?)(?:-\d+)?>$")
_LITERALS = (type(None), bool, int, float, str)


def _capture() -> list[tuple[str, type, str, dict[str, Any]]]:
    """(kind, class, source, globals) of every hook the fast converter makes for durable's records."""
    sys.path.insert(0, str(ROOT))
    stub = types.ModuleType("durable._written_hooks")
    stub.written_hook = lambda kind, cls, conv: None  # type: ignore[attr-defined]  # cattrs makes every hook
    sys.modules["durable._written_hooks"] = stub
    import cattrs.gen

    made: list[tuple[str, dict[str, Any]]] = []

    def capturing_eval(code: Any, globs: dict[str, Any]) -> Any:
        made.append((code.co_filename, globs))
        return builtins.eval(code, globs)

    cattrs.gen.eval = capturing_eval  # type: ignore[attr-defined]  # the module's name, not the builtin
    import durable.tasks  # noqa: F401 - registers every task kind's records
    from durable import codec, records as r

    seeds = [v for m in list(sys.modules.values()) if m and m.__name__.startswith("durable.records")
             for v in vars(m).values() if isinstance(v, type) and v.__module__ == m.__name__]
    import attrs

    for cls in sorted({c for c in seeds if attrs.has(c)}, key=lambda c: (c.__module__, c.__qualname__)):
        codec.converter.get_unstructure_hook(cls)
        codec.converter.get_structure_hook(cls)
    for union, tags in codec._TAGS.items():
        for tag, cls in tags.items():
            codec.converter.get_unstructure_hook(cls)
            try:  # makes the variant's hook (the tag allowed next to the fields), then may refuse {}
                codec.converter.structure({"type": tag}, union)
            except Exception:  # noqa: BLE001 - only the hook is wanted
                pass
    del r
    out = []
    for filename, globs in made:
        found = _FILENAME.match(filename)
        if found is None:  # a hook of a dict type (cattrs' mapping hooks): made by cattrs, as before
            continue
        kind = found.group(1)
        cls = globs["__cl"] if kind == "structure" else None
        if cls is None:
            fn = next(v for k, v in globs.items() if k.startswith("unstructure_"))
            cls = _class_named(found.group(2), fn)
        source = "\n".join(line.rstrip("\n") for line in linecache.getlines(filename))
        out.append((kind if "__c_feke" in globs or kind == "unstructure" else "variant", cls, source, globs))
    return out


def _class_named(dotted: str, fn: Any) -> type:
    for m in list(sys.modules.values()):
        if m is None:
            continue
        for v in vars(m).values():
            if isinstance(v, type) and f"{v.__module__}.{v.__qualname__}" == dotted:
                return v
    raise LookupError(f"no class {dotted} (hook {fn!r})")


def _type(t: Any) -> str:
    """A Python expression giving `t` back (checked by evaluating it)."""
    text = _type_text(t)
    import typing

    again = eval(text, {"m": sys.modules, "typing": typing})
    if again != t or type(again) is not type(t):
        raise ValueError(f"{text} does not give {t!r} back")
    return text


def _type_text(t: Any) -> str:
    if t is Any:
        return "typing.Any"
    if t is type(None):
        return "None"
    if t is Ellipsis:
        return "..."
    origin = get_origin(t)
    if isinstance(t, types.UnionType):
        return " | ".join(_type_text(a) for a in get_args(t))
    if origin is Union:
        return f"typing.Union[{', '.join(_type_text(a) for a in get_args(t))}]"
    if origin is Literal:
        return f"typing.Literal[{', '.join(repr(a) for a in get_args(t))}]"
    if origin is not None and isinstance(t, types.GenericAlias):
        return f"{_type_text(origin)}[{', '.join(_type_text(a) for a in get_args(t))}]"
    if isinstance(t, type):
        if t.__module__ == "builtins":
            return t.__qualname__
        return f"m[{t.__module__!r}].{t.__qualname__}"
    raise ValueError(f"cannot write the type {t!r}")


def _value(name: str, value: Any, cls: type, conv: Any, kind: str) -> str:
    """The expression, in the hook's factory, of the hook's global `name` (`value` when made)."""
    import attrs

    fields = attrs.fields_dict(cls)
    field = name.split("_", 4)[-1] if name.startswith("__c_") else ""
    if name == "__cl":
        return "cls"
    if name == "__c_a":
        return "{" + ", ".join(repr(k) for k in sorted(value)) + "}" if value else "set()"
    if name in ("__c_feke", "__c_cve", "__c_avn"):
        return f"cattrs.errors.{value.__name__}"
    if name.startswith("__c_type_"):
        return _type(fields[field].type)
    if name.startswith(("__c_unstr_", "__c_structure_")):
        t = fields[field].type
        if value is None:
            return "None"
        if value is t:
            return _type(t)
        get = "get_unstructure_hook" if name.startswith("__c_unstr_") else "get_structure_hook"
        again = getattr(conv, get)(t, cache_result=False)
        if again != value and getattr(again, "__code__", None) is not getattr(value, "__code__", ()):
            raise ValueError(f"{cls.__qualname__}.{field}: its hook is not the converter's for {t!r}")
        return f"conv.{get}({_type(t)})"
    if name.startswith("__c_def_"):
        default = fields[field].default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]  # attrs types Factory as a function
            assert value is default.factory and not default.takes_self, (cls, field)
            return f"attrs.fields_dict(cls)[{field!r}].default.factory"
        convert = fields[field].converter
        if convert is not None:  # cattrs compares with the converted default
            assert callable(convert) and not isinstance(convert, attrs.Converter), (cls, field)
            assert value == convert(default) and type(value) in _LITERALS, (cls, field)
            return repr(value)
        assert value is default, (cls, field)
        if type(value) in _LITERALS or value == ():
            return repr(value)
        return f"attrs.fields_dict(cls)[{field!r}].default"
    raise ValueError(f"{cls.__qualname__}: a {kind} hook refers to {name} ({value!r}), which this script cannot write")


def generate() -> str:
    """The text of durable/_codec_hooks.py."""
    import attrs
    import cattrs

    captured = _capture()
    from durable import codec

    conv = codec.converter
    body: list[str] = []
    table: list[str] = []
    seen: set[tuple[str, str]] = set()
    for kind, cls, source, globs in sorted(captured, key=lambda x: (x[1].__module__, x[1].__qualname__, x[0])):
        key = (kind, f"{cls.__module__}.{cls.__qualname__}")
        if key in seen:
            continue
        seen.add(key)
        fn_name = re.match(r"def (\w+)\(", source)
        assert fn_name is not None, source
        attrs.resolve_types(cls)
        header = source.split("\n", 1)[0]
        names = re.findall(r"(__c\w+|__cl)=", header)
        used = set(names) | set(re.findall(r"\b(__c_\w+)\b", source))
        factory = f"_{kind[0]}_{key[1].replace('.', '_')}"
        body.append(f"def {factory}(conv: Any, cls: Any) -> Any:")
        body.append("    m = sys.modules")
        for name in sorted(used, key=lambda n: (n != "__cl", n)):
            if name in globs:
                body.append(f"    {name} = {_value(name, globs[name], cls, conv, kind)}")
        body.extend("    " + line if line else "" for line in source.split("\n"))
        body.append(f"    return {fn_name.group(1)}")
        body.append("")
        body.append("")
        fields = tuple(a.name for a in attrs.fields(cls))
        table.append(f"    ({kind!r}, {key[1]!r}): ({factory}, {fields!r},\n"
                     f"        {source!r}),")
    version = getattr(cattrs, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version

        version = dist_version("cattrs")
    head = [
        f'"""The codec\'s cattrs hooks (cattrs {version}), written by `python scripts/codec_hooks.py`: do not edit.',
        "",
        "Each function computes what a hook cattrs generated for one record class refers to, then",
        "defines that hook from its source, unchanged; `HOOKS` maps (kind, class) to (the function,",
        "the class's fields when written, the hook's source). Used by `durable._written_hooks`.",
        '"""',
        "",
        "# ruff: noqa",
        "# mypy: ignore-errors",
        "",
        "import sys",
        "import typing",
        "from typing import Any",
        "",
        "import attrs",
        "import cattrs.errors",
        "",
        "",
    ]
    tail = [f"CATTRS = {version!r}", "", "HOOKS: dict[tuple[str, str], tuple[Any, tuple[str, ...], str]] = {",
            *table, "}", ""]
    return "\n".join(head + body + tail)


def main(argv: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _checked_in import write_or_check

    write_or_check(TARGET, generate(), 'codec_hooks.py', argv)


if __name__ == "__main__":
    main(sys.argv[1:])
