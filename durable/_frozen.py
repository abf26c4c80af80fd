"""`frozen` and `define`: attrs' own decorators, compiling less per record class at import (most of
the cost of defining a class is compiling the methods attrs writes for it, and a process that
recovers a session defines some ninety record classes, most never compared or hashed).

- `__repr__`: attrs is asked for none; each class gets a closure (nothing compiled) writing the
  text attrs' would (`ClassName(a=1, b='x')`; `repr=False`/`repr=` honoured; `...` for a value
  met again inside its own repr: attrs' recursion guard, one set of ids per thread).
- `__eq__` / `__hash__` (frozen classes): attrs is asked for none; stubs compile the code attrs
  writes (`eq=False` fields left out, `eq=` key functions applied; `hash((class constant,
  fields...))`) on the class's first comparison or hash, install it and answer with it. `!=` is
  attrs' rule (the negated `__eq__`, NotImplemented passed on). The hash is consistent with
  equality and, like attrs', not the same across processes.
- A class that writes its own method, or asks for `repr=` / `eq=` / `order=` / hashing options
  explicitly, is left to attrs for that method.

`evolve(inst, **changes)` is `attrs.evolve` (a copy through the class's `__init__`, fields changed
by their `__init__` names; an unknown name is a `TypeError` naming it), reading the field values
in one C call and passing them by position; nothing is compiled. A class with a keyword-only or
`init=False` field is left to `attrs.evolve`. The methods attrs writes (`__init__`) of durable's
classes are checked in (`durable._attrs_methods`): made from there, not compiled.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Mapping
from types import FunctionType, MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import attr._make
import attrs

from ._attrs_methods import METHODS

if TYPE_CHECKING:
    from attrs import define as define, frozen as frozen
else:

    def frozen(maybe_cls=None, /, **kwargs):
        return _decorate(attrs.frozen, maybe_cls, kwargs)

    def define(maybe_cls=None, /, **kwargs):
        return _decorate(attrs.define, maybe_cls, kwargs)


T = TypeVar("T")


_ORIGINAL_COMPILE = getattr(attr._make, "_linecache_and_compile", None)
_SWAP = threading.RLock()


def _checked_in_compile(script: str, filename: str, globs: Any, locals: Any = None) -> Any:
    """attrs' `_linecache_and_compile(script, filename, globs)` (defines the functions of `script`
    in `globs` and returns them), taking a checked-in `script`'s functions from
    `durable._attrs_methods` instead of compiling it; any other script is left to attrs."""
    factory = METHODS.get(script)
    if factory is None or locals is not None or not isinstance(globs, dict):
        return _ORIGINAL_COMPILE(script, filename, globs, locals)  # type: ignore[misc]  # not None: swapped in only then
    return FunctionType(factory.__code__, globs)()


def _made(maker: Any, cls: type, options: dict[str, Any]) -> type:
    """`maker(cls, **options)`, attrs taking the methods it writes from the checked-in source
    while it makes this class only: attrs' private function is swapped for that call (under a
    lock) and put back, so no class of another library or of the host is ever made through it.
    An attrs without that function makes the class itself."""
    made: type
    if _ORIGINAL_COMPILE is None:
        made = maker(cls, **options)
        return made
    with _SWAP:
        attr._make._linecache_and_compile = _checked_in_compile
        try:
            made = maker(cls, **options)
        finally:
            attr._make._linecache_and_compile = _ORIGINAL_COMPILE
    return made

OMITTED_WHEN_DEFAULT: Mapping[str, bool] = MappingProxyType({"durable_omit_default": True})
"""Field metadata (`field(default=0, metadata=OMITTED_WHEN_DEFAULT)`): the codec writes the field
only when its value differs from its default, and reads its absence as the default. A field added
to a record every commit rewrites (a checkpoint, the live document) then costs no byte until it
is used, and a file written without it reads the same."""

_evolvers: dict[type, Callable[[Any, dict[str, Any]], Any]] = {}


def evolve(inst: T, /, **changes: Any) -> T:
    """A copy of the attrs instance `inst` with `changes` (see the module docstring)."""
    make = _evolvers.get(inst.__class__)
    if make is None:
        make = _evolvers[inst.__class__] = _evolver(inst.__class__)
    result: T = make(inst, changes)
    return result


def _evolver(cls: type) -> Callable[[Any, dict[str, Any]], Any]:
    fields = attrs.fields(cls)
    if not all(a.init and not a.kw_only for a in fields):
        return lambda inst, changes: attrs.evolve(inst, **changes)
    values = operator.attrgetter(*(a.name for a in fields)) if len(fields) > 1 else None
    position = {a.alias: i for i, a in enumerate(fields)}
    name = cls.__qualname__

    def make(inst: Any, changes: dict[str, Any]) -> Any:
        args = list(values(inst)) if values is not None else [getattr(inst, a.name) for a in fields]
        for alias, value in changes.items():
            i = position.get(alias)
            if i is None:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument {alias!r}")
            args[i] = value
        return cls(*args)

    return make


_repring = threading.local()  # `ids`: the records whose repr is being written on this thread


def _decorate(maker: Any, maybe_cls: type | None, kwargs: dict[str, Any]) -> Any:
    def wrap(cls: type) -> type:
        own = cls.__dict__
        shared_repr = "repr" not in kwargs and "__repr__" not in own
        lazy_eq = (maker is attrs.frozen and not _EQ_OPTIONS & kwargs.keys()
                   and not {"__eq__", "__ne__", "__hash__"} & own.keys())
        options = dict(kwargs)
        if shared_repr:
            options["repr"] = False
        if lazy_eq:
            options["eq"] = False
        made = _made(maker, cls, options)
        if shared_repr:
            made.__repr__ = _repr_for(made)  # type: ignore[method-assign]  # the one attrs did not write
        if lazy_eq:
            _compile_eq_and_hash_on_first_use(made)
        return made

    return wrap if maybe_cls is None else wrap(maybe_cls)


_EQ_OPTIONS = frozenset({"eq", "order", "hash", "unsafe_hash", "cache_hash"})


def _compile_eq_and_hash_on_first_use(cls: type) -> None:
    def __eq__(self: Any, other: Any) -> Any:
        return _install(cls, "__eq__")(self, other)

    def __hash__(self: Any) -> int:
        return _install(cls, "__hash__")(self)  # type: ignore[no-any-return]  # a hash() result

    for method in (__eq__, __hash__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
        setattr(cls, method.__name__, method)
    cls.__ne__ = _ne  # type: ignore[method-assign,assignment]  # attrs' own `!=`


def _ne(self: Any, other: Any) -> Any:
    """Check equality and either forward a NotImplemented or return the result negated."""
    result = self.__eq__(other)
    if result is NotImplemented:
        return NotImplemented
    return not result


def _install(cls: type, name: str) -> Any:
    """Compile `cls`'s `__eq__` or `__hash__` as attrs writes it, and put it on the class."""
    compared = [a for a in attrs.fields(cls) if a.eq]
    keys = {f"_{a.name}_key": a.eq_key for a in compared if a.eq_key}

    def value(a: Any, obj: str) -> str:
        return f"_{a.name}_key({obj}.{a.name})" if a.eq_key else f"{obj}.{a.name}"

    if name == "__eq__":
        test = " and ".join(f"{value(a, 'self')} == {value(a, 'other')}" for a in compared) or "True"
        script = (f"def __eq__(self, other):\n    if other.__class__ is not self.__class__:\n"
                  f"        return NotImplemented\n    return ({test})\n")
    else:
        hashed = [a for a in attrs.fields(cls) if a.hash is True or (a.hash is None and a.eq is True)]
        items = "".join(f" {value(a, 'self')}," for a in hashed)
        script = f"def __hash__(self):\n    return hash(({hash(f'{cls.__module__}.{cls.__qualname__}')},{items}))\n"
    namespace: dict[str, Any] = dict(keys)
    exec(compile(script, f"<durable record {name} for {cls.__qualname__}>", "exec"), namespace)
    method = namespace[name]
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, method)
    return method


def _repr_for(cls: type) -> Any:
    shown = tuple((a.name, None if a.repr is True else a.repr) for a in attrs.fields(cls) if a.repr is not False)

    def __repr__(self: Any) -> str:
        try:
            ids: set[int] = _repring.ids
        except AttributeError:
            ids = _repring.ids = set()
        if id(self) in ids:
            return "..."
        ids.add(id(self))
        try:
            parts = [f"{name}={getattr(self, name)!r}" if how is None else f"{name}={how(getattr(self, name))}"
                     for name, how in shown]
            return f'{self.__class__.__qualname__.rsplit(">.", 1)[-1]}({", ".join(parts)})'
        finally:
            ids.discard(id(self))

    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    return __repr__


__all__ = ["OMITTED_WHEN_DEFAULT", "define", "evolve", "frozen"]
