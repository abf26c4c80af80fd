"""What the world outside the session file saw, kept so that it survives the crashes of a test.

A crash test must count things the session file cannot tell: how many times a tool really ran,
and which deferred jobs the provider really holds. These logs live outside the harness: in
memory (for in-process crashes, the same object is handed to every harness of the test) or in
an append-only file (for process kills: every record is one `write` to a file opened with
`O_APPEND`, which the OS keeps when the process is killed; a torn last line is ignored).

- `ExecutionLog` counts tool executions per call id; `log.wrap(tool)` returns the tool with an
  `execute` that records its start before running the real one.
- `FauxJobLedger` is the provider's side of deferred jobs: `ledger.model(faux_model)` returns a
  model whose `submit` / `fetch` / `cancel` go through the ledger, so a job submitted by one
  process can be fetched or cancelled by the next, and a test can ask which attempt keys were
  submitted twice and which jobs were left open. With `findable=True` (the default) the model's
  `find(key)` finds a job as a provider that can list its jobs does; `findable=False` simulates
  one that cannot (it finds nothing: the harness then submits again, and says so).
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from typing import Any

import anyio
import attrs
from attrs import frozen

from ..models.fallback import FallbackModel
from ..models.faux import Error, ErrorStop, FauxModel, Hang, Reply, faux_reasoning
from ..models.protocol import DeferredHandle, FetchResult, FinalMessage, ModelError, ModelRequest, StillRunning
from ..records import ModelStopReason, ToolCall, Usage


class _AppendLog:
    """JSON records in memory, mirrored to an append-only file when `path` is given."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.records: list[dict[str, Any]] = []
        if self.path is not None:
            self.reload()

    def reload(self) -> None:
        """Read the file again (records appended by other processes)."""
        if self.path is None:
            return
        self.records = []
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                self.records.append(json.loads(line))
            except ValueError:  # a line torn by a kill: the write never completed
                continue

    def append(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self.path is not None:
            line = (json.dumps(record, separators=(",", ":")) + "\n").encode()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)


# --------------------------------------------------------------------------- tool executions


@frozen
class Execution:
    """One start of a tool's `execute`: for which call, in which attempt (restarts + 1), by which
    process."""

    call_id: str
    tool: str
    replay: str
    attempt: int
    pid: int


class ExecutionLog:
    """Counts tool executions per call id (see the module docstring). `path=None` keeps them in
    memory; a path keeps them in an append-only file shared by every process of a test."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._log = _AppendLog(path)

    @property
    def path(self) -> str | None:
        return self._log.path

    def record(self, call_id: str, tool: str, replay: str, attempt: int) -> None:
        self._log.append({"call_id": call_id, "tool": tool, "replay": replay, "attempt": attempt, "pid": os.getpid()})

    def executions(self) -> list[Execution]:
        self._log.reload()
        return [Execution(r["call_id"], r["tool"], r["replay"], r.get("attempt", 1), r.get("pid", 0))
                for r in self._log.records]

    def counts(self) -> dict[str, int]:
        """Executions per call id."""
        return dict(Counter(e.call_id for e in self.executions()))

    def wrap(self, tool: Any) -> Any:
        """The tool with an `execute` that records each start here first. Client tools (run by
        the host) are returned unchanged; a sub-agent's tool has its own tools wrapped."""
        if tool.agent is not None:
            from ..tools import ToolRegistry

            tools = ToolRegistry(self.wrap_all(tool.agent.tools))
            return attrs.evolve(tool, agent=attrs.evolve(tool.agent, tools=tools))
        inner = tool.execute
        if inner is None:
            return tool

        async def execute(args: Any, api: Any, ctx: Any) -> Any:
            self.record(ctx.call_id, tool.name, tool.replay, ctx.attempt)
            return await inner(args, api, ctx)

        return attrs.evolve(tool, execute=execute)

    def wrap_all(self, tools: Any) -> list[Any]:
        return [self.wrap(t) for t in tools]


# --------------------------------------------------------------------------- deferred jobs


@frozen
class Job:
    """A deferred job as the provider holds it: the attempt key it was submitted for, its step."""

    handle: str
    key: str
    step: Any
    polls: int
    poll_after: float


class FauxJobLedger:
    """The provider's record of deferred jobs (see the module docstring).

    Every submit, fetch and cancel is recorded before the call returns, so the ledger knows
    about a job even when the host died before it could commit the job's handle."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, findable: bool = True) -> None:
        self._log = _AppendLog(path)
        self.findable = findable

    @property
    def path(self) -> str | None:
        return self._log.path

    def model(self, inner: FauxModel) -> LedgerModel:
        """`inner` with deferred calls served from this ledger (streaming passes through)."""
        return LedgerModel(inner, self)

    def witnessed(self, model: Any) -> Any:
        """The model a crash test runs: a `FauxModel` served from this ledger (`model`), each faux
        member of a `FallbackModel` likewise; any other model as it is."""
        if isinstance(model, FauxModel):
            return self.model(model)
        if isinstance(model, FallbackModel):
            return FallbackModel([self.model(m) if isinstance(m, FauxModel) else m for m in model.members])
        return model

    # ------------------------------------------------------------------ reading

    def _records(self) -> list[dict[str, Any]]:
        self._log.reload()
        return self._log.records

    def jobs(self) -> dict[str, Job]:
        out = {}
        for r in self._records():
            if r["op"] == "submit":
                out[r["handle"]] = Job(r["handle"], r["key"], _load_step(r["step"]), r["polls"], r["poll_after"])
        return out

    def submits_by_key(self) -> dict[str, list[str]]:
        """Attempt key -> the handles of the jobs submitted for it, in order."""
        out: dict[str, list[str]] = {}
        for r in self._records():
            if r["op"] == "submit":
                out.setdefault(r["key"], []).append(r["handle"])
        return out

    def fetch_count(self, handle: str) -> int:
        return sum(1 for r in self._records() if r["op"] == "fetch" and r["handle"] == handle)

    def cancelled(self) -> set[str]:
        return {r["handle"] for r in self._records() if r["op"] == "cancel"}

    def finished(self) -> set[str]:
        """Jobs whose final answer (or final error) was handed out by a fetch."""
        return {r["handle"] for r in self._records() if r["op"] == "fetch" and r.get("result") in ("final", "error")}

    def open_jobs(self) -> list[Job]:
        """Jobs neither finished nor cancelled: still running at the provider."""
        done = self.cancelled() | self.finished()
        return [job for h, job in self.jobs().items() if h not in done]

    # ------------------------------------------------------------------ writing

    def record(self, op: str, **fields: Any) -> None:
        self._log.append({"op": op, **fields})


def requests_of(model: Any) -> list[ModelRequest] | None:
    """The requests a faux model recorded (a `FallbackModel`'s faux members', one after the
    other), None when no member records them."""
    members = model.members if isinstance(model, FallbackModel) else (model,)
    found = [getattr(m, "requests", None) for m in members]
    return None if all(r is None for r in found) else [q for r in found for q in (r or ())]


class LedgerModel:
    """A faux model whose deferred jobs live in a `FauxJobLedger`; everything else is the inner
    `FauxModel` (its script answers `submit` as it answers `stream`)."""

    def __init__(self, inner: FauxModel, ledger: FauxJobLedger) -> None:
        self.inner = inner
        self.ledger = ledger

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "ledger"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def find(self, key: str) -> str | None:
        """The model protocol's `find(key)`: the job submitted with `key`, as a provider that can
        list its jobs finds it; always None when the ledger is not `findable`."""
        handles = self.ledger.submits_by_key().get(key) if self.ledger.findable else None
        await anyio.lowlevel.checkpoint()
        return handles[-1] if handles else None

    def stream(self, request: ModelRequest) -> Any:
        return self.inner.stream(request)

    async def submit(self, request: ModelRequest) -> DeferredHandle:
        step = self.inner._take(request)  # the next step of the inner script, as its own submit takes it
        handle = f"job-{uuid.uuid4().hex[:12]}"
        self.ledger.record("submit", handle=handle, key=request.key, step=_dump_step(step),
                           polls=self.inner.polls, poll_after=self.inner.poll_after)
        await anyio.lowlevel.checkpoint()
        return DeferredHandle(handle, self.inner.poll_after)

    async def fetch(self, handle: str) -> FetchResult:
        job = self.ledger.jobs().get(handle)
        if job is None:
            raise ModelError(f"No faux job {handle}", kind="invalid_request", provider="faux", status_code=404)
        if handle in self.ledger.cancelled():
            raise ModelError(f"Faux job {handle} was cancelled", kind="invalid_request", provider="faux")
        count = self.ledger.fetch_count(handle) + 1
        step = job.step
        if isinstance(step, Hang):
            self.ledger.record("fetch", handle=handle, result="running")
            await anyio.sleep_forever()
        if count < job.polls:
            self.ledger.record("fetch", handle=handle, result="running")
            await anyio.lowlevel.checkpoint()
            return StillRunning(job.poll_after)
        if isinstance(step, Error):
            self.ledger.record("fetch", handle=handle, result="error")
            raise ModelError(step.message, kind=step.kind, provider="faux",
                             status_code=step.status_code, retry_after=step.retry_after)
        final = _final_of(step)
        self.ledger.record("fetch", handle=handle, result="final")
        await anyio.lowlevel.checkpoint()
        return final

    async def cancel(self, handle: str) -> None:
        self.ledger.record("cancel", handle=handle)
        await anyio.lowlevel.checkpoint()


def _final_of(step: Any) -> FinalMessage:
    if isinstance(step, ErrorStop):
        usage = Usage(10, max(1, len(step.partial) // 4))
        return FinalMessage(step.partial, "error", usage=usage, error=step.message)
    assert isinstance(step, Reply)
    usage = step.usage or Usage(10, max(1, len(step.text) // 4) + len(step.tool_calls))
    stop: ModelStopReason = step.stop_reason or ("tool_use" if step.tool_calls else "stop")
    return FinalMessage(step.text, stop, step.tool_calls, usage, reasoning=faux_reasoning(step.reasoning))


_STEPS: dict[str, type[Reply | Error | ErrorStop | Hang]] = {
    "reply": Reply, "error": Error, "error_stop": ErrorStop, "hang": Hang
}


def _dump_step(step: Any) -> dict[str, Any]:
    for tag, cls in _STEPS.items():
        if isinstance(step, cls):
            return {"type": tag, **attrs.asdict(step, recurse=True)}
    raise TypeError(f"A faux step of type {type(step).__name__} cannot be kept in a job ledger")


def _load_step(data: dict[str, Any]) -> Any:
    data = dict(data)
    cls = _STEPS[data.pop("type")]
    if cls is Reply:
        data["tool_calls"] = tuple(ToolCall(**c) for c in data.get("tool_calls", ()))
        if data.get("usage") is not None:
            data["usage"] = Usage(**data["usage"])
    return cls(**data)
