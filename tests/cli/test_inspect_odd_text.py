"""`durable inspect` on text the harness stored fine but no output encoding can print as it is: a
lone surrogate (issue 13, item 9). The text view shows it escaped (`\\ud800`), the JSON view as the
JSON escape that decodes to the very same string; both exit 0, in a UTF-8 and in an ASCII locale.
An error naming a file whose name is not valid UTF-8 is one escaped line, not an internal error."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest

import durable
from durable import records as r
from durable.models.faux import FauxModel, reply

from .conftest import durable_command, one_line_error, run_durable

QUESTION = "a lone \ud800 surrogate, and é"
ANSWER = "back \udcff again"


@pytest.fixture(scope="module")
def odd_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("odd") / "odd.sqlite"

    async def write() -> None:
        async with durable.open_harness(path, model=FauxModel([reply(ANSWER)])) as h:
            assert await (await h.root.submit(QUESTION)).wait() == r.Answered(ANSWER, 2)

    anyio.run(write, backend="trio")
    return path


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_plain_inspect_prints_a_lone_surrogate_escaped(odd_session, encoding):
    done = run_durable("inspect", str(odd_session), env={"PYTHONIOENCODING": encoding, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "a lone \\ud800 surrogate" in done.stdout
    assert "back \\udcff again" in done.stdout


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_json_inspect_round_trips_a_lone_surrogate(odd_session, encoding):
    done = run_durable("inspect", str(odd_session), "--json", env={"PYTHONIOENCODING": encoding})
    assert done.returncode == 0, done.stderr
    assert '"a lone \\ud800 surrogate, and ' in done.stdout
    data = json.loads(done.stdout)
    [conv] = data["conversations"]
    assert [e["text"] for e in conv["entries"]] == [QUESTION, ANSWER]
    assert [s["text"] for s in data["submissions"]] == [QUESTION]


def test_an_error_naming_an_undecodable_file_name_is_one_escaped_line(tmp_path):
    name = os.fsencode(str(tmp_path)) + b"/bad-\xff.sqlite"  # \xff is not UTF-8: a surrogate in Python
    done = subprocess.run([*durable_command(), "inspect", name], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    line = one_line_error(done)
    assert "bad-\\udcff.sqlite" in line and "internal error" not in line
