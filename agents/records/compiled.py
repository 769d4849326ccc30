"""Code generated for each record class, as attrs generates ``__init__`` and for the same
reason, speed: constructors that skip ``__init__`` for values already converted
(``maker``, ``updater``, ``_evolve``), and the source of the codec's per-class encoders and
decoders (``encoding``, ``decoding``), straight-line code instead of a loop over fields.
Generated source is registered with linecache, so tracebacks show it.
"""

from __future__ import annotations

import enum
import itertools
import linecache
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, TypeVar, Union

import attrs
from pyrsistent import PMap, PVector, pvector

from agents.errors import InvalidType
from agents.records.frozen import (
    EMPTY_MAP,
    EMPTY_VECTOR,
    History,
    deep_freeze,
    to_float,
    to_history,
    to_optional_pvector,
    to_pmap,
    to_pvector,
)
from agents.records.json_text import exact_or_refuse
from agents.records.registry import RECORD, RECORDS_BY_TYPE, SHARED, data_fields, field_plan, hints

__all__ = [
    "IDEMPOTENT",
    "DecoderSource",
    "compiled",
    "element_of",
    "is_pvector",
    "make_evolve",
    "maker",
    "optional_of",
    "plain_init",
    "slot_setter",
    "updater",
    "value_kind",
]

R = TypeVar("R")
_UNSET: Any = object()
_JSON_SCALARS: Final = frozenset({str, int, bool, type(None)})  # frozen as they are
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


def _building(cls: type, value: Callable[[str], str], indent: str) -> list[str]:
    """Lines of generated code making ``new``, a ``cls`` whose field ``f`` is set to the
    expression ``value(f)`` through ``_set_f``, the slot descriptor's own setter
    (``_building_names`` gives what they call)."""
    lines = [f"{indent}new = _new(_cls)"]
    lines += [f"{indent}_set_{field.name}(new, {value(field.name)})" for field in attrs.fields(cls)]
    return lines


def _building_names(cls: type) -> dict[str, Any]:
    """What ``_building``'s lines call, by name."""
    names = {f"_set_{field.name}": slot_setter(cls, field.name) for field in attrs.fields(cls)}
    return {"_new": object.__new__, "_cls": cls, **names}


def _generate(cls: type, name: str, params: str, value: Callable[[str], str]) -> Callable[..., Any]:
    """Compile ``def <name>(<params>)`` building a new ``cls`` whose field ``f`` is set to
    the expression ``value(f)``, like attrs generates ``__init__``, for the same reason:
    speed. Helpers are closure variables (cheaper to read than globals), and fields are set
    through the slot descriptors' own setters, which bypass the frozen ``__setattr__``."""
    helpers = _building_names(cls)
    body = "\n".join(_building(cls, value, " " * 8))
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
    """``_evolve(self, **changes)``: a copy of a ``cls`` with the given fields replaced."""
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
        raise InvalidType(f"{cls.__name__} has no fields {sorted(unknown)}")
    params = ", ".join(("self", *changed))
    return _generate(cls, "update", params, lambda f: f if f in changed else f"self.{f}")


# -- annotations ------------------------------------------------------------------------------


def is_pvector(origin: Any) -> bool:
    """Whether a generic origin is pyrsistent's ``PVector``."""
    return origin is PVector or getattr(origin, "__name__", "") == "PVector"


def element_of(annotation: Any) -> Any:
    """The element type of a sequence annotation, or ``None`` when it is not one."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is History or is_pvector(origin):
        return args[0]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    return None


def optional_of(annotation: Any) -> Any:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        return next(arg for arg in args if arg is not type(None))
    return None


def value_kind(annotation: Any) -> str:
    """How the codec writes a value a field of ``annotation`` holds (an optional one's
    inner annotation: ``optional_of``): ``"plain"`` (text, integers and booleans as they
    are), ``"datetime"``, ``"enum"`` (its value), ``"record"`` (by the class it holds),
    ``"records"`` (a sequence of them), ``"map"`` (a plain map, secrets redacted) or
    ``"any"`` (by what it holds). The encoders' code and the matchers' follow it."""
    if annotation is str or annotation is int or annotation is bool:
        return "plain"
    if annotation is datetime:
        return "datetime"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "enum"
    if annotation in RECORDS_BY_TYPE:
        return "record"
    if element_of(annotation) in RECORDS_BY_TYPE:
        return "records"
    origin = typing.get_origin(annotation)
    if origin in (Mapping, dict, PMap) or getattr(origin, "__name__", "") == "PMap":
        return "map"
    return "any"


# -- decoders -----------------------------------------------------------------------------------

IDEMPOTENT: Final = frozenset(
    {to_pmap, to_pvector, to_optional_pvector, to_history, deep_freeze, to_float}
)
"""Converters that give back what the field decoders give them (already converted)."""


def plain_init(cls: type) -> tuple[dict[str, Any], list[Any]] | None:
    """Each field's default (converted) and the fields with validators, when
    ``cls.__init__`` does nothing to decoded values but set them and validate them — no
    ``__attrs_post_init__``, no factories, converters that leave them as they are — so a
    decoder may build the record without it; else ``None``."""
    if hasattr(cls, "__attrs_post_init__"):
        return None
    defaults: dict[str, Any] = {}
    validated = []
    for field in attrs.fields(cls):
        if isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            return None
        if field.converter is not None and field.converter not in IDEMPOTENT:
            return None
        default = field.default
        if default is not attrs.NOTHING and field.converter is not None:
            default = field.converter(default)
        defaults[field.name] = default
        if field.validator is not None:
            validated.append(field)
    return defaults, validated


class DecoderSource:
    """The source of ``decode(value, path, context)`` for one record class: the optimistic
    first pass in straight-line code — each field checked inline where a check is cheap,
    by its general decoder otherwise — and the general decoder wherever it doubts. Where
    ``context.consume`` says the data is the decoder's own, the object a record was built
    from is emptied there and then (``decoding._read``).

    The caller's ``namespace`` holds what the code calls: ``_general(value, path, context,
    cls)``, ``_Bad`` (the error), ``_ref`` (a ``MessagesRef``) and ``_DEC`` (compiled
    decoders by class); each field's general decoder is put there from ``general``. A
    record is built as ``maker`` builds one, inline (no call): its fields set through the
    slots' own setters, its validators run."""

    def __init__(self, cls: type, general: dict[str, Any], namespace: dict[str, Any]) -> None:
        self.cls, self.general, self.namespace = cls, general, namespace
        self.annotations = hints(cls)
        self.fields = {field.name: field for field in data_fields(cls)}
        self.plain = plain_init(cls)
        namespace.update(
            _cls=cls,
            _history=to_history,
            _pvector=pvector,
            _EMPTY=EMPTY_VECTOR,
            _NO_MAP=EMPTY_MAP,
            _SCALARS=_JSON_SCALARS,
            _dumps=exact_or_refuse,
        )
        if self.plain is not None:
            defaults, validated = self.plain
            namespace.update(_building_names(cls))
            namespace.update({f"_default_{name}": value for name, value in defaults.items()})
            namespace.update({f"_check_{field.name}": field.validator for field in validated})
            namespace.update({f"_field_{field.name}": field for field in validated})

    def source(self) -> str:
        name = self.cls.__name__
        plan = field_plan(self.cls)
        required = [field for field in plan if not field.optional]
        lines = [
            "def decode(value, path, context):",
            f"    if not context.paths and type(value) is dict and value.get('kind') == {name!r}:",
        ]
        shared = name in SHARED
        if shared:  # a repeat: the record decoded before (its key: ``json_text.exact``)
            lines += [
                "        try:",
                "            key = _dumps(value)",
                "        except TypeError:  # orjson's refusal too",
                "            key = None",
                "        if key is not None:",
                "            found = context.shared.get(key)",
                "            if found is not None:",
                "                return found",
            ]
        lines += ["        size = len(value)", "        try:"]
        lines += [f"            if size == {len(plan) + 1}:", *self._build(list(plan))]
        if len(required) != len(plan):
            lines += [f"            elif size == {len(required) + 1}:", *self._build(required)]
        lines += [
            "            else:",
            "                new = None",
            "        except (KeyError, TypeError, ValueError):",
            f"            raise _Bad('invalid {name}', path) from None",
            "        if new is not None:",
        ]
        if shared:
            lines += [
                "            if key is not None:",
                "                context.shared[key] = new",
            ]
        lines += [
            "            if context.consume:",
            "                value.clear()",
            "            return new",
            "    return _general(value, path, context, _cls)",
        ]
        return "\n".join(lines)

    def _build(self, chosen: list[Any]) -> list[str]:
        indent = " " * 16
        lines = []
        for index, field in enumerate(chosen):
            lines.append(f"{indent}x = value[{field.name!r}]")
            lines.append(f"{indent}a{index} = {self._value(index, field)}")
        given = {field.name: f"a{index}" for index, field in enumerate(chosen)}
        if self.plain is None:
            arguments = ", ".join(f"{name}={value}" for name, value in given.items())
            return [*lines, f"{indent}new = _cls({arguments})"]
        validated = self.plain[1]  # __init__ would only set and check: do it here
        lines += _building(self.cls, lambda name: given.get(name, f"_default_{name}"), indent)
        for field in validated:
            name = field.name
            lines.append(f"{indent}_check_{name}(new, _field_{name}, new.{name})")
        return lines

    def _value(self, index: int, field: Any) -> str:
        """An expression for field ``index`` decoded from ``x``."""
        decoder = f"_d{index}"
        self.namespace[decoder] = self.general[field.name]
        general = f"{decoder}(x, path, context)"
        annotation = self.annotations[field.name]
        held = optional_of(annotation) or annotation
        if self.fields[field.name].metadata.get(RECORD) is not None:  # named: decoded late
            optional = self.fields[field.name].default is None
            code = f"(None if x is None else {general})" if optional else general
        elif held in RECORDS_BY_TYPE:  # straight to its compiled decoder
            self.namespace[f"{decoder}_cls"] = held
            code = f"_DEC[{decoder}_cls](x, path, context)"
            if held is not annotation:
                code = f"(None if x is None else {code})"
        else:
            code = self._checked(annotation, decoder, general)
        if field.messages_ref:
            code = (
                "(_ref(x, path, context) if type(x) is dict and x.get('kind') == "
                f"'MessagesRef' else {code})"
            )
        return code

    def _checked(self, annotation: Any, decoder: str, general: str) -> str:
        """The value itself when an inline check passes (the common case), else the
        field's general decoder (which converts or raises)."""
        if annotation is Any:  # text, an integer, a flag or null as it is
            return f"(x if type(x) in _SCALARS else {general})"
        if annotation in (str, bool, int):
            return f"(x if type(x) is {annotation.__name__} else {general})"
        if annotation in (str | None, int | None):
            inner = optional_of(annotation).__name__
            return f"(x if x is None or type(x) is {inner} else {general})"
        if annotation is float:  # x - x is 0.0 for finite floats only
            return f"(x if type(x) is float and x - x == 0.0 else {general})"
        if annotation is datetime:  # a text ``fromisoformat`` reads, with its offset
            self.namespace["_fromiso"] = datetime.fromisoformat
            return f"(t if type(x) is str and (t := _fromiso(x)).tzinfo is not None else {general})"
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            members = {member.value: member for member in annotation}
            if all(type(value) is str for value in members):
                self.namespace[f"{decoder}_members"] = members
                return f"({decoder}_members[x] if x in {decoder}_members else {general})"
        origin = typing.get_origin(annotation)
        if origin in (Mapping, dict, PMap) or getattr(origin, "__name__", "") == "PMap":
            return f"(_NO_MAP if type(x) is dict and not x else {general})"
        element = element_of(annotation)
        if element not in RECORDS_BY_TYPE:
            return f"(None if x is None else {general})" if optional_of(annotation) else general
        self.namespace[f"{decoder}_cls"] = element
        items = f"[d(i, path, context) for d in (_DEC[{decoder}_cls],) for i in x]"
        if is_pvector(origin):
            return f"((_pvector({items}) if x else _EMPTY) if type(x) is list else {general})"
        if origin is History:
            return f"(_history({items}) if type(x) is list else {general})"
        return general
