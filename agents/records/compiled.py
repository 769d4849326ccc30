"""All code generated for record classes, as attrs keeps its generators in ``_make.py``
and for the same reason, speed: constructors that skip ``__init__`` for values already
converted (``maker``, ``updater``, ``replace_fields``; ``registry.settable_fields``), and the source
of the codec's per-class encoders, checkers and decoders (``encoder_source``, ``checker_source``,
``DecoderSource``; ``encoding`` and ``decoding`` compile them with their own helpers in the
namespace), straight-line code instead of a loop over fields. Generated source is
registered with linecache, so tracebacks show it; ``compiled`` is the one place that
compiles it.
"""

from __future__ import annotations

import enum
import itertools
import linecache
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, TypeVar, cast

import attrs
from pyrsistent import PMap, PVector, pvector

from agents.errors import InvalidType
from agents.records.frozen import (
    EMPTY_MAP,
    EMPTY_VECTOR,
    History,
    to_history,
)
from agents.records.json_text import exact_or_refuse
from agents.records.registry import (
    RECORD,
    RECORDS_BY_TYPE,
    SHARED,
    compact_class,
    data_fields,
    element_of,
    field_plan,
    hints,
    is_pvector,
    optional_of,
    parts_of_content,
    plain_init,
    scope,
    value_kind,
)

__all__ = [
    "DecoderSource",
    "checker_source",
    "compiled",
    "encoder_source",
    "make_evolve",
    "maker",
    "replace_fields",
    "slot_setter",
    "updater",
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


# -- encoders -----------------------------------------------------------------------------------

_ENCODED: Final = {  # each value_kind's expression writing ``v`` (of field ``{name}``)
    "plain": "v",
    "datetime": (  # its class and offset checked (``_checked``)
        "(v if ctx.times and v.tzinfo is _UTC and v.microsecond and v.__class__ is _datetime "
        "else _timestamp(v))"
    ),
    "enum": "v.value",
    "record": "_ENC[_t_{name}](v, ctx)",  # its class checked (``_checked``)
    "records": (
        "[_ENC[_t_{name}](i, ctx) if i.__class__ is _t_{name} else "
        "_item(_cls, {name!r}, i, _t_{name}) for i in v]"  # (not ``record``: a cell)
    ),
    "map": "(_redact(v, ctx) if v else {{}})",
    "content": "(v if v.__class__ is str else [_FULL[i.__class__](i, ctx) for i in v])",
    "any": "_any(v, ctx)",
}


def _value_code(name: str, annotation: Any, namespace: dict[str, Any]) -> str:
    """An expression encoding ``v``, field ``name``'s value (never ``None`` unless the
    annotation allows it); a sequence of records checks each item's class."""
    inner = optional_of(annotation)
    if inner is not None:
        return f"(None if v is None else {_value_code(name, inner, namespace)})"
    kind = value_kind(annotation)
    if kind == "records":
        namespace[f"_t_{name}"] = element_of(annotation)
    return _ENCODED[kind].format(name=name)


def _checked(name: str, annotation: Any, namespace: dict[str, Any]) -> list[str]:
    """Lines checking a text, number, flag, enum, time or record field's value (one class
    test when it is of the declared type): a subclass's value is written as the declared
    type's (a ``StrEnum`` member as its text, as orjson writes it), anything else refused — a
    record built by hand with ``content=5``, ``role="user"``, a dict for a response or a
    time as text: written, it could not be read back. A time must be aware; a record field
    holds a record of its declared class only (a sequence of records checks each item where
    it is written: ``_value_code``). Maps and JSON values are frozen and checked where a
    record is made."""
    inner = optional_of(annotation)
    kind = inner if inner is not None else annotation
    checked = value_kind(kind)
    if checked == "content":  # text, or a vector of the parts it names
        namespace[f"_t_{name}"] = frozenset(parts_of_content(kind) or ())
        test = f"v.__class__ is not str and not _parts(v, _t_{name})"
        return [f"    if {test}:", f"        v = _plain(record, {name!r}, v, str, 'str or parts')"]
    if checked not in ("plain", "enum", "record", "datetime") and kind is not float:
        return []
    namespace[f"_t_{name}"] = kind
    test = f"v.__class__ is not _t_{name}"
    if checked == "datetime":  # an aware one (a naive time is no point in time)
        test = f"({test} or v.tzinfo is None)"
    if inner is not None:
        test = f"v is not None and {test}"
    declared = kind.__name__ + (" or None" if inner is not None else "")
    if checked == "record":  # a record of its class only: the decoder reads no other
        return [f"    if {test}:", f"        _wrong(record, {name!r}, v, {declared!r})"]
    return [f"    if {test}:", f"        v = _plain(record, {name!r}, v, _t_{name}, {declared!r})"]


def encoder_source(
    cls: type, annotations: dict[str, Any], namespace: dict[str, Any], compact: bool = False
) -> str:
    """The source of ``encode(record, ctx)`` for record class ``cls``, whose fields are
    written as ``annotations`` say: straight-line code, a field at a time, along the field
    plan. The caller's ``namespace`` holds what the code calls (``_ENC``, the encoders by
    class; ``_FULL``, those that write ``kind``; ``_Encoding``, ``_Refs``, ``_any``,
    ``_redact``, ``_timestamp``, ``_UTC``, ``_datetime``, ``_odd``, ``_plain``, ``_wrong``,
    ``_item``, ``_cls``); the types the checks test are put there. ``compact``: the audit
    log's form (docs/design/auditing.md): no ``kind``, no field at its default, a
    ``MessagesRef`` as its prefix alone, and ``_ENC`` the compact encoders, used where
    ``compact_class`` says."""
    state_scope = scope(cls)
    lines = ["def encode(record, ctx):"]
    start = "{}" if compact else f"{{'kind': {cls.__name__!r}}}"
    if cls.__name__ in SHARED:  # encoded once per state, by identity (compact: by ~id)
        key = "~id(record)" if compact else "id(record)"
        lines += [
            "    refs = ctx.refs",
            "    if refs is not None:",
            f"        done = refs.encoded.get({key})",
            "        if done is not None:",
            "            return done",
            f"    out = {start}",
            "    if refs is not None:",
            f"        refs.encoded[{key}] = out",
        ]
    else:
        lines.append(f"    out = {start}")
    if state_scope is not None:  # a document of its own: the steps inside refer to its context
        lines.append(f"    v = record.{state_scope}")
        lines += _checked(state_scope, annotations[state_scope], namespace)
        lines += ["    outer = ctx", "    ctx = _Encoding(_Refs(v), outer.times)"]
    fields = attrs.fields_dict(cls)
    for name, plain, optional, messages_ref in field_plan(cls):
        annotation = annotations[name]
        lines.append(f"    v = record.{name}")
        if name != state_scope:  # (checked above)
            lines += _checked(name, annotation, namespace)
        indent = "    "
        if compact and _blank_record(fields[name]):  # left out when its form is empty
            namespace[f"_default_{name}"] = fields[name].default
            code = _value_code(name, annotation, namespace)
            lines += [
                f"    if v is not _default_{name}:",
                f"        w = {code}",
                "        if w:",
                f"            out[{name!r}] = w",
            ]
            continue
        if optional or (compact and fields[name].default is not attrs.NOTHING):
            lines.append(f"    if {_not_default(fields[name], namespace)}:")
            indent = "        "
        if plain:
            lines.append(f"{indent}out[{name!r}] = v")
            if annotation in (float, float | None):
                lines.append(f"{indent}if v.__class__ is float and _odd(v):")
                lines.append(f"{indent}    ctx.odd = True")
            continue
        code = _value_code(name, annotation, namespace)
        if compact and compact_class(annotation) is None:
            code = code.replace("_ENC[", "_FULL[")
        if messages_ref:  # (compact: the prefix alone)
            ref = "prefix" if compact else "{'kind': 'MessagesRef', 'prefix': prefix}"
            lines += [
                f"{indent}prefix = None if ctx.refs is None else ctx.refs.prefix_of(v)",
                f"{indent}out[{name!r}] = ({ref} if prefix is not None else {code})",
            ]
        else:
            lines.append(f"{indent}out[{name!r}] = {code}")
    if state_scope is not None:
        lines += ["    if ctx.odd:", "        outer.odd = True"]
    lines.append("    return out")
    return "\n".join(lines)


def _blank_record(field: Any) -> bool:
    """Whether ``field``'s default is a record with each field at its default, whose
    compact form is ``{}``: a value is left out when its compact form is too (a record's
    ``==`` would call ``0.0`` and ``-0.0``, or ``0`` and ``false``, the same)."""
    default = field.default
    if type(default) not in RECORDS_BY_TYPE:
        return False
    try:
        return bool(type(default)() == default)
    except TypeError:  # a field without a default: not blank
        return False


def _not_default(field: Any, namespace: dict[str, Any]) -> str:
    """A test that ``v`` is not ``field``'s default, exactly (``0`` is not ``false``, nor
    ``-0.0`` ``0.0``)."""
    default: Any = field.default
    if isinstance(default, cast(type, attrs.Factory)):
        default = cast(Any, default).factory()
    if field.converter is not None:
        default = field.converter(default)
    if default is None or type(default) is bool:
        return f"v is not {default!r}"
    if not default and isinstance(default, str | tuple | PMap | PVector | History):
        return "v"  # an empty one (or "")
    namespace[f"_default_{field.name}"] = default
    if type(default) is float:
        return f"(v != _default_{field.name} or repr(v) != {repr(default)!r})"
    return f"(v.__class__ is not _default_{field.name}.__class__ or v != _default_{field.name})"


def checker_source(cls: type, annotations: dict[str, Any], namespace: dict[str, Any]) -> str:
    """The source of ``check(record, old)`` for record class ``cls``: the encoder's checks
    on each field of ``record`` that is not the same object in ``old``. The caller's
    ``namespace`` holds ``_CHK`` (the checkers by class), ``_items``, ``_plain`` and
    ``_wrong``."""
    lines = [
        "def check(record, old):",
        "    same = old is not None and old.__class__ is record.__class__",
    ]
    for field in data_fields(cls):
        name, annotation = field.name, annotations[field.name]
        inner = optional_of(annotation)
        kind = value_kind(inner if inner is not None else annotation)
        checks = _checked(name, annotation, namespace)
        if kind == "record":
            checks.append("    if v is not None:\n        _CHK[v.__class__](v, o)")
        elif kind == "records":
            namespace[f"_e_{name}"] = element_of(inner if inner is not None else annotation)
            checks.append(
                f"    if v is not None:\n        _items(record, {name!r}, v, o, _e_{name})"
            )
        if not checks:  # a map or a JSON value: frozen and checked where the record is made
            continue
        lines += [
            f"    v = record.{name}",
            f"    o = old.{name} if same else None",
            "    if not same or v is not o:",
            *(f"    {line}" for check in checks for line in check.split("\n")),
        ]
    lines.append("    return None")
    return "\n".join(lines)


# -- decoders -----------------------------------------------------------------------------------


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
        if parts_of_content(annotation) is not None:  # text as it is
            return f"(x if type(x) is str else {general})"
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
