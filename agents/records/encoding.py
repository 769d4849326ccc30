"""The encoder: records as plain JSON data, each record class by an encoder compiled from
its field plan (``compiled``), other values by ``encode_any``.

An ``Encoding`` goes along one document: the references of the enclosing state, so that a
step's input is written as a ``MessagesRef`` and each SHARED record is written once per
state, and a note of any float that orjson writes differently from Python's ``json`` (an
exponent below ``1e-4`` or past ``1e16``; non-finite numbers, an error either way):
``to_json`` writes with orjson unless it saw one.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, NoReturn

from pyrsistent import PMap, PVector

from agents.errors import InvalidArgument, InvalidType
from agents.records.compiled import compiled, element_of, optional_of, value_kind
from agents.records.frozen import History, to_pvector
from agents.records.json_text import timestamp
from agents.records.redaction import odd_float, redact
from agents.records.registry import (
    RECORD,
    RECORDS,
    RECORDS_BY_TYPE,
    SHARED,
    Refs,
    data_fields,
    field_plan,
    hints,
    scope,
)

__all__ = ["Encoder", "Encoding", "check_changes", "encode_any", "encoder_of", "unrecordable"]


class Encoding:
    """What encoding one document carries along: the references of the enclosing state
    (``None`` outside one), whether a float was seen that orjson writes differently, and
    whether a time may be left as the ``datetime`` itself where orjson writes it as
    ``json_text.timestamp`` does (``times``: for ``json_text.dumps``, which writes it so —
    an aware UTC time with a fraction of a second — never for data handed out)."""

    __slots__ = ("odd", "refs", "times")

    def __init__(self, refs: Refs | None, times: bool = False) -> None:
        self.refs = refs
        self.odd = False
        self.times = times


Encoder = Callable[[Any, Encoding], Any]


class _Encoders(dict[type, Encoder]):
    """Each class's encoder, compiled when first asked for (generated code looks encoders
    up here by the class a field holds: one dict lookup)."""

    def __missing__(self, cls: type) -> Encoder:
        if cls not in RECORDS_BY_TYPE:
            return encode_any
        found = self[cls] = _compile_encoder(cls)
        return found


_ENCODERS: Final = _Encoders()


def encoder_of(cls: type) -> Encoder:
    """The compiled encoder of record class ``cls``: ``(record, encoding) -> dict``
    (for any other type, ``encode_any``: a field may hold what its annotation does not say,
    and is written by what it holds, as the general encoder does)."""
    return _ENCODERS[cls]


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


_EXACT: Final[dict[type, Callable[[Any], Any]]] = {
    str: str.__str__,
    int: int.__int__,
    float: float.__float__,
}


def _plain(record: Any, name: str, value: Any, kind: type, declared: str) -> Any:
    """A value of a subclass of ``kind`` as a ``kind`` (an ``int`` for a float field as it
    is: ``to_float`` makes it a float where records are built); anything else refused."""
    if kind is float and type(value) is int:
        return value
    if kind is datetime and isinstance(value, datetime):
        if value.tzinfo is None:
            raise InvalidArgument(
                f"{type(record).__name__}.{name} holds a naive datetime {value!r}: records "
                "hold aware UTC times"
            )
        return value
    exact = _EXACT.get(kind)
    if exact is not None and isinstance(value, kind) and not isinstance(value, bool):
        return exact(value)
    return _wrong(record, name, value, declared)


def _wrong(record: Any, name: str, value: Any, declared: str) -> NoReturn:
    raise InvalidType(
        f"{type(record).__name__}.{name} holds {type(value).__name__}, not {declared}: "
        "written, it could not be read back"
    )


def _item(cls: type, name: str, item: Any, kind: type) -> NoReturn:
    raise InvalidType(
        f"{cls.__name__}.{name} holds a {type(item).__name__} item, not "
        f"{kind.__name__}: written, it could not be read back"
    )


def _written(cls: type) -> dict[str, Any]:
    """Each field's annotation as the codec writes and reads it: a field declared ``Any``
    that names its record (a forward reference) holds that record."""
    annotations = dict(hints(cls))
    for field in data_fields(cls):
        named = field.metadata.get(RECORD)
        if named is not None:
            annotations[field.name] = (
                RECORDS[named] | None if field.default is None else RECORDS[named]
            )
    return annotations


def _compile_encoder(cls: type) -> Callable[[Any, Encoding], dict[str, Any]]:
    annotations = _written(cls)
    state_scope = scope(cls)
    lines = ["def encode(record, ctx):"]
    if cls.__name__ in SHARED:  # encoded once per state, by identity
        lines += [
            "    refs = ctx.refs",
            "    if refs is not None:",
            "        done = refs.encoded.get(id(record))",
            "        if done is not None:",
            "            return done",
            f"    out = {{'kind': {cls.__name__!r}}}",
            "    if refs is not None:",
            "        refs.encoded[id(record)] = out",
        ]
    else:
        lines.append(f"    out = {{'kind': {cls.__name__!r}}}")
    namespace: dict[str, Any] = {
        "_ENC": _ENCODERS,
        "_Encoding": Encoding,
        "_Refs": Refs,
        "_any": encode_any,
        "_redact": _redact,
        "_timestamp": timestamp,
        "_UTC": UTC,
        "_datetime": datetime,
        "_odd": odd_float,
        "_plain": _plain,
        "_wrong": _wrong,
        "_item": _item,
        "_cls": cls,
    }
    if state_scope is not None:  # a document of its own: the steps inside refer to its context
        lines.append(f"    v = record.{state_scope}")
        lines += _checked(state_scope, annotations[state_scope], namespace)
        lines += ["    outer = ctx", "    ctx = _Encoding(_Refs(v), outer.times)"]
    for name, plain, optional, messages_ref in field_plan(cls):
        annotation = annotations[name]
        lines.append(f"    v = record.{name}")
        if name != state_scope:  # (checked above)
            lines += _checked(name, annotation, namespace)
        if plain:
            lines.append(f"    out[{name!r}] = v")
            if annotation in (float, float | None):
                lines.append("    if v.__class__ is float and _odd(v):\n        ctx.odd = True")
            continue
        code = _value_code(name, annotation, namespace)
        indent = "    "
        if optional:
            lines.append("    if v is not None:")
            indent = "        "
        if messages_ref:
            lines += [
                f"{indent}prefix = None if ctx.refs is None else ctx.refs.prefix_of(v)",
                f"{indent}out[{name!r}] = ("
                f"{{'kind': 'MessagesRef', 'prefix': prefix}} if prefix is not None else {code})",
            ]
        else:
            lines.append(f"{indent}out[{name!r}] = {code}")
    if state_scope is not None:
        lines += ["    if ctx.odd:", "        outer.odd = True"]
    lines.append("    return out")
    encode: Callable[[Any, Encoding], dict[str, Any]] = compiled(
        "\n".join(lines), namespace, cls, "encode"
    )
    return encode


# -- what a user's code hands back, checked as it would be written --------------------------


def check_changes(new: Any, old: Any = None) -> None:
    """The encoder's checks (``_checked``, ``_item``) on what record ``new`` holds that
    ``old`` — the record it was made from, or ``None`` for all of it — does not: a
    ``TypeError`` or ``ValueError`` naming the record and field that could not be written,
    without writing anything. What the two share (the same objects) is not looked at: a
    hook that changed one field of a long run's state costs a few attribute reads."""
    if new is not old:
        _CHECKERS[new.__class__](new, old)


def unrecordable(new: Any, old: Any = None) -> str | None:
    """``check_changes`` as an answer: what of ``new`` could not be written (the
    encoder's words), or ``None`` when all of it can."""
    try:
        check_changes(new, old)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


class _Checkers(dict[type, Callable[[Any, Any], None]]):
    def __missing__(self, cls: type) -> Callable[[Any, Any], None]:
        found = self[cls] = _compile_checker(cls) if cls in RECORDS_BY_TYPE else _nothing
        return found


_CHECKERS: Final = _Checkers()


def _nothing(new: Any, old: Any) -> None:
    """Not a record: what a record field holds is checked by the field (``_checked``)."""


def _compile_checker(cls: type) -> Callable[[Any, Any], None]:
    annotations = _written(cls)
    namespace: dict[str, Any] = {
        "_CHK": _CHECKERS,
        "_items": _check_items,
        "_plain": _plain,
        "_wrong": _wrong,
    }
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
    check: Callable[[Any, Any], None] = compiled("\n".join(lines), namespace, cls, "check")
    return check


def _check_items(record: Any, name: str, items: Any, old: Any, kind: type) -> None:
    """A sequence of records: each item of the declared class, and checked where it is not
    the item at its place before (a conversation that grew: only the new messages)."""
    if type(items) is History and type(old) is History and old.is_prefix_of(items):
        items, old = items.items_from(len(old)), None
    for index, item in enumerate(items):
        if item.__class__ is not kind:
            _item(type(record), name, item, kind)
        before = old[index] if old is not None and index < len(old) else None
        if item is not before:
            _CHECKERS[kind](item, before)


def _datetime(value: datetime) -> str:
    if value.tzinfo is None:
        raise InvalidArgument(f"naive datetime {value!r}: records hold aware UTC times")
    return timestamp(value)


_SCALARS: Final = frozenset({str, int, bool, type(None)})


def encode_any(value: Any, ctx: Encoding) -> Any:
    """Any value a record holds as plain JSON data (records by their compiled encoders)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        if odd_float(value):
            ctx.odd = True
        return value
    if kind in RECORDS_BY_TYPE:
        return _ENCODERS[kind](value, ctx)
    if kind is PVector_type or kind is list or kind is tuple:
        return [encode_any(item, ctx) for item in value]
    if isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return encode_any(float(value), ctx) if type(value) is not float else value
    if isinstance(value, datetime):
        return _datetime(value)
    if isinstance(value, enum.Enum):
        return encode_any(value.value, ctx)
    if isinstance(value, History | PVector | tuple | list):
        return [encode_any(item, ctx) for item in value]
    if isinstance(value, PMap | Mapping):
        return _redact(value, ctx) if value else {}
    raise InvalidType(f"cannot encode {type(value).__name__}")


PVector_type: Final = type(to_pvector(()))


def _redact(value: Any, ctx: Encoding) -> Any:
    return redact(value, ctx)
