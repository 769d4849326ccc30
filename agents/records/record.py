"""What every record shares: the codec methods and a fast internal copy.

Records are ``@attrs.frozen(kw_only=True)`` classes deriving from ``Record``; defining one
registers it with the codec under its class name (its ``kind``). ``_evolve`` is a
slot-copying constructor generated once per class on first use; the ``with_*`` methods use
it because ``attrs.evolve`` re-runs every converter and costs several microseconds per call
(FACTS.md). It skips converters, so it only receives values that are already converted.
"""

from __future__ import annotations

import itertools
import linecache
from collections.abc import Callable
from typing import Any, Self, TypeVar

import attrs

from agents.records import codec

__all__ = ["Record", "maker", "slot_setter", "updater"]

_UNSET: Any = object()
_SERIAL = itertools.count(1)
R = TypeVar("R")


class Record:
    """Base of every record: serialization through the codec (SPEC §9) and ``_evolve``."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if attrs.has(cls):  # attrs's final class (with slots), not the one it was made from
            codec.register(cls)

    def _evolve(self, **changes: Any) -> Self:
        """Copy with the given fields replaced, skipping converters (internal)."""
        cls = type(self)
        evolve = _make_evolve(cls)
        cls._evolve = evolve  # type: ignore[method-assign]
        return evolve(self, **changes)  # type: ignore[no-any-return]

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON-able data, tagged with ``kind`` and ``schema_version``."""
        return codec.to_dict(self)

    def to_json(self) -> str:
        """The record as compact JSON text; ``json.loads(to_json()) == to_dict()``."""
        return codec.to_json(self)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Rebuild a record from ``to_dict`` output; ``StateDecodeError`` names a bad field."""
        return codec.from_dict(data, cls)

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Rebuild a record from ``to_json`` output."""
        return codec.from_json(text, cls)


def slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The slot descriptor's own setter for ``cls.name``: it bypasses the frozen
    ``__setattr__`` and needs no attribute lookup by name (for internal constructors)."""
    setter: Callable[[Any, Any], None] = getattr(cls, name).__set__
    return setter


def _generate(cls: type, name: str, params: str, value: Callable[[str], str]) -> Callable[..., Any]:
    """Compile ``def <name>(<params>)`` building a new ``cls`` whose field ``f`` is set to
    the expression ``value(f)``, like attrs generates ``__init__``, for the same reason:
    speed. Helpers are closure variables (cheaper to read than globals), and fields are set
    through the slot descriptors' own setters, which bypass the frozen ``__setattr__``."""
    names = [field.name for field in attrs.fields(cls)]
    body = "\n".join(f"        _set_{field}(new, {value(field)})" for field in names)
    setters = ", ".join(f"_set_{field}" for field in names)
    source = (
        f"def factory(_UNSET, _new, _cls, {setters}):\n"
        f"    def {name}({params}):\n"
        f"        new = _new(_cls)\n{body}\n"
        "        return new\n"
        f"    return {name}\n"
    )
    # Registered with linecache, as attrs does for its generated methods, so that tracebacks
    # and debuggers show the source instead of "<string>".
    filename = f"<agents generated {name} {cls.__module__}.{cls.__qualname__} {next(_SERIAL)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), namespace)
    setter_values = [slot_setter(cls, field) for field in names]
    function: Callable[..., Any] = namespace["factory"](_UNSET, object.__new__, cls, *setter_values)
    return function


def _make_evolve(cls: type) -> Any:
    names = [field.name for field in attrs.fields(cls)]
    params = "self, *, " + ", ".join(f"{field}=_UNSET" for field in names)
    return _generate(cls, "_evolve", params, lambda f: f"self.{f} if {f} is _UNSET else {f}")


def maker(cls: type[R]) -> Callable[..., R]:
    """A positional constructor taking every field in declaration order, skipping
    ``__init__`` (no converters, no validators): for the loop's hot path, where the values
    are already converted. Call sites pass all fields, so a changed field list fails loudly.
    """
    names = [field.name for field in attrs.fields(cls)]  # type: ignore[arg-type]
    return _generate(cls, "make", ", ".join(names), lambda f: f)


def updater(cls: type[R], *changed: str) -> Callable[..., R]:
    """``update(record, *values)``: a copy of ``record`` with the ``changed`` fields set to
    ``values`` (positionally), for hot paths that always change the same fields."""
    names = {field.name for field in attrs.fields(cls)}  # type: ignore[arg-type]
    unknown = set(changed) - names
    if unknown:
        raise TypeError(f"{cls.__name__} has no fields {sorted(unknown)}")
    params = ", ".join(("self", *changed))
    return _generate(cls, "update", params, lambda f: f if f in changed else f"self.{f}")
