"""The layers of `durable` import one way: a package never imports one above it, not even under
`TYPE_CHECKING` or inside a function. Each row of `FORBIDDEN` is one package and the packages
none of its modules may import; a failure names the module, the line and what it imports. The
module graph has no circle, and task code reaches the harness through the runtime alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# From the ground floor up: records and codec, then storage, models and tools, then the engine,
# the task kinds, the host-facing modules, and the command line and the crash toolkit on top.
_TOP = ("durable.cli", "durable.chat", "durable.console", "durable.testing")
_HOST = ("durable._open", "durable.sync", "durable.worker", "durable.remote", "durable.mcp", *_TOP)
_ABOVE_ENGINE = ("durable.tasks", *_HOST)
_ABOVE_STORE = ("durable.engine", *_ABOVE_ENGINE)
_GROUND = ("durable.records", "durable.codec", "durable._codec_hooks", "durable._written_hooks", "durable._attrs_methods", "durable._json_text",
           "durable._frozen", "durable._loop", "durable.errors", "durable.texts", "durable.tokens", "durable.settings",
           "durable.inputs", "durable._version", "durable.prices")
FORBIDDEN: dict[str, tuple[str, ...]] = {
    **{module: ("durable.storage", "durable.models", "durable.tools", *_ABOVE_STORE) for module in _GROUND},
    "durable.storage": ("durable.models", "durable.tools", *_ABOVE_STORE),
    "durable.models": ("durable.storage", "durable.tools", *_ABOVE_STORE),
    "durable.tools": ("durable.storage", *_ABOVE_STORE),
    "durable.engine": _ABOVE_ENGINE,
    # The kinds see the runtime and the kind contract, never the session, the store or the harness.
    "durable.tasks": ("durable.storage", "durable.engine.session", "durable.engine.scheduler",
                      "durable.engine.harness", "durable.engine.conversation", "durable.engine.recovery",
                      "durable.engine.ownership", "durable.engine.inbox", "durable.engine.progress",
                      "durable.engine.clock", *_HOST),
    "durable.mcp": _TOP,
    "durable.cli": ("durable.testing",),
    "durable.chat": ("durable.cli", "durable.console", "durable.testing"),
    "durable.console": ("durable.testing",),
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
    for path in sources(package, root):
        for line, name in imports(path, root):
            for banned in forbidden:
                if name == banned or name.startswith(banned + "."):
                    out.append(f"{path.relative_to(root)}:{line} imports {name} ({package} is below {banned})")
    return out


def sources(package: str, root: Path = ROOT) -> list[Path]:
    """The files of a package (a folder) or of a module (one file)."""
    folder = root.joinpath(*package.split("."))
    if folder.is_dir():
        return sorted(folder.rglob("*.py"))
    file = folder.with_suffix(".py")
    assert file.is_file(), f"{package} is in FORBIDDEN but does not exist"
    return [file]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_nothing_from_the_layers_above_it(package):
    assert violations(package, FORBIDDEN[package]) == []


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the modules it imports (wherever the import stands), within `durable`. `from a
    import b` is an edge to `a.b` when that is a module, else to `a`."""
    files = {".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
             for p in root.joinpath("durable").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        edges = set()
        for _, name in imports(path, root):
            target = name if name in files else name.rpartition(".")[0]
            if target in files and target != module:
                edges.add(target)
        graph[module] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_of_durable_imports_itself_back_through_others():
    assert circles(module_graph()) == []


def test_task_code_reaches_the_harness_through_the_runtime_alone():
    """No `rt.session`, no `.session.storage`, no private member of the runtime in `durable/tasks`
    (the grep of the issue, as an AST walk: an attribute named `session` or `_session`)."""
    found = []
    for path in sources("durable.tasks"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("session", "_session", "storage", "_runners"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} reaches .{node.attr}")
    assert found == []


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


MAX_LINES = 450
MAX_DOCSTRING_LINES = 20


def test_every_module_is_small_enough_to_read_in_one_sitting_and_says_what_it_owns_briefly():
    """No module of `durable` above 450 lines; every module docstring at most 20 (what the module
    owns and its contract: measurements and history belong to commits and benchmarks/). A module
    a script writes (its first line ends "do not edit.") is read through that script instead."""
    long, wordy = [], []
    for path in sorted(ROOT.joinpath("durable").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.split("\n", 1)[0].endswith("do not edit."):
            continue
        lines = text.count("\n")
        doc = ast.get_docstring(ast.parse(text), clean=False) or ""
        if lines > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
        if len(doc.splitlines()) > MAX_DOCSTRING_LINES:
            wordy.append(f"{path.relative_to(ROOT)}: a docstring of {len(doc.splitlines())} lines")
    assert long + wordy == []
