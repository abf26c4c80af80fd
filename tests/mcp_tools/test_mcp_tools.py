"""MCP servers as tool sources (durable.mcp), against real servers built with the official SDK,
over stdio and over streamable HTTP on 127.0.0.1: names, schemas and replay policies; results and
each kind of error; progress as output; cancellation on abort; a tool list that changes; a server
killed in the middle of a call."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest

import durable
from durable import mcp, records as r
from durable.models import FauxModel, faux

from .conftest import SERVER, Side, settings

pytestmark = pytest.mark.anyio


async def run_calls(path, servers, *calls, st=None):
    """One round of `calls`, then "done"; returns the tool results in call order."""
    model = FauxModel([faux.reply("", tool_calls=list(calls)), faux.reply("done")])
    async with durable.open_harness(path, model=model, tools=servers.tools, settings=st or settings()) as h:
        answered = await (await h.root.submit("go")).wait()
        assert isinstance(answered, r.Answered) and answered.text == "done"
        return [e.entry for e in await h.root.entries() if isinstance(e.entry, r.ToolResultEntry)]


def result(call_id, name, content, is_error=False):
    diagnostics = (r.Diagnostic("error", "tool_error", content),) if is_error else ()
    return r.ToolResultEntry(call_id, name, content, is_error, diagnostics)


async def until_slot(h, predicate):
    async for live in h.root.follow():
        if any(predicate(s) for s in live.tools):
            return live
    raise AssertionError("the harness closed first")


def test_importing_durable_does_not_import_mcp():
    code = ("import sys, durable, durable.mcp; from durable import mcp; mcp.stdio('x'); "
            "assert 'mcp' not in sys.modules, sorted(m for m in sys.modules if m.startswith('mcp'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_connect_without_the_sdk_says_what_to_install():
    code = """
import sys
sys.modules["mcp"] = None  # as if not installed
import anyio
from durable import mcp
async def main():
    async with mcp.connect(mcp.stdio("server")):
        pass
try:
    anyio.run(main)
except Exception as exc:
    print(type(exc).__name__, exc)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout == ('MissingExtra durable.mcp needs the mcp package, which is not installed: '
                           'pip install "durable-harness[mcp]"\n'), done.stderr


async def test_the_tools_keep_their_names_and_schemas_and_take_their_policy_from_the_annotations(server_spec):
    async with mcp.connect(server_spec) as servers:
        by_name = {t.name: t for t in servers.tools}
        assert list(by_name) == ["lookup", "append", "slow_safe", "slow_unsafe", "steps", "nap", "die", "fail",
                                 "refuse", "grow"]
        assert {n: t.replay for n, t in by_name.items()} == {
            "lookup": "safe", "append": "unsafe", "slow_safe": "safe", "slow_unsafe": "unsafe", "steps": "safe",
            "nap": "safe", "die": "unsafe", "fail": "unsafe", "refuse": "unsafe", "grow": "unsafe"}
        assert by_name["lookup"].description == "Look a word up."
        assert by_name["lookup"].parameters["properties"] == {"word": {"title": "Word", "type": "string"}}
        assert by_name["lookup"].parameters["required"] == ["word"]
        assert servers.routes["append"] == ("tests", "append")
        assert servers.skipped == ()


async def test_the_host_overrides_the_policy_per_tool_or_for_a_whole_server(side, tmp_path):
    one = mcp.stdio(sys.executable, [SERVER, str(side.path)], name="one", replay={"lookup": "unsafe", "append": "safe"})
    every = mcp.stdio(sys.executable, [SERVER, str(side.path)], name="every", replay="safe")
    async with mcp.connect(one) as servers:
        policies = {t.name: t.replay for t in servers.tools}
        assert (policies["lookup"], policies["append"], policies["nap"]) == ("unsafe", "safe", "safe")
    async with mcp.connect(every) as servers:
        assert {t.replay for t in servers.tools} == {"safe"}
    with pytest.raises(ValueError, match="replay must be 'safe' or 'unsafe', not 'maybe'"):
        mcp.stdio("x", replay={"lookup": "maybe"})  # type: ignore[dict-item]


async def test_a_safe_and_an_unsafe_tool_answer_the_model(server_spec, side, tmp_path):
    async with mcp.connect(server_spec) as servers:
        results = await run_calls(tmp_path / "s.sqlite", servers, faux.call("lookup", {"word": "durable"}, id="c1"),
                                  faux.call("append", {"line": "hello"}, id="c2"))
    assert results == [result("c1", "lookup", "durable: able to withstand wear"),
                       result("c2", "append", "appended 'hello'")]
    assert sorted(side.lines()) == ["append hello", "lookup durable"]


async def test_a_tool_error_a_protocol_error_and_a_timeout_are_error_results_naming_server_and_tool(
        server_spec, side, tmp_path):
    import attrs

    # The calls that answer get a timeout long enough on a loaded machine (0.5 s was not, over
    # HTTP); the nap, on a connection of its own, one far shorter than it, which the test waits out.
    async with mcp.connect(attrs.evolve(server_spec, timeout=5)) as servers:
        answering = await run_calls(tmp_path / "s.sqlite", servers, faux.call("fail", {}, id="c1"),
                                    faux.call("refuse", {}, id="c2"), faux.call("lookup", {"word": 3}, id="c4"))
    async with mcp.connect(attrs.evolve(server_spec, timeout=1)) as servers:
        napping = await run_calls(tmp_path / "nap.sqlite", servers, faux.call("nap", {"seconds": 30}, id="c3"))
    results = [*answering[:2], *napping, answering[2]]
    assert results[:3] == [
        result("c1", "fail", "Tool fail failed: MCPCallError: MCP server 'tests': tool fail returned an error: "
                             "Error executing tool fail: the disk is full", True),
        result("c2", "refuse", "Tool refuse failed: MCPCallError: MCP server 'tests' refused the call of tool refuse: "
                               "the notes are locked (JSON-RPC error -32602)", True),
        result("c3", "nap", "Tool nap failed: MCPCallError: MCP server 'tests': tool nap did not answer within 1 s; "
                            "the call was cancelled", True),
    ]
    # durable checks the arguments against the server's schema before calling
    assert results[3].is_error and results[3].content.startswith("Tool lookup: invalid arguments: $.word: 3 is not of "
                                                                 "type 'string'")
    side.wait_for("nap ended")  # the server was told to stop the call that timed out
    assert "lookup 3" not in side.lines()


@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_progress_becomes_the_tools_output_and_an_abort_cancels_the_call_on_the_server(
        server_spec, side, tmp_path, anyio_backend):
    model = FauxModel([faux.reply("", tool_calls=[faux.call("steps", {"n": 3}, id="c1")])])
    async with mcp.connect(server_spec) as servers:
        async with durable.open_harness(tmp_path / "s.sqlite", model=model, tools=servers.tools,
                                        settings=settings()) as h:
            sub = await h.root.submit("go")
            expected = "[1/3] step 1\n[2/3] step 2\n[3/3] step 3\n"
            await until_slot(h, lambda s: s.output == expected)
            await h.root.abort()
            assert await sub.wait() == r.Unanswered("aborted", "The run was aborted")
            task = await h.task(2)
            assert task.checkpoint.output == expected
            await anyio.to_thread.run_sync(side.wait_for, "steps cancelled")
    assert side.lines() == ["steps reported", "steps cancelled"]


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_a_tool_list_that_changes_refreshes_the_tools_and_their_routes(server_spec, tmp_path, era, monkeypatch):
    if era == "2025-11-25":  # a handshake-era connection: the change comes as notifications/tools/list_changed
        import functools

        from durable.mcp import _connection

        monkeypatch.setattr(_connection, "Client", functools.partial(_connection.Client, mode="legacy"))
    async with mcp.connect(server_spec) as servers:
        live = servers._connections[0].live
        assert live is not None and live.client is not None and live.client.protocol_version == era
        assert "extra" not in servers.routes
        first = servers.tools
        async with anyio.create_task_group() as tg:
            changed: list = []

            async def wait_for_change():
                changed.append(await servers.tools_changed())

            tg.start_soon(wait_for_change)
            results = await run_calls(tmp_path / "s.sqlite", servers, faux.call("grow", {}, id="c1"))
            assert results == [result("c1", "grow", "grown")]
        assert [t.name for t in changed[0]] == [t.name for t in first] + ["extra"]
        assert servers.routes["extra"] == ("tests", "extra")
        assert next(t for t in servers.tools if t.name == "extra").replay == "safe"
        # a harness opened with the new list calls the new tool
        results = await run_calls(tmp_path / "t.sqlite", servers, faux.call("extra", {}, id="c2"))
        assert results == [result("c2", "extra", "extra!")]
        # a running harness attached to the servers offers the new tool from its next request on
        model = FauxModel([faux.reply("", tool_calls=[faux.call("extra", {}, id="c3")]), faux.reply("done")])
        async with durable.open_harness(tmp_path / "u.sqlite", model=model, tools=first, settings=settings()) as h:
            assert "extra" not in [spec.name for spec in h.tools.specs]
            servers.attach(h)
            assert (await (await h.root.submit("go")).wait()).text == "done"
            assert "extra" in [t.name for t in model.requests[0].tools]
            [stored] = [e.entry for e in await h.root.entries() if isinstance(e.entry, r.ToolResultEntry)]
        assert stored == result("c3", "extra", "extra!")


async def test_a_tool_offered_by_two_servers_is_prefixed_on_both_and_each_name_reaches_its_server(tmp_path):

    a_side, b_side = Side(tmp_path / "a.txt"), Side(tmp_path / "b.txt")
    a = mcp.stdio(sys.executable, [SERVER, str(a_side.path)], name="notes")
    b = mcp.stdio(sys.executable, [SERVER, str(b_side.path)], name="web.search")
    async with mcp.connect(a, b) as servers:
        names = [t.name for t in servers.tools]
        assert names[:2] == ["notes__lookup", "notes__append"]
        assert names[10:12] == ["web_search__lookup", "web_search__append"]
        assert servers.routes["web_search__lookup"] == ("web_search", "lookup")
        results = await run_calls(tmp_path / "s.sqlite", servers,
                                  faux.call("web_search__lookup", {"word": "b"}, id="c1"),
                                  faux.call("notes__append", {"line": "a"}, id="c2"))
    assert [x.content for x in results] == ["b: able to withstand wear", "appended 'a'"]
    assert (a_side.lines(), b_side.lines()) == (["append a"], ["lookup b"])


async def test_two_servers_with_one_name_are_refused(side):
    spec = mcp.stdio(sys.executable, [SERVER, str(side.path)], name="same")
    with pytest.raises(mcp.MCPServerError, match="Two MCP servers are named 'same'"):
        async with mcp.connect(spec, spec):
            pass


async def test_a_server_that_cannot_start_is_named_in_the_error(tmp_path):
    spec = mcp.stdio(sys.executable, [str(tmp_path / "missing.py")], name="ghost",
                     stderr=open(tmp_path / "err.txt", "w"), connect_timeout=20)
    with pytest.raises(mcp.MCPServerError) as info:
        async with mcp.connect(spec):
            pass
    assert str(info.value) == (f"MCP server 'ghost' ({sys.executable} {tmp_path / 'missing.py'}) could not be "
                               "started: the process closed its output before the handshake (did it exit? see its "
                               "stderr)")


@pytest.mark.parametrize("transport", ["stdio"])
async def test_a_stdio_server_that_dies_mid_call_is_an_error_and_the_next_call_starts_it_again(server_spec, side,
                                                                                                tmp_path):
    async with mcp.connect(server_spec) as servers:
        results = await run_calls(tmp_path / "s.sqlite", servers, faux.call("die", {}, id="c1"))
        assert results == [result("c1", "die", (
            "Tool die failed: MCPCallError: MCP server 'tests' stopped during the call of tool die (the server closed "
            "the connection; its process may have exited); the call may have partially run. The next call to this "
            "server gets it started again"), True)]
        results = await run_calls(tmp_path / "t.sqlite", servers, faux.call("lookup", {"word": "again"}, id="c2"))
        assert results == [result("c2", "lookup", "again: able to withstand wear")]
    assert side.lines() == ["die start", "lookup again"]


@pytest.mark.parametrize("transport", ["stdio"])
async def test_a_call_right_after_one_that_found_the_server_gone_goes_to_a_new_connection(server_spec, side):
    # The call that finds the server gone asks its connection to end (`stop`); the connection is
    # `lost` only once its transport closed. A call in between (on a loaded machine, the next
    # run's) waited for nothing and went to the ending connection, failing as "stopped during the
    # call". Made deterministic here: the next call comes before the old connection could end.
    async with mcp.connect(server_spec) as servers:
        (connection,) = servers._connections
        old = await connection.connected("lookup")
        old.stop.set()  # what a call does when the server closed the connection under it
        new = await connection.connected("lookup")
        assert new is not old and old.lost.is_set() and not new.stop.is_set()
        assert new.client is not None
        result = await new.client.call_tool("lookup", {"word": "again"})
        assert [block.text for block in result.content] == ["again: able to withstand wear"]
    assert side.lines() == ["lookup again"]


async def test_an_http_server_killed_mid_call_is_an_error_and_is_reached_again_once_it_is_back(
        http_server, side, tmp_path):
    from .conftest import HttpServer

    model = FauxModel([faux.reply("", tool_calls=[faux.call("slow_unsafe", {"key": "k"}, id="c1")]),
                       faux.reply("done")])
    async with mcp.connect(mcp.http(http_server.url, name="tests")) as servers:
        async with durable.open_harness(tmp_path / "s.sqlite", model=model, tools=servers.tools,
                                        settings=settings()) as h:
            sub = await h.root.submit("go")
            await anyio.to_thread.run_sync(side.wait_for, "slow_unsafe k start")
            http_server.kill()
            answered = await sub.wait()
            assert isinstance(answered, r.Answered) and answered.text == "done"
            [stored] = [e.entry for e in await h.root.entries() if isinstance(e.entry, r.ToolResultEntry)]
        assert stored.is_error
        assert stored.content == ("Tool slow_unsafe failed: MCPCallError: MCP server 'tests' stopped during the "
                                  "call of tool slow_unsafe (the server closed the connection); the call may have "
                                  "partially run. The next call to this server gets it reached again")
        results = await run_calls(tmp_path / "t.sqlite", servers, faux.call("lookup", {"word": "w"}, id="c2"))
        assert results[0].content.startswith(f"Tool lookup failed: MCPCallError: MCP server 'tests' "
                                             f"({http_server.url}) could not be reached: ")
        assert results[0].content.endswith("; tool lookup was not called")
        again = await anyio.to_thread.run_sync(lambda: HttpServer(side, tmp_path / "again.log", port=http_server.port))
        try:
            results = await run_calls(tmp_path / "u.sqlite", servers, faux.call("lookup", {"word": "w"}, id="c3"))
            assert results == [result("c3", "lookup", "w: able to withstand wear")]
        finally:
            again.stop()


async def test_a_call_after_connect_exited_is_an_error(server_spec, tmp_path):
    async with mcp.connect(server_spec) as servers:
        tools = servers.tools
    model = FauxModel([faux.reply("", tool_calls=[faux.call("lookup", {"word": "x"}, id="c1")]), faux.reply("ok")])
    async with durable.open_harness(tmp_path / "s.sqlite", model=model, tools=tools, settings=settings()) as h:
        await (await h.root.submit("go")).wait()
        [stored] = [e.entry for e in await h.root.entries() if isinstance(e.entry, r.ToolResultEntry)]
    assert stored.content == ("Tool lookup failed: MCPCallError: MCP server 'tests' is closed (durable.mcp.connect has "
                              "exited); tool lookup was not called")


def test_the_result_text_names_blocks_that_are_not_text():
    import mcp.types as mt

    from durable.mcp._calls import _text

    content = [mt.TextContent(type="text", text="a"), mt.ImageContent(type="image", data="AAAA", mime_type="image/png"),
               mt.ResourceLink(type="resource_link", uri="file:///x", name="x")]
    assert _text(mt.CallToolResult(content=content)) == "a\n[image image/png, 3 bytes, not shown]\n[resource file:///x]"
    assert _text(mt.CallToolResult(content=[], structured_content={"n": 1})) == json.dumps({"n": 1})


def test_an_image_block_of_a_result_reaches_the_model_as_an_image():
    import base64

    import mcp.types as mt

    from durable.mcp._calls import _content

    png = b"\x89PNG\r\n\x1a\n" + b"pixels"
    content = [mt.TextContent(type="text", text="a"),
               mt.ImageContent(type="image", data=base64.b64encode(png).decode(), mime_type="image/png"),
               mt.ImageContent(type="image", data="not base64!", mime_type="image/png")]
    assert _content(mt.CallToolResult(content=content)) == [
        "a", durable.Image(png, media_type="image/png"), "[image image/png, 8 bytes, not shown]"]
    assert _content(mt.CallToolResult(content=content[:1])) == "a"
