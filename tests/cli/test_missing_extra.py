"""A provider SDK that is not installed (an optional extra): the model raises `MissingExtra` (a
DurableError and an ImportError) that says what to install, and `durable demo --model ...` prints
it as one line with exit status 2, before the session file is touched. The SDK is made
unimportable in the child with `sys.modules[name] = None`, as if it were not installed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from durable.errors import DurableError, MissingExtra

from .conftest import one_line_error

CHILD = """
import sys
for blocked in sys.argv[1].split(","):
    sys.modules[blocked] = None  # `import blocked` now raises ModuleNotFoundError, as if not installed
from durable.cli import main
main(sys.argv[2:])
"""


def durable_without(blocked: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, blocked, *args], capture_output=True, text=True, timeout=60, check=False,
                          env=env)


@pytest.mark.parametrize(("provider", "model"), [("openai", "OpenAIModel"), ("anthropic", "AnthropicModel")])
def test_the_demo_without_the_sdk_says_what_to_install_in_one_line(tmp_path, provider, model):
    db = tmp_path / "demo.sqlite"
    line = one_line_error(durable_without(provider, "demo", "--model", provider, "--db", str(db)))
    assert line == (f"durable: error: {model} needs the {provider} package, which is not installed: "
                    f'pip install "durable-harness[{provider}]"')
    assert not db.exists()


def test_the_demo_without_the_gemini_sdk_names_its_extra(tmp_path):
    db = tmp_path / "demo.sqlite"
    line = one_line_error(durable_without("google.genai", "demo", "--model", "google", "--db", str(db)))
    assert line == ("durable: error: GeminiModel needs the google.genai package, which is not installed: "
                    'pip install "durable-harness[google]"')
    assert not db.exists()


def test_the_sdk_is_missing_before_a_key_is_asked_for(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    line = one_line_error(durable_without("openai", "demo", "--model", "openai", "--db", str(tmp_path / "d.sqlite"),
                                          env=env))
    assert line.endswith('pip install "durable-harness[openai]"')


def test_a_package_the_sdk_needs_is_named(tmp_path):
    line = one_line_error(durable_without("jiter", "demo", "--model", "anthropic", "--db", str(tmp_path / "d.sqlite")))
    assert line == ("durable: error: AnthropicModel needs the anthropic package, which cannot be imported (import of "
                            'jiter halted; None in sys.modules): pip install "durable-harness[anthropic]"')


def test_constructing_the_model_raises_missing_extra(monkeypatch):
    from durable.models.openai import OpenAIModel

    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingExtra) as info:
        OpenAIModel("gpt-4o-mini", api_key="not-needed")
    error = info.value
    assert isinstance(error, DurableError) and isinstance(error, ImportError)
    assert (error.package, error.extra, error.name) == ("openai", "openai", "openai")
    assert str(error) == 'OpenAIModel needs the openai package, which is not installed: pip install "durable-harness[openai]"'
    assert isinstance(error.__cause__, ModuleNotFoundError)
