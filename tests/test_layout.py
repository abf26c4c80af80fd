"""The layers of `durable` import one way: a package never imports one above it, not even under
`TYPE_CHECKING` or inside a function. Each row of `FORBIDDEN` is one package and the packages
none of its modules may import; a failure names the module, the line and what it imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "durable.tools": ("durable.engine", "durable.tasks", "durable.storage", "durable.cli", "durable.testing"),
}


def imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """Every import in the file at `path` (under `root`), wherever it stands, as (line, absolute
    dotted name). `from a import b` gives `a.b` (b may be a module); a relative import is resolved."""
    parts = path.relative_to(root).with_suffix("").parts
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def violations(package: str, forbidden: tuple[str, ...], root: Path = ROOT) -> list[str]:
    """One line per import of a forbidden package by a module of `package`."""
    out = []
    for path in sorted(root.joinpath(*package.split(".")).rglob("*.py")):
        for line, name in imports(path, root):
            for banned in forbidden:
                if name == banned or name.startswith(banned + "."):
                    out.append(f"{path.relative_to(root)}:{line} imports {name} ({package} is below {banned})")
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_nothing_from_the_layers_above_it(package):
    assert ROOT.joinpath(*package.split(".")).is_dir(), f"{package} is in FORBIDDEN but does not exist"
    assert violations(package, FORBIDDEN[package]) == []


def test_an_import_under_type_checking_or_in_a_function_is_found_and_named(tmp_path):
    folder = tmp_path / "durable" / "tools"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "bad.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from ..records import Task\n"
        "if TYPE_CHECKING:\n"
        "    from ..engine.harness import Harness\n"
        "def f():\n"
        "    from durable import tasks\n"
        "    from . import bad\n"
    )
    assert violations("durable.tools", ("durable.engine", "durable.tasks"), tmp_path) == [
        "durable/tools/bad.py:4 imports durable.engine.harness.Harness (durable.tools is below durable.engine)",
        "durable/tools/bad.py:6 imports durable.tasks (durable.tools is below durable.tasks)",
    ]
