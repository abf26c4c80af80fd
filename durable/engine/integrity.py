"""The background integrity check of a harness's store: run once per harness (later callers wait
for that run), its problems reported in plain words (`ErrorReport`, topic `storage`) rather than
silently used. `Harness.check_integrity` runs it; a resumed harness starts it a second after it
resumed unless `settings.check_integrity` is False.
"""

from __future__ import annotations

import anyio

from ..errors import StorageError
from ..storage.protocol import Storage
from .reports import ErrorReport, Reporter


class IntegrityCheck:
    """One harness's check: its problems once run (None before), and the event later callers wait on."""

    def __init__(self) -> None:
        self.problems: list[str] | None = None
        self._done: anyio.Event | None = None

    async def run(self, storage: Storage, report: Reporter) -> list[str]:
        """Check `storage` (once) and return its problems, reported when there are any."""
        if self._done is not None:
            await self._done.wait()
            return list(self.problems or [])
        self._done = anyio.Event()
        try:
            problems = await storage.check_integrity()
        except StorageError:
            problems = []  # the file cannot even be read to check it: its commits will say why
        finally:
            self._done.set()
        self.problems = problems
        if problems:
            shown = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
            report(ErrorReport(f"Session file {storage.location} is damaged: {shown}. Runs that read the damaged "
                               f"records end unanswered (storage_error); copy what you need and start a new "
                               f"session file.", raw=problems, topic="storage"))
        return list(problems)


__all__ = ["IntegrityCheck"]
