"""The codec's hooks taken from the checked-in source (`durable._codec_hooks`, written by
`scripts/codec_hooks.py`) instead of generated and compiled by cattrs in every process: used only
when the installed cattrs is the one they were written from and the class's fields are the same."""

from __future__ import annotations

import functools
import os
from typing import Any

import attrs
import cattrs
from cattrs.gen._lc import generate_unique_filename

from ._codec_hooks import CATTRS, HOOKS


@functools.cache
def _same_cattrs() -> bool:
    """Whether the cattrs installed is the one the hooks were written from (its dist-info folder
    next to it: one stat); with any other, cattrs makes every hook."""
    site = os.path.dirname(os.path.dirname(cattrs.__file__))
    return os.path.isdir(os.path.join(site, f"cattrs-{CATTRS}.dist-info"))


def written_hook(kind: str, cls: Any, conv: Any) -> Any:
    """The hook of `kind` ("unstructure", "structure", or "variant": the structure hook of a
    tagged union's member, which allows the tag) of `cls` for the fast converter `conv`, or None:
    no hook written for the class, or its fields changed since. The function cattrs would make,
    without generating and compiling its source; the source is kept in `linecache` under cattrs'
    name for it, as cattrs does (`durable._json_text` reads it there)."""
    found = HOOKS.get((kind, f"{cls.__module__}.{cls.__qualname__}"))
    if found is None or not _same_cattrs():
        return None
    factory, fields, source = found
    if tuple(a.name for a in attrs.fields(cls)) != fields:
        return None
    hook = factory(conv, cls)
    filename = generate_unique_filename(cls, "unstructure" if kind == "unstructure" else "structure",
                                        lines=source.split("\n"))
    hook.__code__ = hook.__code__.replace(co_filename=filename, co_firstlineno=1)
    return hook


__all__ = ["written_hook"]
