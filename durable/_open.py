"""`open_harness`: the one way to get a harness with the standard task kinds."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from .engine.clock import Clock
from .engine.harness import Harness
from .engine.instructions import Instruction
from .engine.kinds import TaskKind
from .engine.reports import ReportCallback
from .errors import EncryptionUnsupported
from .models.protocol import Model
from .settings import Settings
from .storage.protocol import Storage
from .storage.sqlite.store import SQLiteStorage, Synchronous
from .tools import DepsT, Tool


def open_harness(
    storage: Storage | str | os.PathLike[str],
    *,
    model: Model,
    tools: Iterable[Tool] = (),
    settings: Settings | None = None,
    clock: Clock | None = None,
    report: ReportCallback | None = None,
    synchronous: Synchronous = "EXTERNAL",
    kinds: Iterable[TaskKind] = (),
    deps: DepsT = None,  # type: ignore[assignment]  # None for a harness without dependencies
    instructions: Iterable[Instruction] = (),
    output: Any = None,
    encryption_key: bytes | str | None = None,
) -> Harness[DepsT]:
    """A harness on `storage` (a session file path, or a `Storage`). Use as `async with`.

    Opening refuses a file that another process owns (`SessionLocked`), a newer schema
    (`SchemaTooNew`) and a file that is not a session (`NotASession`), changing nothing in it.
    `synchronous` says when commits reach the disk: "EXTERNAL" (the default) before anything
    outside the process depends on them (a request sent, a tool started, a caller answered),
    "FULL" at every commit, "NORMAL" only at checkpoints (see docs/guarantees.md). `kinds`
    adds task kinds of the host's own (`durable.TaskKind` subclasses) to the standard ones; start
    their tasks with `Harness.start_task`. A kind whose name is taken is a `HarnessError`. `deps`
    is handed to tools (`ToolContext.deps`) and instruction sections (`PrepareContext.deps`) and
    never stored: `open_harness(..., deps=db)` gives a `Harness[type of db]`.

    `instructions`: sections of the system prompt after `settings.system_prompt`, each a string
    or an async function of a `durable.PrepareContext` returning one; with such a function, each
    run assembles its instructions in its `prepare` phase and commits the text (a retried attempt
    sends the same; a new run assembles them afresh). `output`: a type every input is answered as
    unless its `submit(..., output=)` says otherwise (structured output).

    `encryption_key` (a session file path only; the `encryption` extra): the file's bodies are
    stored encrypted (AES-GCM, a key per file derived from this one: `durable.storage.sealing`);
    an encrypted file opened without its key, or with another, is `WrongKey` and left unchanged;
    a key with a `Storage` object is `EncryptionUnsupported` (a `PostgresStorage` takes its own
    `encryption_key`; `MemoryStorage` cannot encrypt)."""
    from .tasks import default_kinds

    if not isinstance(storage, (str, os.PathLike)):
        if encryption_key is not None:  # a store is given its key when it is made (`storage.sealing`)
            name = type(storage).__name__
            how = ("takes its key itself: PostgresStorage(dsn, space, encryption_key=...)" if name == "PostgresStorage"
                   else "cannot encrypt (session files and PostgreSQL spaces can)")
            raise EncryptionUnsupported(f"encryption_key is for a session file path: {name} {storage.location} {how}; "
                                        f"nothing was opened", location=storage.location)
        store = storage
    else:
        store = SQLiteStorage(storage, synchronous=synchronous, encryption_key=encryption_key)
    standard, runs = default_kinds()
    return Harness(store, model=model, kinds=[*standard, *kinds], runs=runs, tools=tools, settings=settings,
                   clock=clock, report=report, deps=deps, instructions=instructions, output=output)
