"""The attachments a prune deletes (docs/spec.md §6): those no remaining row references.

Attachments (`durable.records.content`) are stored once per session by hash and shared by every
conversation, fork and tool result that holds the same bytes, so deleting a conversation cannot
delete its attachments: after its rows are gone, a *sweep* deletes every attachment that no row
left in the store references (a reference sweep; no reference counts are kept). A row references
an attachment by its hash in its JSON body (`"sha256":"<hex>"`); a sweep reads every body that may
hold one (`MARK`, or sealed) and keeps each hash it finds, anywhere in the body: a text that
happens to quote a hash keeps it too (kept, never lost).

A sweep step is one transaction on the store's writer: it reads the references and deletes at
most `limit` unreferenced attachments in the same transaction, so an attachment referenced by a
commit of the owner (which writes its bytes again, `INSERT ... DO NOTHING`) is never deleted. A
crash between steps leaves a consistent store (an unreferenced attachment is only garbage); the
next prune, or the next open that finishes a prune, sweeps it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MARK = '"sha256"'
"""What every body referencing an attachment holds (a quick filter before the search)."""

_REF = re.compile(r'"sha256"\s*:\s*"([0-9a-f]{64})"')


def referenced(bodies: Iterable[str]) -> set[str]:
    """The hashes of the attachments `bodies` (plain JSON texts) reference."""
    found: set[str] = set()
    for body in bodies:
        if MARK in body:
            found.update(_REF.findall(body))
    return found


def unreferenced(stored: Iterable[str], kept: set[str], limit: int) -> list[str]:
    """At most `limit` of the `stored` keys that are not in `kept`, in key order."""
    return sorted(k for k in stored if k not in kept)[:limit]


__all__ = ["MARK", "referenced", "unreferenced"]
