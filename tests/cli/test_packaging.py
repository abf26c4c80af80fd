"""The distribution as a package index would get it: `python -m build` (without isolation, with
the venv's setuptools and build from the test extras, so it runs offline) makes the sdist and
then the wheel from that sdist, from a copy of this checkout. The wheel carries the `py.typed`
marker and the license and no tests; the sdist carries the examples, the tests and the license;
the metadata has the SPDX license, the classifiers and the version written in durable/__init__.py,
and the build prints no deprecation warning."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import durable

from .conftest import REPO

LEFT_OUT = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
                                  ".hypothesis", "*.sqlite*", "durable-demo-scratch")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, str]:
    """(wheel, sdist, build output) built once for this module."""
    root = tmp_path_factory.mktemp("packaging")
    source = root / "src"
    shutil.copytree(REPO, source, ignore=LEFT_OUT)
    out = root / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist, done.stdout + done.stderr


def test_the_version_comes_from_durable_init(built):
    wheel, sdist, _ = built
    assert wheel.name == f"durable_harness-{durable.__version__}-py3-none-any.whl"
    assert sdist.name == f"durable_harness-{durable.__version__}.tar.gz"


def test_the_wheel_has_the_typing_marker_and_the_license_and_no_tests(built):
    wheel, _, _ = built
    dist_info = f"durable_harness-{durable.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(f"{dist_info}/METADATA").decode()
        license_text = zf.read(f"{dist_info}/licenses/LICENSE").decode()
    assert {"durable/py.typed", "durable/__init__.py", "durable/tools/define.py", "durable/cli/__init__.py"} <= names
    assert {"durable/console/static/index.html", "durable/console/static/console.js",
            "durable/console/static/console.css"} <= names  # the console's page, no build step
    assert not [n for n in names if n.split("/")[0] in ("tests", "examples", "benchmarks")]
    assert "Copyright (c) 2026 durable contributors" in license_text
    headers = [line for line in metadata.split("\n\n", 1)[0].splitlines()]
    assert "License-Expression: MIT" in headers
    assert "License-File: LICENSE" in headers
    assert f"Version: {durable.__version__}" in headers
    classifiers = {h.removeprefix("Classifier: ") for h in headers if h.startswith("Classifier: ")}
    assert {"Framework :: AnyIO", "Framework :: Trio", "Framework :: AsyncIO", "Typing :: Typed",
            "Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3.12",
            "Programming Language :: Python :: 3.13"} <= classifiers
    assert "Requires-Dist: jsonschema>=4.20" in headers
    assert 'Requires-Dist: openai>=1.40; extra == "openai"' in headers
    assert 'Requires-Dist: starlette>=0.37; extra == "console"' in headers


def test_the_sdist_has_the_examples_the_tests_and_the_license(built):
    _, sdist, _ = built
    top = f"durable_harness-{durable.__version__}"
    with tarfile.open(sdist) as tf:
        names = {n.removeprefix(f"{top}/") for n in tf.getnames()}
    examples = {p.name for p in (REPO / "examples").glob("*.py")}
    assert examples and {f"examples/{e}" for e in examples} <= names
    assert {"LICENSE", "README.md", "Makefile", "pyproject.toml", "durable/py.typed", "tests/conftest.py",
            "tests/cli/test_packaging.py", "tests/engine/test_tool_schemas.py", "docs/spec.md", "docs/index.md",
            "mkdocs.yml"} <= names
    assert not [n for n in names if "__pycache__" in n or ".sqlite" in n]


def test_the_build_warns_of_nothing_deprecated(built):
    _, _, output = built
    assert "Deprecat" not in output and "deprecat" not in output, output
