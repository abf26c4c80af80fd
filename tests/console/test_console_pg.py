"""The console over PostgreSQL session spaces (`durable console --dsn DSN --space PATTERN`), on the
suite's throwaway server (skipped with DURABLE_SKIP_POSTGRES=1): the spaces matching the pattern
listed, the same state and entries as for a file, nothing written but the inbox, a decision
committed in the space's inbox before 200 (checked against the tool's schema first: 400), deciding
twice (one after the other, and two at once: one wins, the other is told), the next owner applying
the decision once; the event stream following an owner's commits; the command's one-line errors."""

from __future__ import annotations

import hashlib
import json
import os
import uuid

import anyio
import httpx
import psycopg
import pytest

import durable
from durable.console import serve, spaces_app
from durable.storage import PostgresStorage

from .test_console_http import NOTE_SCHEMA, model, note_tool, page_tool

TOKEN = "tok-pg-0123"
GUARDED = {"X-Durable-Token": TOKEN}

pytestmark = pytest.mark.anyio


def digest(dsn: str, space: str) -> str:
    """Every row of the space but its inbox's (the lease row without its expiry)."""
    with psycopg.connect(dsn) as conn:
        found = [conn.execute(f"SELECT * FROM durable.{t} WHERE space = %s ORDER BY 2", (space,)).fetchall()
                 for t in ("documents", "entries", "tasks", "submissions", "texts")]
        found.append(conn.execute("SELECT epoch, commits, owner FROM durable.leases WHERE space = %s",
                                  (space,)).fetchall())
    return hashlib.sha256(repr(found).encode()).hexdigest()


def decisions(dsn: str, space: str) -> list[dict]:
    with psycopg.connect(dsn) as conn:
        return [json.loads(d) for (d,) in conn.execute(
            "SELECT decision FROM durable.inbox WHERE space = %s AND decision IS NOT NULL ORDER BY ord", (space,))]


async def waiting_space(dsn: str, space: str) -> None:
    """A space whose call `call_note` waits for approval, closed (nobody owns it)."""
    async with durable.open_harness(PostgresStorage(dsn, space), model=model(),
                                    tools=[note_tool([]), page_tool()]) as h:
        await h.root.submit("Save a note")
        async for live in h.root.follow():
            if live.approvals:
                break


async def answered_space(dsn: str, space: str) -> None:
    async with durable.open_harness(PostgresStorage(dsn, space), model=durable.models.FauxModel(
            [durable.models.faux.reply("Hello.")])) as h:
        await (await h.root.submit("Hi")).wait()


class Served:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def decide(self, index: int, **decision) -> tuple[int, dict]:
        done = await self.client.post(f"/api/sessions/{index}/decisions", headers=GUARDED, json=decision)
        return done.status_code, done.json()


async def with_console(dsn: str, pattern: str, test) -> None:
    asgi = spaces_app(dsn, pattern, token=TOKEN)
    async with anyio.create_task_group() as tg:
        bound: list[int] = []
        ready = anyio.Event()
        tg.start_soon(lambda: serve(asgi, port=0, ready=lambda p: (bound.append(p), ready.set())))
        await ready.wait()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{bound[0]}", timeout=20,
                                     cookies={"durable_console": TOKEN}) as client:
            await test(Served(client))
        tg.cancel_scope.cancel()


async def test_spaces_matching_the_pattern_shown_and_decided_through_the_inbox(postgres_dsn):
    tag = uuid.uuid4().hex[:8]
    a, b, other = f"console-{tag}-a", f"console-{tag}-b", f"elsewhere-{tag}"
    await waiting_space(postgres_dsn, a)
    await answered_space(postgres_dsn, b)
    await answered_space(postgres_dsn, other)
    before = digest(postgres_dsn, a)

    async def test(s: Served) -> None:
        client = s.client
        async with httpx.AsyncClient(base_url=client.base_url, cookies={"durable_console": "wrong"}) as wrong:
            assert (await wrong.get("/api/sessions")).status_code == 403
        assert (await client.get("/api/sessions")).json() == [{"index": 0, "name": a}, {"index": 1, "name": b}]
        state = (await client.get("/api/sessions/0")).json()
        assert (state["name"], state["owner"]) == (a, "not open")
        assert state["location"].startswith(f"space '{a}' on postgresql://127.0.0.1:")
        assert state["conversations"] == [{"id": "root", "state": "waiting for approval", "entries": 2}]
        assert [(x["call_id"], x["tool"], x["arguments"], x["schema"]) for x in state["approvals"]] == [
            ("call_note", "save_note", '{"text": "draft"}', NOTE_SCHEMA)]
        assert [(t["id"], t["describe"], t["state"], t["phase_label"]) for t in state["tasks"]] == [
            (1, "generation", "waiting", "tools"), (2, "tool fetch_page, safe", "terminal", None),
            (3, "tool save_note, unsafe, waiting for approval", "waiting", "approval")]
        assert state["recovery"] == []
        entries = (await client.get("/api/sessions/0/entries?conversation=root&after=0")).json()
        assert [(e["seq"], e["type"]) for e in entries] == [(1, "user"), (2, "assistant")]
        answered = (await client.get("/api/sessions/1")).json()
        assert (answered["conversations"], answered["approvals"]) == ([{"id": "root", "state": "idle",
                                                                        "entries": 2}], [])
        assert (await client.get("/api/sessions/2")).status_code == 404  # the other space is not reachable

        # Refused before anything is written: not the schema (400), an unknown call (409).
        assert await s.decide(0, call_id="call_note", approve=True, arguments='{"text": 7}') == (400, {
            "error": "Tool call call_note (save_note) was not approved: Tool save_note: invalid arguments: "
                     "$.text: 7 is not of type 'string' (keyword: type)"})
        assert await s.decide(0, call_id="nope", approve=False) == (409, {
            "error": f"No tool call nope waits for a decision in {state['location']}; nothing was decided"})
        assert decisions(postgres_dsn, a) == []
        # Committed in the inbox when 200 is answered; a second decision is told it lost.
        assert await s.decide(0, call_id="call_note", approve=True, arguments='{"text": "edited"}') == (
            200, {"ok": True, "call_id": "call_note", "approve": True})
        assert decisions(postgres_dsn, a) == [{"call_id": "call_note", "approve": True,
                                               "arguments": '{"text": "edited"}', "reason": ""}]
        assert await s.decide(0, call_id="call_note", approve=False, reason="no") == (409, {
            "error": f"Tool call call_note in {state['location']} was already decided (another decision is in "
                     "its inbox); nothing was decided"})
        assert digest(postgres_dsn, a) == before  # nothing but the inbox was written

    await with_console(postgres_dsn, f"console-{tag}-%", test)

    # The next owner applies the decision once, with the edit, and consumes its row.
    runs: list[str] = []
    answers = durable.models.FauxModel([durable.models.faux.reply("Saved.")])
    async with durable.open_harness(PostgresStorage(postgres_dsn, a), model=answers,
                                    tools=[note_tool(runs), page_tool()]) as h:
        await h.resume()
        async for live in h.root.follow():
            if live.run is None and not live.approvals:
                break
    assert runs == ["edited"]
    assert decisions(postgres_dsn, a) == []


async def test_two_decisions_at_once_one_wins_and_the_stream_follows_a_live_owner(postgres_dsn):
    space = f"race-{uuid.uuid4().hex[:8]}"
    runs: list[str] = []
    async with durable.open_harness(PostgresStorage(postgres_dsn, space), model=model(),
                                    tools=[note_tool(runs), page_tool()]) as h:

        async def test(s: Served) -> None:
            sub = await h.root.submit("Save a note")
            # The event stream: a state with the call waiting, once the owner committed it.
            async with s.client.stream("GET", "/api/sessions/0/events?conversation=root&after=0") as events:
                name = ""
                async for line in events.aiter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name == "state":
                        state = json.loads(line[6:])
                        if state["approvals"]:
                            break
            assert state["owner"] == f"owned by process {os.getpid()} on {os.uname().nodename}"
            assert [x["call_id"] for x in state["approvals"]] == ["call_note"]
            results: list[tuple[int, dict]] = []

            async def one(text: str) -> None:
                results.append(await s.decide(0, call_id="call_note", approve=True,
                                              arguments=json.dumps({"text": text})))

            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "first")
                tg.start_soon(one, "second")
            assert sorted(code for code, _ in results) == [200, 409]
            won = next(body for code, body in results if code == 200)
            lost = next(body for code, body in results if code == 409)
            assert won == {"ok": True, "call_id": "call_note", "approve": True}
            assert lost["error"] in (  # the inbox row, or (the owner took it meanwhile) the call no longer waits
                f"Tool call call_note in {state['location']} was already decided (another decision is in its "
                "inbox); nothing was decided",
                f"No tool call call_note waits for a decision in {state['location']}; nothing was decided")
            assert await sub.answer() == "Saved."

        await with_console(postgres_dsn, space, test)
    assert len(runs) == 1 and runs[0] in ("first", "second")


def test_the_command_refuses_a_server_without_durable_and_no_source(postgres_dsn, tmp_path):
    from click.testing import CliRunner

    from durable.cli.command import cli

    empty = f"durable_empty_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {empty}")
    dsn = postgres_dsn.rsplit("/", 1)[0] + f"/{empty}" if "://" in postgres_dsn else f"{postgres_dsn} dbname={empty}"
    done = CliRunner().invoke(cli, ["console", "--dsn", dsn, "--port", "0"])
    assert done.exit_code == 2
    assert done.output.startswith("durable: error: The database at postgresql://") and done.output.endswith(
        " holds no durable session spaces (no durable schema)\n")
    none = CliRunner().invoke(cli, ["console", "--port", "0"])
    assert none.exit_code == 2 and "give session files (PATH...) or a PostgreSQL server (--dsn DSN)" in none.output


async def test_the_command_serves_files_and_spaces_together(postgres_dsn, tmp_path, processes):
    import sys
    import urllib.request
    from pathlib import Path

    from .conftest import Process
    from .test_console_http import waiting_file

    space = f"cli-{uuid.uuid4().hex[:8]}"
    await answered_space(postgres_dsn, space)
    path = tmp_path / "f.sqlite"
    await waiting_file(path)
    durable_cli = Path(sys.executable).with_name("durable")
    p = Process([str(durable_cli), "console", str(path), "--dsn", postgres_dsn, "--space", space, "--port", "0",
                 "--token", TOKEN], tmp_path)
    processes.append(p)
    url = p.expect("durable console: http://").split(": ", 1)[1]
    base = url.split("/?")[0]

    def get(route: str) -> object:
        request = urllib.request.Request(base + route, headers={"Cookie": f"durable_console={TOKEN}"})
        with urllib.request.urlopen(request, timeout=20) as response:
            return json.loads(response.read())

    assert await anyio.to_thread.run_sync(get, "/api/sessions") == [{"index": 0, "name": "f.sqlite"},
                                                                     {"index": 1, "name": space}]
    state = await anyio.to_thread.run_sync(get, "/api/sessions/1")
    assert (state["name"], state["conversations"]) == (space, [{"id": "root", "state": "idle", "entries": 2}])
