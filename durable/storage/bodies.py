"""The bodies of a batch as a SQL store writes them (after `rows.written_texts`, which compares
the plain rows with what the store holds): long ones packed in a plain file
(`durable.storage.packing`; SQLite only), every one sealed in an encrypted file
(`durable.storage.sealing`; not packed: a sealed row's length would say how well its text
compressed). A read opens, then unpacks (`sealing.plain`: a row packed before the file was
first encrypted stays packed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._frozen import evolve
from . import sealing, texts as texts_
from .packing import pack
from .rows import EncodedBatch


def _each_body(rows: EncodedBatch, change: Callable[[str], str], **more: Any) -> EncodedBatch:
    """`rows` with `change` applied to the body of each task, entry, submission and live document."""
    return evolve(
        rows,
        tasks=tuple([t._replace(body=change(t.body)) for t in rows.tasks]),
        entries=tuple([(c, s, k, change(b), n) for c, s, k, b, n in rows.entries]),
        submissions=tuple([(i, c, st, change(b)) for i, c, st, b in rows.submissions]),
        live=tuple([(c, change(b), t) for c, b, t in rows.live]),
        **more,
    )


def packed(rows: EncodedBatch) -> EncodedBatch:
    """`rows` with their long bodies packed (`durable.storage.packing.pack`); pieces of long texts
    are never packed."""
    return _each_body(rows, pack)


def sealed(rows: EncodedBatch, puts: list[texts_.Put],
           sealer: sealing.Sealer) -> tuple[EncodedBatch, list[texts_.Put]]:
    """`rows` and `puts` as written to an encrypted file: every body, piece and attachment sealed
    (`durable.storage.sealing`; an attachment under its keyed id), index columns plain."""
    seal = sealer.seal
    attachments = tuple([(sealer.attachment_id(sha), media_type, size, sealer.seal_bytes(data))
                         for sha, media_type, size, data in rows.attachments])
    return _each_body(rows, seal, attachments=attachments), [(key, seal(text)) for key, text in puts]


__all__ = ["packed", "sealed"]
