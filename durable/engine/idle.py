"""Model contexts of idle conversations, dropped from memory and read back on demand.

A conversation's model context is loaded once per process and then kept up to date by its commits
(`durable.engine.session.Session.load_context`). A process holding many conversations would keep
every context it ever used: `IdleContexts` remembers when each was last used (the requests of a
run read it) and drops the contexts of conversations that have been idle (no run, no queued
input, no live task) for `Settings.keep_idle_context` seconds, checked whenever a context is
used. A dropped context is read back from the store, as in a fresh process, the next time the
conversation runs. Nothing is dropped while a commit refused for a passing cause waits to be sent
again (the store may not hold all of the head yet).
"""

from __future__ import annotations

from collections.abc import Callable

from .head import Head


class IdleContexts:
    """When each loaded context was last used, oldest first (see the module docstring)."""

    __slots__ = ("_used", "keep", "now")

    def __init__(self, now: Callable[[], float], keep: float | None = 60.0) -> None:
        self.now = now
        self.keep = keep  # seconds an idle conversation keeps its context; None: for ever
        self._used: dict[str, float] = {}  # conversation id -> last use, in order of use

    def used(self, session: Head, conversation_id: str, *, hold: bool = False) -> None:
        """The context of `conversation_id` is in use now: drop those idle for too long (none
        while `hold`: a refused commit waits to be sent again)."""
        now = self.now()
        self._used.pop(conversation_id, None)
        self._used[conversation_id] = now
        if self.keep is None or hold:
            return
        cutoff = now - self.keep
        used = self._used
        busy: set[str] | None = None
        # Oldest first, up to the first used since the cutoff, or this one (always there, before
        # any put back below): O(1) when none is due.
        while True:
            cid = next(iter(used))
            if used[cid] > cutoff or cid == conversation_id:
                return
            del used[cid]
            conv = session.convs.get(cid)
            if conv is None or not conv.context_loaded:
                continue
            if busy is None:
                busy = {t.conversation_id for t in session.tasks.values()}
            if conv.live.busy or conv.queued or cid in busy or cid in session.deleting:
                used[cid] = now  # not idle: looked at again after another `keep` seconds
                continue
            conv.unload()


__all__ = ["IdleContexts"]
