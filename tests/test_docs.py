"""The documentation: `make docs`'s build (pdoc API reference and the pages, warnings as errors)
runs clean, the spec ships as docs/spec.md with every citation resolving, and every public name
of `durable` has a docstring of its own."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import durable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import build as docs_build  # noqa: E402 - docs/build.py, the script `make docs` runs

# Public names whose docstrings live in files outside this change (durable/errors.py,
# durable/engine/harness.py); the docstrings to add are in the branch's report. Empty it then.
PENDING_ELSEWHERE: set[str] = set()  # every public name has a docstring


def test_the_docs_build_runs_clean_with_warnings_as_errors(tmp_path):
    pytest.importorskip("pdoc", reason="needs the docs extra (pdoc)")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "build.py"), str(site)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    for page in ("index.html", "spec.html", "api/durable.html", "api/durable/records.html",
                 "api/durable/engine/reports.html", "api/durable/testing.html"):
        assert (site / page).is_file(), page
    spec = (site / "spec.html").read_text(encoding="utf-8")
    assert '<h2 id="6-invariants-a-crash-test-checks-after-every-reopen">' in spec
    assert 'href="spec.html#3-the-generation-task"' in (site / "index.html").read_text(encoding="utf-8")


def test_the_build_names_each_dangling_reference(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text("See SPEC §4 and [the spec](docs/spec.md#9-nothing) and [x](docs/missing.md).\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "spec.md").write_text("# Spec\n\n## 1. Concepts\n")
    (tmp_path / "docs" / "index.md").write_text("[ok](spec.md#1-concepts) [bad](spec.md#2-nope)\n")
    (tmp_path / "durable").mkdir()
    (tmp_path / "durable" / "m.py").write_text('"""Cites docs/spec.md §1 and docs/spec.md §1, §7."""\n')
    monkeypatch.setattr(docs_build, "ROOT", tmp_path)
    monkeypatch.setattr(docs_build, "DOCS", tmp_path / "docs")
    problems = docs_build.check_sources()
    problems += docs_build.check_links(readme, readme.read_text(), None)
    index = tmp_path / "docs" / "index.md"
    problems += docs_build.check_links(index, index.read_text(), tmp_path / "site")
    assert problems == [
        "README.md:1: cites 'SPEC §'; cite docs/spec.md §N (the spec ships as docs/spec.md)",
        "durable/m.py:1: cites docs/spec.md §7, which does not exist",
        "README.md: links to docs/spec.md#9-nothing, a section that does not exist",
        "README.md: links to docs/missing.md, which does not exist",
        "docs/index.md: links to spec.md#2-nope, a section that does not exist",
    ]


def test_the_spec_ships_as_docs_spec_md_and_headings_give_github_anchors():
    spec = (ROOT / "docs" / "spec.md").read_text(encoding="utf-8")
    assert docs_build.sections(spec) == {
        "1": "Concepts", "2": "Commit rules", "3": "The generation task", "4": "Close, crash and reopen",
        "5": "Faults other than crashes", "6": "Invariants a crash test checks after every reopen",
        "7": "Beyond one machine",
        "8": "What agents are built with (each as crash-safe as the rest)",
    }
    assert docs_build.slug("4. Close, crash and reopen") == "4-close-crash-and-reopen"
    assert docs_build.check_sources() == []


def public_names() -> list[str]:
    names = getattr(durable, "__all__", None) or [n for n in dir(durable) if not n.startswith("_")]
    return [n for n in names if n != "TYPE_CHECKING" and not inspect.ismodule(getattr(durable, n))]


def own_docstring(name: str) -> str | None:
    """The docstring written for the name itself: a class's or function's own `__doc__` (not one
    inherited from a base class), or the string literal after a type alias's assignment."""
    value = getattr(durable, name)
    if inspect.isclass(value) or inspect.isfunction(value):
        return value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__
    for module in ("durable.records.tasks", "durable.records.entries", "durable.records.reasons",
                   "durable.records.submissions", "durable.settings",
                   "durable.engine.reports", "durable.tools.protocol", "durable.engine.harness",
                   "durable.models.protocol", "durable.errors", "durable.storage.sqlite.store",
                   "durable.engine.stream_events"):
        tree = ast.parse(inspect.getsource(importlib.import_module(module)))
        for node, after in zip(tree.body, tree.body[1:]):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AnnAssign) else [])
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                    return str(after.value.value)
                return None
    return None


def test_every_public_name_has_a_docstring_of_its_own():
    missing = sorted(n for n in public_names() if not (own_docstring(n) or "").strip())
    assert set(missing) <= PENDING_ELSEWHERE, missing
