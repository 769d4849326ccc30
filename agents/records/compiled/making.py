"""The generated constructors of record classes, which skip ``__init__`` for values already
converted (``maker``, ``updater``, ``replace_fields``; ``registry.settable_fields``), and
``compiled``, the one place that compiles generated source."""

from __future__ import annotations

import itertools
import linecache
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

import attrs

from agents.errors import InvalidType

__all__ = [
    "JSON_SCALARS",
    "building",
    "building_names",
    "compiled",
    "differ",
    "make_evolve",
    "maker",
    "replace_fields",
    "slot_setter",
    "updater",
]

R = TypeVar("R")
_UNSET: Any = object()
JSON_SCALARS: Final = frozenset({str, int, bool, type(None)})  # frozen as they are
_SERIAL = itertools.count(1)


def compiled(
    source: str, namespace: dict[str, Any], cls: type, name: str, title: str | None = None
) -> Any:
    """``def name`` compiled from ``source`` in ``namespace``, its source registered with
    linecache (as attrs does for its generated methods) so that tracebacks and debuggers
    show it instead of "<string>"; ``title`` (else ``name``) names it there."""
    label = f"{title or name} {cls.__module__}.{cls.__qualname__}"
    filename = f"<agents generated {label} {next(_SERIAL)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    function = namespace[name]
    function.__qualname__ = f"{cls.__name__}.{name}"
    return function


# -- constructors ---------------------------------------------------------------------------


def slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The slot descriptor's own setter for ``cls.name``: it bypasses the frozen
    ``__setattr__`` and needs no attribute lookup by name (for internal constructors)."""
    setter: Callable[[Any, Any], None] = getattr(cls, name).__set__
    return setter


def building(cls: type, value: Callable[[str], str], indent: str) -> list[str]:
    """Lines of generated code making ``new``, a ``cls`` whose field ``f`` is set to the
    expression ``value(f)`` through ``_set_f``, the slot descriptor's own setter
    (``building_names`` gives what they call)."""
    lines = [f"{indent}new = _new(_cls)"]
    lines += [f"{indent}_set_{field.name}(new, {value(field.name)})" for field in attrs.fields(cls)]
    return lines


def building_names(cls: type) -> dict[str, Any]:
    """What ``building``'s lines call, by name."""
    names = {f"_set_{field.name}": slot_setter(cls, field.name) for field in attrs.fields(cls)}
    return {"_new": object.__new__, "_cls": cls, **names}


def _generate(cls: type, name: str, params: str, value: Callable[[str], str]) -> Callable[..., Any]:
    """Compile ``def <name>(<params>)`` building a new ``cls`` whose field ``f`` is set to
    the expression ``value(f)``, like attrs generates ``__init__``, for the same reason:
    speed. Helpers are closure variables (cheaper to read than globals), and fields are set
    through the slot descriptors' own setters, which bypass the frozen ``__setattr__``."""
    helpers = building_names(cls)
    body = "\n".join(building(cls, value, " " * 8))
    source = (
        f"def factory(_UNSET, {', '.join(helpers)}):\n"
        f"    def {name}({params}):\n{body}\n"
        "        return new\n"
        f"    return {name}\n"
    )
    factory = compiled(source, {}, cls, "factory", name)
    function: Callable[..., Any] = factory(_UNSET, *helpers.values())
    return function


def make_evolve(cls: type) -> Any:
    """``evolve(self, **changes)``: a copy of a ``cls`` with the given fields replaced,
    skipping ``__init__`` (``replace_fields`` calls it)."""
    names = [field.name for field in attrs.fields(cls)]
    params = "self, *, " + ", ".join(f"{field}=_UNSET" for field in names)
    return _generate(cls, "_evolve", params, lambda f: f"self.{f} if {f} is _UNSET else {f}")


class _Replacers(dict[type, Callable[..., Any]]):
    """Each record class's generated copy (``make_evolve``), made when first asked for."""

    def __missing__(self, cls: type) -> Callable[..., Any]:
        found: Callable[..., Any] = make_evolve(cls)
        self[cls] = found
        return found


_REPLACERS: Final = _Replacers()


def replace_fields(record: R, **changes: Any) -> R:
    """A copy of ``record`` with the given fields replaced, **skipping ``__init__``**: no
    converter and no validator runs, so every value must already be what the field holds
    (a ``PMap``, not a ``dict``; a ``History``, not a ``list``). The library's ``with_*``
    methods and transitions use it because ``attrs.evolve`` runs every converter again,
    several microseconds a call; for a value not known to be converted, use
    ``attrs.evolve``."""
    copy: R = _REPLACERS[type(record)](record, **changes)
    return copy


def maker(cls: type[R]) -> Callable[..., R]:
    """A positional constructor taking every field in declaration order, skipping
    ``__init__`` (no converters, no validators): for the loop's hot path, where the values
    are already converted. Call sites pass all fields, so a changed field list fails loudly.
    """
    names = [field.name for field in attrs.fields(cast(Any, cls))]
    return _generate(cls, "make", ", ".join(names), lambda f: f)


def updater(cls: type[R], *changed: str) -> Callable[..., R]:
    """``update(record, *values)``: a copy of ``record`` with the ``changed`` fields set to
    ``values`` (positionally), for hot paths that always change the same fields."""
    names = {field.name for field in attrs.fields(cast(Any, cls))}
    unknown = set(changed) - names
    if unknown:
        raise InvalidType(f"{cls.__name__} has no fields {sorted(unknown)}")
    params = ", ".join(("self", *changed))
    return _generate(cls, "update", params, lambda f: f if f in changed else f"self.{f}")


def differ(cls: type, names: tuple[str, ...]) -> Callable[[Any, Any], list[str]]:
    """``differing(new, old)``: which of the fields ``names`` of two ``cls`` records hold
    values that are not the same object (persistent records share what did not change),
    in order: straight-line code, a comparison a field, where a loop over the fields costs
    twice as much (what an audit record's changes are found by)."""
    lines = ["def differing(new, old):", "    found = []"]
    for name in names:
        lines += [f"    if new.{name} is not old.{name}:", f"        found.append({name!r})"]
    differing: Callable[[Any, Any], list[str]] = compiled(
        "\n".join([*lines, "    return found", ""]), {}, cls, "differing"
    )
    return differing
