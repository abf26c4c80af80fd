"""The console's ASGI app (Starlette): the page, its JSON, its server-sent events, its decisions.

Routes (every one but `/static/*` needs the token; a session is addressed by its index in the
sources given, so only those are reachable):

    GET  /?token=T                         sets the token cookie (HttpOnly, SameSite=Strict), then to /
    GET  /                                 the page
    GET  /api/sessions                     [{index, name}]
    GET  /api/sessions/{i}                 the session's state (`durable.console.views.session_state`)
    GET  /api/sessions/{i}/entries?conversation=C&after=N     entries after seq N
    GET  /api/sessions/{i}/events?conversation=C&after=N      SSE: `state` on each change, `entries`
    POST /api/sessions/{i}/decisions       {"call_id", "approve", "arguments"?, "reason"?}

A request without the token (query `token`, or the cookie) is refused with 403. A POST needs the
token in the `X-Durable-Token` header (the page has it; another site cannot read it) and, when
the browser sends an `Origin`, the console's own. Edited arguments that do not match the tool's
schema are 400 with the validator's sentences; a refused decision is 409 with the reason (two
tabs: the second is told); one committed is 200, only after its commit.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from importlib import resources
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ApprovalRejected, DurableError
from .sources import EditRejected, Source

COOKIE = "durable_console"
POLL_SECONDS = 0.075  # how often an event stream looks for a commit
KEEPALIVE_SECONDS = 15.0


def _static() -> Any:
    return resources.files("durable.console") / "static"


class _Guard:
    """Refuses (403) every request but `/static/*` without the token; a POST also needs it in
    the `X-Durable-Token` header and a same-origin `Origin` (when sent)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/static/"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given = request.query_params.get("token") or request.cookies.get(COOKIE) or ""
        ok = hmac.compare_digest(given.encode(), self.token.encode())
        if ok and request.method not in ("GET", "HEAD"):
            header = request.headers.get("x-durable-token", "")
            origin = request.headers.get("origin")
            host = request.headers.get("host", "")
            ok = hmac.compare_digest(header.encode(), self.token.encode()) and (
                origin is None or origin.split("://", 1)[-1] == host)
        if not ok:
            refused = JSONResponse({"error": "forbidden: the console's token is missing or wrong"}, 403)
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)


def make_app(sources: Sequence[Source], *, token: str | None = None,
             refresh: Callable[[], Awaitable[None]] | None = None) -> Starlette:
    """The console over `sources`; `token` (default: a random one) is `app.state.token`.
    `refresh`: called before the list of sessions is sent (it may append to `sources`)."""
    token = token or secrets.token_urlsafe(24)
    page = (_static() / "index.html").read_text(encoding="utf-8").replace("{{TOKEN}}", token)

    def source(request: Request) -> Source:
        try:
            index = int(request.path_params["index"])
        except ValueError:
            index = -1
        if not 0 <= index < len(sources):
            raise _NotFound(f"no session {request.path_params['index']!r}")
        return sources[index]

    async def index(request: Request) -> Response:
        if "token" in request.query_params:  # kept in the cookie, and out of the address bar and history
            response: Response = RedirectResponse("/", 303, headers={"Cache-Control": "no-store"})
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
            return response
        response = HTMLResponse(page, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                                               "Content-Security-Policy": "default-src 'self'; object-src 'none'"})
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    async def sessions(request: Request) -> Response:
        if refresh is not None:
            await refresh()
        return JSONResponse([{"index": i, "name": s.name} for i, s in enumerate(sources)])

    async def state(request: Request) -> Response:
        return _json(await source(request).state())

    async def entries(request: Request) -> Response:
        conversation, after = _position(request)
        return _json(await source(request).entries(conversation, after))

    async def events(request: Request) -> Response:
        src = source(request)
        conversation, after = _position(request)
        return StreamingResponse(_stream(request, src, conversation, after), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def decide(request: Request) -> Response:
        src = source(request)
        try:
            body = json.loads(await request.body())
            call_id, approve = body["call_id"], body["approve"]
            arguments, reason = body.get("arguments"), body.get("reason", "")
            if not (isinstance(call_id, str) and isinstance(approve, bool) and isinstance(reason, str)
                    and (arguments is None or isinstance(arguments, str))):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "a decision is {call_id, approve, arguments?, reason?}"}, 400)
        try:
            await src.decide(call_id, approve=approve, arguments=arguments, reason=reason)
        except EditRejected as exc:
            return JSONResponse({"error": str(exc)}, 400)
        except ApprovalRejected as exc:
            return JSONResponse({"error": str(exc)}, 409)
        except DurableError as exc:
            return JSONResponse({"error": str(exc)}, 503)
        return JSONResponse({"ok": True, "call_id": call_id, "approve": approve})

    app = Starlette(routes=[
        Route("/", index),
        Route("/api/sessions", sessions),
        Route("/api/sessions/{index}", state),
        Route("/api/sessions/{index}/entries", entries),
        Route("/api/sessions/{index}/events", events),
        Route("/api/sessions/{index}/decisions", decide, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(_static())), name="static"),
    ], exception_handlers={_NotFound: _not_found})
    app.state.token = token
    app.add_middleware(_Guard, token=token)
    return app


class _NotFound(Exception):
    pass


async def _not_found(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, 404)


def _json(data: Any) -> Response:
    return Response(json.dumps(data, ensure_ascii=False), media_type="application/json")


def _position(request: Request) -> tuple[str, int]:
    conversation = request.query_params.get("conversation", "root")
    try:
        after = max(0, int(request.query_params.get("after", "0")))
    except ValueError:
        after = 0
    return conversation, after


async def _stream(request: Request, src: Source, conversation: str, after: int) -> AsyncIterator[str]:
    """`state` now and on each change of the session; `entries` of the conversation followed as
    they are committed; a comment every `KEEPALIVE_SECONDS`. Ends when the page goes."""
    sent_state, seen, quiet, count = "", None, 0.0, None
    while not await request.is_disconnected():
        version = await src.version()
        if version != seen:
            seen, quiet = version, 0.0
            state = await src.state()
            now = next((c["entries"] for c in state["conversations"] if c["id"] == conversation), 0)
            if now != count:  # the conversation followed has new entries
                count = now
                fresh = await src.entries(conversation, after)
                if fresh:
                    after = fresh[-1]["seq"]
                    yield f"event: entries\ndata: {json.dumps(fresh, ensure_ascii=False)}\n\n"
            text = json.dumps(state, ensure_ascii=False)
            if text != sent_state:
                sent_state = text
                yield f"event: state\ndata: {text}\n\n"
        elif quiet >= KEEPALIVE_SECONDS:
            quiet = 0.0
            yield ": keepalive\n\n"
        await anyio.sleep(POLL_SECONDS)
        quiet += POLL_SECONDS


__all__ = ["COOKIE", "make_app"]
