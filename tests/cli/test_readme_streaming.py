"""The README's "Streaming an answer" program runs as it is and prints exactly this, on every run."""

from __future__ import annotations

import subprocess
import sys

from .conftest import inspect_json, transcript
from .test_examples import clean_env, readme_snippets


def test_the_readme_streaming_snippet_prints_the_answer_the_tool_call_and_the_result(tmp_path):
    (snippet,) = readme_snippets("Streaming an answer")
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=clean_env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'Let me shout.\n[shout {"word": "hi"}] -> HI\nDone: HI.\nAnswered\n'
    assert transcript(inspect_json(tmp_path / "stream.sqlite")) == [
        "user", "assistant:tool_use", "tool_result", "assistant:stop"]
