"""Every endpoint of the console over plain HTTP: the standalone app on a session file (Starlette's
TestClient) and the embedded app of a running harness (served by Hypercorn on trio, httpx as the
client): the token, the cookie, POSTs guarded against other sites, 404 for a session not named,
the state and entries, the event stream, and decisions (committed before 200; twice: 409)."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import anyio
import httpx
import pytest
from starlette.testclient import TestClient

import durable
from durable.console import app as console_app, files_app, serve
from durable.models import FauxModel, faux

from .agent import XSS

TOKEN = "tok-abcdef"
NOTE_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
               "additionalProperties": False}


def note_tool(runs: list[str]):
    async def save_note(text: str) -> str:
        """Save a note."""
        runs.append(text)
        return f"saved {text}"
    return durable.define_tool(execute=save_note, approval=True)


def page_tool():
    async def fetch_page(url: str) -> str:
        """Fetch a page."""
        return XSS
    return durable.define_tool(execute=fetch_page, replay="safe")


def model():
    return FauxModel([faux.reply("", tool_calls=[faux.call("fetch_page", {"url": "u"}, id="call_page"),
                                                 faux.call("save_note", {"text": "draft"}, id="call_note")]),
                      faux.reply("Saved.")])


async def waiting_file(path) -> None:
    """A session file whose call `call_note` waits for approval, closed (nobody owns it)."""
    async with durable.open_harness(path, model=model(), tools=[note_tool([]), page_tool()]) as h:
        await h.root.submit("Save a note")
        async for live in h.root.follow():
            if live.approvals:
                break


def inbox_count(path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM inbox").fetchone()[0])
    finally:
        conn.close()


def rows_but_inbox(path) -> str:
    """A digest of every row of the file but its inbox's."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                  if t != "inbox"]
        return hashlib.sha256(repr([(t, conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall())
                                    for t in tables]).encode()).hexdigest()
    finally:
        conn.close()


@pytest.mark.anyio
async def test_the_standalone_app_on_a_session_file(tmp_path):
    path = tmp_path / "s.sqlite"
    await waiting_file(path)
    before = rows_but_inbox(path)
    client = TestClient(files_app([str(path)], token=TOKEN))

    # The token: refused without it or with another, then the page sets the cookie.
    assert client.get("/api/sessions").status_code == 403
    assert client.get("/?token=nope").status_code == 403
    entry = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert (entry.status_code, entry.headers["location"]) == (303, "/")  # the token leaves the address bar
    assert client.cookies["durable_console"] == TOKEN
    page = client.get("/")
    assert page.status_code == 200
    assert f'<meta name="durable-token" content="{TOKEN}">' in page.text
    assert page.headers["content-security-policy"] == "default-src 'self'; object-src 'none'"
    assert "samesite=strict" in entry.headers["set-cookie"].lower()
    assert "httponly" in entry.headers["set-cookie"].lower()
    assert client.get("/static/console.js").status_code == 200

    assert client.get("/api/sessions").json() == [{"index": 0, "name": "s.sqlite"}]
    assert client.get("/api/sessions/1").status_code == 404  # only the sessions named
    assert client.get("/api/sessions/x").status_code == 404
    state = client.get("/api/sessions/0").json()
    assert state["owner"] == "not open"
    assert state["conversations"] == [{"id": "root", "state": "waiting for approval", "entries": 2}]
    assert [(a["call_id"], a["tool"], a["arguments"], a["schema"]) for a in state["approvals"]] == [
        ("call_note", "save_note", '{"text": "draft"}', NOTE_SCHEMA)]  # kept with the call: no tool here
    assert [(t["id"], t["describe"], t["state"], t["phase_label"]) for t in state["tasks"]] == [
        (1, "generation", "waiting", "tools"), (2, "tool fetch_page, safe", "terminal", None),
        (3, "tool save_note, unsafe, waiting for approval", "waiting", "approval")]
    assert state["recovery"] == []
    entries = client.get("/api/sessions/0/entries?conversation=root&after=1").json()
    assert [(e["seq"], e["type"]) for e in entries] == [(2, "assistant")]

    # Decisions: the token in a header, from this origin; refused calls are 409, malformed 400.
    decision = {"call_id": "call_note", "approve": True, "arguments": '{"text": "edited"}'}
    assert client.post("/api/sessions/0/decisions", json=decision).status_code == 403
    assert client.post("/api/sessions/0/decisions", json=decision,
                       headers={"X-Durable-Token": TOKEN, "Origin": "http://evil.example"}).status_code == 403
    guarded = {"X-Durable-Token": TOKEN}
    assert client.post("/api/sessions/0/decisions", json={"call_id": 1}, headers=guarded).status_code == 400
    not_object = client.post("/api/sessions/0/decisions", json={**decision, "arguments": "[1]"}, headers=guarded)
    assert (not_object.status_code, not_object.json()) == (400, {
        "error": "Tool call call_note was not approved: the edited arguments are not a JSON object"})
    # Against the tool's schema kept with the call, with jsonschema's sentences, before anything is sent.
    invalid = client.post("/api/sessions/0/decisions", json={**decision, "arguments": '{"text": 5, "x": 1}'},
                          headers=guarded)
    assert (invalid.status_code, invalid.json()) == (400, {
        "error": "Tool call call_note (save_note) was not approved: Tool save_note: invalid arguments: $: "
                 "Additional properties are not allowed ('x' was unexpected) (keyword: additionalProperties); "
                 "$.text: 5 is not of type 'string' (keyword: type)"})
    assert rows_but_inbox(path) == before and inbox_count(path) == 0
    unknown = client.post("/api/sessions/0/decisions", json={**decision, "call_id": "nope"}, headers=guarded)
    assert unknown.json() == {"error": f"No tool call nope waits for a decision in {path}; nothing was decided"}
    sent = client.post("/api/sessions/0/decisions", json=decision, headers=guarded)
    assert (sent.status_code, sent.json()) == (200, {"ok": True, "call_id": "call_note", "approve": True})
    twice = client.post("/api/sessions/0/decisions", json={"call_id": "call_note", "approve": False}, headers=guarded)
    assert (twice.status_code, twice.json()) == (409, {
        "error": f"Tool call call_note in {path} was already decided (another decision is in its inbox); nothing "
                 "was decided"})
    assert rows_but_inbox(path) == before  # nothing but the inbox was written

    # The owner, opening the file, applies the decision once and consumes its row.
    runs: list[str] = []
    answers = FauxModel([faux.reply("Saved.")])  # the first process made the calls
    async with durable.open_harness(path, model=answers, tools=[note_tool(runs), page_tool()]) as h:
        await h.resume()
        async for live in h.root.follow():
            if live.run is None and not live.approvals:
                break
        entries = await h.root.entries()
    assert runs == ["edited"]
    assert [(e.seq, type(e.entry).__name__) for e in entries][-2:] == [(4, "ToolResultEntry"), (5, "AssistantEntry")]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM inbox").fetchone() == (0,)
    conn.close()


def test_the_command_refuses_a_missing_file_in_one_line(tmp_path):
    from click.testing import CliRunner

    from durable.cli.command import cli

    done = CliRunner().invoke(cli, ["console", str(tmp_path / "nope.sqlite"), "--port", "0"])
    assert (done.exit_code, done.output) == (2, f"durable: error: No session file at {tmp_path / 'nope.sqlite'}\n")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_the_embedded_app_of_a_running_harness(tmp_path, anyio_backend):
    runs: list[str] = []
    async with durable.open_harness(tmp_path / "e.sqlite", model=model(),
                                    tools=[note_tool(runs), page_tool()]) as h, anyio.create_task_group() as tg:
        asgi = console_app(h, token=TOKEN)
        port = anyio.Event()
        bound: list[int] = []
        tg.start_soon(lambda: serve(asgi, port=0, ready=lambda p: (bound.append(p), port.set())))
        await port.wait()
        base = f"http://127.0.0.1:{bound[0]}"
        sub = await h.root.submit("Save a note")
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            assert (await client.get("/api/sessions/0")).status_code == 403
            assert (await client.get(f"/?token={TOKEN}", follow_redirects=True)).status_code == 200  # the cookie
            # The event stream: the state (with the call waiting), and the entries so far.
            async with client.stream("GET", "/api/sessions/0/events?conversation=root&after=0") as events:
                assert events.headers["content-type"].startswith("text/event-stream")
                seen: dict[str, object] = {}
                name = ""
                async for line in events.aiter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: "):
                        data = json.loads(line[6:])
                        if name == "state" and not data["approvals"]:
                            continue  # before the call waits
                        seen[name] = data
                        if "state" in seen and "entries" in seen:
                            break
            state = seen["state"]
            assert isinstance(state, dict)
            assert state["owner"].startswith("this process")
            assert state["approvals"][0]["schema"] == NOTE_SCHEMA
            assert [e["seq"] for e in seen["entries"]][:2] == [1, 2]  # type: ignore[union-attr]
            guarded = {"X-Durable-Token": TOKEN}
            invalid = await client.post("/api/sessions/0/decisions", headers=guarded, json={
                "call_id": "call_note", "approve": True, "arguments": '{"text": 3}'})
            assert (invalid.status_code, invalid.json()) == (400, {
                "error": "Tool call call_note (save_note) was not approved: Tool save_note: invalid arguments: "
                         "$.text: 3 is not of type 'string' (keyword: type)"})
            sent = await client.post("/api/sessions/0/decisions", headers=guarded, json={
                "call_id": "call_note", "approve": True, "arguments": '{"text": "edited"}'})
            assert sent.status_code == 200
            twice = await client.post("/api/sessions/0/decisions", headers=guarded,
                                      json={"call_id": "call_note", "approve": False, "reason": "no"})
            assert twice.status_code == 409
            assert "call_note" in twice.json()["error"]
        assert await sub.answer() == "Saved."
        assert runs == ["edited"]
        tg.cancel_scope.cancel()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio", "asyncio"])
async def test_serve_closes_its_listening_socket_once(tmp_path, anyio_backend):
    # `serve` used to hand Hypercorn the listening socket's number (`fd://N`): Hypercorn made a
    # second socket object of it and closed N when it stopped, and the first one closed N again
    # when it was freed (a ResourceWarning "unclosed socket"), whatever N named by then: in an
    # owner process, an SQLite connection's -shm (its WAL locks gone) or the session file itself.
    # Here serve's frame outlives it (as a traceback keeps it), and files opened after it stopped
    # take the numbers it freed: none may be closed when the frame goes.
    import gc
    import os
    import sys

    async def asgi(scope, receive, send):
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})

    def named(fd: int) -> int | None:
        try:
            return os.fstat(fd).st_ino
        except OSError:  # closed
            return None

    frames: list[object] = []
    ports: list[int] = []
    up = anyio.Event()

    def ready(port: int) -> None:
        frames.append(sys._getframe(1))  # serve's
        ports.append(port)
        up.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve(asgi, port=0, ready=ready))
        await up.wait()
        async with httpx.AsyncClient() as client:  # Hypercorn has taken the socket once it answers
            assert (await client.get(f"http://127.0.0.1:{ports[0]}/")).status_code == 204
        tg.cancel_scope.cancel()
    paths = [tmp_path / f"f{i}" for i in range(32)]
    fds = [os.open(p, os.O_RDWR | os.O_CREAT) for p in paths]
    try:
        frames.clear()
        gc.collect()
        assert [named(fd) for fd in fds] == [os.stat(p).st_ino for p in paths]
    finally:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
