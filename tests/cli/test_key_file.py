"""`durable export` and `durable watch` on an encrypted session file (docs/spec.md §8): they read
it with `--key-file`; without it, or with another key, one line (`WrongKey`) naming the session
file and, when one was given, the key file."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

import durable
from durable.models import FauxModel, faux

from .conftest import one_line_error, run_durable


@pytest.fixture(scope="module")
def encrypted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A closed session encrypted with the key in `right.key`: "hi" answered. (file, right, wrong)."""
    folder = tmp_path_factory.mktemp("encrypted")
    path, right, wrong = folder / "s.sqlite", folder / "right.key", folder / "wrong.key"
    right.write_text("the right key\n")
    wrong.write_text("another key\n")

    async def build() -> None:
        async with durable.open_harness(str(path), model=FauxModel([faux.reply("Hello there.")]),
                                        clock=durable.FakeClock(), encryption_key=b"the right key") as h:
            assert await (await h.root.submit("hi")).answer() == "Hello there."

    anyio.run(build, backend="trio")
    return path, right, wrong


def test_export_with_the_key_file_reads_the_conversations(encrypted) -> None:
    path, right, _ = encrypted
    done = run_durable("export", str(path), "--key-file", str(right))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(e["seq"], e["type"], e.get("text")) for e in data["conversations"][0]["entries"]] == [
        (1, "user", "hi"), (2, "assistant", "Hello there.")]
    markdown = run_durable("export", str(path), "--format", "markdown", "--key-file", str(right))
    assert markdown.returncode == 0 and "Hello there." in markdown.stdout


def test_watch_with_the_key_file_prints_the_entries(encrypted) -> None:
    path, right, _ = encrypted
    done = run_durable("watch", str(path), "--once", "--key-file", str(right))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"watching {path} (not open); Ctrl-C to stop",
        "root #1 user: hi",
        "root #2 assistant:stop (by faux): Hello there.",
    ]


@pytest.mark.parametrize("command", [["export"], ["watch", "--once"]])
def test_a_wrong_or_missing_key_is_one_line_naming_the_files(encrypted, command: list[str]) -> None:
    path, _, wrong = encrypted
    line = one_line_error(run_durable(command[0], str(path), *command[1:], "--key-file", str(wrong)))
    assert line.startswith(f"durable: error: Session file {path} is encrypted with another key (key id ")
    assert line.endswith(f"); nothing was changed (the key given: --key-file {wrong})")
    line = one_line_error(run_durable(command[0], str(path), *command[1:]))
    assert line == (f"durable: error: Session file {path} is encrypted: open it with its key (encryption_key=..., "
                    f"or --key-file); nothing was changed")
