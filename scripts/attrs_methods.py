"""Writes durable/_attrs_methods.py: the methods attrs writes for durable's classes, checked in.

Run: `python scripts/attrs_methods.py` (after changing an attrs class of durable or attrs itself;
tests/test_attrs_methods.py fails while the file differs from what this writes; `--check` only
says whether it does).

attrs defines a class's `__init__` (and any other method it writes) by generating its source and
compiling it: most of the cost of defining a record class, ~115 classes in a process that
recovers a turn. This script records each source attrs compiles while durable's modules (those
such a process imports) are imported, and writes it unchanged inside a function. When attrs
compiles a source that is in the file, `durable._frozen` makes the same functions from the
checked-in code with attrs' globals instead (any other source: attrs compiles it, as always).
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "durable" / "_attrs_methods.py"
MODULES = ("durable", "durable.tasks", "durable.engine.harness", "durable._open", "durable.storage.sqlite",
           "durable.models", "durable.models.faux", "durable.engine.streaming")
"""What a process that opens a session and runs or recovers a turn imports, and a stream of its events."""
_FILENAME = re.compile(r"<attrs generated methods (durable\..+?)(?:-\d+)?>$")


def _capture() -> dict[str, str]:
    """Source -> the class it was first written for, of every source attrs compiles for durable."""
    sys.path.insert(0, str(ROOT))
    stub = types.ModuleType("durable._attrs_methods")
    stub.METHODS = {}  # type: ignore[attr-defined]  # attrs compiles everything while this runs
    sys.modules["durable._attrs_methods"] = stub
    import attr._make

    original = attr._make._linecache_and_compile
    seen: dict[str, str] = {}

    def capturing(script: str, filename: str, globs: Any, locals: Any = None) -> Any:
        found = _FILENAME.match(filename)
        if found is not None and locals is None:
            seen.setdefault(script, found.group(1))
        return original(script, filename, globs, locals)

    attr._make._linecache_and_compile = capturing
    for name in MODULES:
        importlib.import_module(name)
    return seen


def generate() -> str:
    """The text of durable/_attrs_methods.py."""
    import attrs

    seen = _capture()
    body: list[str] = []
    table: list[str] = []
    for n, (script, owner) in enumerate(sorted(seen.items(), key=lambda x: (x[1], x[0]))):
        tree = ast.parse(script)
        if not all(isinstance(node, ast.FunctionDef) for node in tree.body) or "def __hash__" in script:
            continue  # (attrs' `__hash__` holds a hash of the class's name: not the same in two processes)
        names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
        factory = f"_{n}_{owner.replace('.', '_')}"
        body.append(f"def {factory}():")
        body.extend("    " + line if line else "" for line in script.split("\n"))
        body.append("    return {" + ", ".join(f"{k!r}: {k}" for k in names) + "}")
        body.append("")
        body.append("")
        table.append(f"    {script!r}:\n        {factory},")
    head = [
        f'"""attrs {attrs.__version__}\'s methods of durable\'s classes, written by `python scripts/attrs_methods.py`: '
        "do not edit.",
        "",
        "Each function holds the source attrs generates for a class (its `__init__`...) and returns the",
        "functions it defines; `METHODS` maps the source to it. See `durable._frozen`.",
        '"""',
        "",
        "# ruff: noqa",
        "# mypy: ignore-errors",
        "# fmt: off",
        "",
        "",
    ]
    tail = ["METHODS = {", *table, "}", ""]
    return "\n".join(head + body + tail)


def main(argv: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _checked_in import write_or_check

    write_or_check(TARGET, generate(), 'attrs_methods.py', argv)


if __name__ == "__main__":
    main(sys.argv[1:])
