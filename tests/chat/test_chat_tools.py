"""The tools of `durable chat` on their own: confinement to the folder (../, absolute paths,
symlinks out, in and through folders), edit_file's exact match, and bash (a timeout kills its
whole process group; its output and exit status). Run through a harness where it matters."""

from __future__ import annotations

import os
import signal

import pytest

import durable
from durable.chat.faux import ChatFaux
from durable.chat.instructions import git_summary
from durable.chat.models import split_url
from durable.chat.shell import make_bash
from durable.chat.tools import ToolRefused, confined, make_file_tools
from durable.models import FauxModel, faux

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "trio"


@pytest.fixture
def folder(tmp_path):
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "a.txt").write_text("one\ntwo two\n")
    (work / "sub" / "b.txt").write_text("two\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    os.symlink(tmp_path / "outside.txt", work / "out-link")
    os.symlink(tmp_path, work / "out-dir")
    os.symlink(work / "a.txt", work / "in-link")
    return work


def test_confined_refuses_every_way_out(folder):
    real = os.path.realpath(folder)
    assert confined(str(folder), "a.txt") == os.path.join(real, "a.txt")
    assert confined(str(folder), "sub/../a.txt") == os.path.join(real, "a.txt")
    assert confined(str(folder), "in-link") == os.path.join(real, "a.txt")  # a symlink that stays inside
    assert confined(str(folder), ".") == real
    assert confined(str(folder), "new/file.txt") == os.path.join(real, "new", "file.txt")
    for path in ("../outside.txt", "/etc/passwd", "out-link", "out-dir/outside.txt", "sub/../../outside.txt", ""):
        with pytest.raises(ToolRefused) as caught:
            confined(str(folder), path)
        assert str(caught.value) in (f"Path {path} is outside the working folder {folder}; only files inside it "
                                     f"can be used", "Invalid path ''")


def tool(folder, name):
    return {t.name: t for t in make_file_tools(str(folder), approve=False)}[name]


async def call(folder, name, **args):
    return await tool(folder, name).execute(args, None, None)


async def test_edit_file_replaces_exactly_one_occurrence(folder):
    assert await call(folder, "edit_file", path="a.txt", old="one", new="ONE") == "Edited a.txt: replaced 1 occurrence"
    assert (folder / "a.txt").read_text() == "ONE\ntwo two\n"
    with pytest.raises(ToolRefused, match=r"^The text to replace occurs 2 times in a.txt; give a longer text"):
        await call(folder, "edit_file", path="a.txt", old="two", new="2")
    with pytest.raises(ToolRefused, match=r"^The text to replace was not found in a.txt \(it must match exactly"):
        await call(folder, "edit_file", path="a.txt", old="one", new="1")  # case matters
    with pytest.raises(ToolRefused, match=r"^No file sub$"):
        await call(folder, "edit_file", path="sub", old="x", new="y")
    with pytest.raises(ToolRefused, match=r"^Path out-link is outside the working folder"):
        await call(folder, "edit_file", path="out-link", old="secret", new="gone")
    assert (folder.parent / "outside.txt").read_text() == "secret\n"
    assert (folder / "a.txt").read_text() == "ONE\ntwo two\n"


async def test_reading_listing_and_searching_stay_inside(folder):
    assert await call(folder, "read_file", path="sub/b.txt") == "two\n"
    assert await call(folder, "list_files") == "a.txt\nin-link\nout-dir\nout-link\nsub/"
    # grep follows no symlink out of the folder (out-link, out-dir); in-link's target is searched once
    assert await call(folder, "grep", pattern="^two") == "a.txt:2: two two\nsub/b.txt:1: two"
    assert await call(folder, "grep", pattern="secret") == "(no match)"
    assert await call(folder, "write_file", path="new/c.txt", content="x") == "Wrote 1 characters to new/c.txt"
    with pytest.raises(ToolRefused, match=r"^Invalid regular expression '\('"):
        await call(folder, "grep", pattern="(")


async def test_a_bash_timeout_kills_its_whole_process_group(tmp_path):
    """The command leaves a background child; at the durable timeout the call ends as timed out
    (unsafe: "may have partially run"), with its output so far, and the child is dead too."""
    command = "sleep 60 & echo $! > bg.pid; echo waiting; wait"
    model = FauxModel([faux.reply(tool_calls=[faux.call("bash", {"command": command}, id="c1")]), faux.reply("ok")])
    async with durable.open_harness(tmp_path / "s.sqlite", model=model,
                                    tools=[make_bash(str(tmp_path), approve=False, timeout=1.0)]) as h:
        await (await h.root.submit("go")).answer()
        result = (await h.root.entries())[2].entry
    assert (result.tool_name, result.is_error) == ("bash", True)
    assert result.content == "Tool bash timed out after 1 s and may have partially run\nPartial output:\nwaiting\n"
    child = int((tmp_path / "bg.pid").read_text())
    assert _dead(child)


def _dead(pid: int) -> bool:
    """Whether `pid` is gone or a zombie (killed, not yet reaped by init); waits for the kill to land."""
    for _ in range(500):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        os.sched_yield()
        signal.sigtimedwait([], 0.01)  # a short wait for the SIGKILL to be delivered
    return False


async def test_bash_returns_output_and_exit_status(tmp_path):
    model = FauxModel([faux.reply(tool_calls=[faux.call("bash", {"command": "echo hi; echo err >&2; exit 3"})]),
                       faux.reply("ok")])
    async with durable.open_harness(tmp_path / "s.sqlite", model=model,
                                    tools=[make_bash(str(tmp_path), approve=False)]) as h:
        await (await h.root.submit("go")).answer()
        result = (await h.root.entries())[2].entry
    assert (result.content, result.is_error) == ("hi\nerr\n[exit status 3]", False)


async def test_the_first_look_lists_reads_and_answers(folder, tmp_path):
    tools = make_file_tools(str(folder), approve=False)
    async with durable.open_harness(tmp_path / "s.sqlite", model=ChatFaux(tokens_per_second=None), tools=tools) as h:
        answer = await (await h.root.submit("hello")).answer()
        calls = [e.entry.tool_name for e in await h.root.entries() if isinstance(e.entry, durable.ToolResultEntry)]
    assert calls == ["list_files", "read_file"]
    assert answer == ("This folder has 5 entries. I read one of them; it starts with: 'one'. (This is the faux "
                      "model's first look; give --model for a real one.)")


def test_model_specs_and_git_summary(tmp_path):
    assert split_url("http://localhost:11434/v1/qwen3") == ("http://localhost:11434/v1", "qwen3")
    assert split_url("http://127.0.0.1:1234/v1/qwen/qwen3-8b") == ("http://127.0.0.1:1234/v1", "qwen/qwen3-8b")
    assert split_url("http://host:8000/llama") == ("http://host:8000", "llama")
    assert git_summary(str(tmp_path)) == "It is not a git repository."


async def test_the_session_file_is_not_for_tools(folder):
    tools = {t.name: t for t in make_file_tools(str(folder), approve=False, session=str(folder / "chat.sqlite"))}
    (folder / "chat.sqlite").write_text("db")
    (folder / "chat.sqlite-wal").write_text("wal")
    for name, args in (("read_file", {"path": "chat.sqlite"}), ("write_file", {"path": "chat.sqlite-wal",
                                                                                 "content": ""})):
        with pytest.raises(ToolRefused, match=r"^Path chat.sqlite(-wal)? is the chat's own session file; it is not "):
            await tools[name].execute(args, None, None)
    assert await tools["grep"].execute({"pattern": "db|wal"}, None, None) == "(no match)"
