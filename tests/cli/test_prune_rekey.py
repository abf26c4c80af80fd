"""`durable prune` and `durable rekey` (docs/spec.md §8): exact reports, refused while the owner
runs (changing nothing), and `durable inspect --key-file` on an encrypted file."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import anyio
import pytest

import durable
from durable.models.faux import Hang, reply
from durable.testing.scripts import by_input

from .conftest import inspect_json, one_line_error, run_durable


async def _build(path: Path, key: str | None = None, busy: bool = True) -> None:
    model = by_input({"keep working": [Hang()]}, default=reply("Done."))
    async with durable.open_harness(path, model=model, encryption_key=key) as h:
        for cid in ("a", "b", "c"):
            assert await (await h.conversation(cid).submit(f"hello {cid}")).answer() == "Done."
        if busy:
            await h.conversation("busy").submit("keep working")  # its run is written back pending at close


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.sqlite"
    anyio.run(_build, path, backend="trio")
    return path


def _given_back(line: str) -> str:
    return re.sub(r"; [0-9.]+ (bytes|kB|MB) given back$", "; <size> given back", line)


def test_prune_deletes_the_ended_conversations_and_keeps_the_rest(session: Path) -> None:
    done = run_durable("prune", str(session), "--older-than", "30d")
    assert (done.returncode, done.stdout) == (0, f"Deleted 0 of 3 ended conversations from {session} (0 rows in 0 "
                                                 f"commits); 0 bytes given back\n")
    done = run_durable("prune", str(session), "--older-than", "0s", "--keep-last", "1")
    assert done.returncode == 0, done.stderr
    # Two conversations of 5 rows each (live document, 2 entries, task, input): the tombstones and
    # documents, the rows, the tombstones gone.
    assert _given_back(done.stdout.strip()) == (f"Deleted 2 of 3 ended conversations from {session} (10 rows in 3 "
                                                f"commits); <size> given back")
    data = inspect_json(session)
    assert sorted(c["id"] for c in data["conversations"]) == ["busy", "c"]


def test_prune_is_refused_while_the_owner_runs_and_changes_nothing(tmp_path: Path, lock_holder) -> None:
    session = tmp_path / "idle.sqlite"
    anyio.run(_build, session, None, False, backend="trio")  # the holder reads no task kind
    holder = lock_holder(session)
    before = hashlib.sha256(session.read_bytes()).hexdigest()
    line = one_line_error(run_durable("prune", str(session), "--older-than", "0s"))
    assert line == f"durable: error: Session file {session} is already open in process {holder.pid}"
    assert hashlib.sha256(session.read_bytes()).hexdigest() == before
    holder.release()
    assert run_durable("prune", str(session), "--older-than", "0s").returncode == 0


def test_prune_refuses_a_bad_age_and_a_missing_file(tmp_path: Path) -> None:
    done = run_durable("prune", str(tmp_path / "none.sqlite"), "--older-than", "1x")
    assert done.returncode == 2 and "'1x' is not an age such as 30d, 12h, 90m, 45s or 2w" in done.stderr
    line = one_line_error(run_durable("prune", str(tmp_path / "none.sqlite"), "--older-than", "1d"))
    assert line == f"durable: error: No session file at {tmp_path / 'none.sqlite'}"
    assert not (tmp_path / "none.sqlite").exists()


def test_rekey_and_inspect_with_a_key_file(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    anyio.run(_build, path, "first key", backend="trio")
    old, new, wrong = tmp_path / "old.key", tmp_path / "new.key", tmp_path / "wrong.key"
    old.write_text("first key\n")
    new.write_bytes(b"second key")
    wrong.write_text("not it")
    line = one_line_error(run_durable("inspect", str(path)))
    assert line == (f"durable: error: Session file {path} is encrypted: open it with its key (encryption_key=..., "
                    f"or --key-file); nothing was changed")
    assert one_line_error(run_durable("inspect", str(path), "--key-file", str(wrong))).startswith(
        f"durable: error: Session file {path} is encrypted with another key (key id ")
    assert sorted(c["id"] for c in inspect_json_with(path, old)["conversations"]) == ["a", "b", "busy", "c"]
    done = run_durable("rekey", str(path), "--key-file", str(old), "--new-key-file", str(new))
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(rf"{re.escape(str(path))} is encrypted with the new key \(\d+ rows sealed again\)\n",
                        done.stdout)
    assert one_line_error(run_durable("inspect", str(path), "--key-file", str(old))).startswith(
        f"durable: error: Session file {path} is encrypted with another key")
    data = inspect_json_with(path, new)
    assert [e["text"] for e in next(c for c in data["conversations"] if c["id"] == "a")["entries"]] == [
        "hello a", "Done."]


def inspect_json_with(path: Path, key: Path) -> dict:
    import json

    done = run_durable("inspect", str(path), "--json", "--last", "1000", "--key-file", str(key))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


_ = inspect_json


def test_prune_sweeps_the_images_of_the_deleted_conversations(tmp_path: Path) -> None:
    path = tmp_path / "images.sqlite"
    shared, own = b"\x89PNG\r\n\x1a\n kept by b", b"\x89PNG\r\n\x1a\n only in a"

    async def build() -> None:
        async with durable.open_harness(path, model=by_input({}, default=reply("Done.")),
                                        clock=durable.FakeClock(100.0)) as h:
            await (await h.conversation("a").submit(["look", durable.Image(shared), durable.Image(own)])).answer()
            h.clock.advance(100.0)  # type: ignore[attr-defined]
            await (await h.conversation("b").submit(["look", durable.Image(shared)])).answer()

    anyio.run(build, backend="trio")
    done = run_durable("prune", str(path), "--older-than", "0s", "--keep-last", "1")
    assert done.returncode == 0, done.stderr
    # a's 5 rows (tombstone and document, rows, tombstone gone), then its own image: the shared one stays.
    assert _given_back(done.stdout.strip()) == (f"Deleted 1 of 2 ended conversations from {path} (6 rows in 4 "
                                                f"commits, 1 attachment among them); <size> given back")
    data = inspect_json(path)
    assert [c["id"] for c in data["conversations"]] == ["b"]
    assert (data["file"]["counts"]["attachments"], data["file"]["counts"]["attachment_bytes"]) == (1, len(shared))
