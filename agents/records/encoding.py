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
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, NoReturn

from pyrsistent import PMap, PVector

from agents.errors import InvalidArgument, InvalidType
from agents.records.compiled import checker_source, compiled, encoder_source
from agents.records.frozen import History, to_pvector
from agents.records.json_text import timestamp
from agents.records.redaction import odd_float, redact
from agents.records.registry import (
    RECORD,
    RECORDS,
    RECORDS_BY_TYPE,
    Refs,
    data_fields,
    hints,
)

__all__ = [
    "Encoder",
    "Encoding",
    "check_changes",
    "compact_encoder_of",
    "encode_any",
    "encoder_of",
    "unrecordable",
]


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
    up here by the class a field holds: one dict lookup); ``compact``: the audit log's
    form (``compiled.encoder_source``)."""

    def __init__(self, compact: bool = False) -> None:
        super().__init__()
        self.compact = compact

    def __missing__(self, cls: type) -> Encoder:
        if cls not in RECORDS_BY_TYPE:
            return encode_any
        found = self[cls] = _compile_encoder(cls, self.compact)
        return found


_ENCODERS: Final = _Encoders()
_COMPACT: Final = _Encoders(compact=True)


def encoder_of(cls: type) -> Encoder:
    """The compiled encoder of record class ``cls``: ``(record, encoding) -> dict``
    (for any other type, ``encode_any``: a field may hold what its annotation does not say,
    and is written by what it holds, as the general encoder does)."""
    return _ENCODERS[cls]


def compact_encoder_of(cls: type) -> Encoder:
    """``encoder_of``, for the audit log's compact form: without ``kind`` (the reader
    knows the class) and without the fields at their defaults (docs/design/auditing.md)."""
    return _COMPACT[cls]


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
    if kind is float and isinstance(value, float) and not math.isfinite(value):
        raise InvalidArgument(
            f"{type(record).__name__}.{name} holds {value!r}, which JSON cannot write"
        )
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


def _parts(value: Any, classes: frozenset[type]) -> bool:
    """Whether a content field holds a vector of parts (of ``classes``)."""
    return type(value) is _PVECTOR and all(item.__class__ in classes for item in value)


_PVECTOR: Final = type(to_pvector([None]))


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


def _compile_encoder(cls: type, compact: bool) -> Callable[[Any, Encoding], dict[str, Any]]:
    namespace: dict[str, Any] = {
        "_ENC": _COMPACT if compact else _ENCODERS,
        "_FULL": _ENCODERS,
        "_Encoding": Encoding,
        "_Refs": Refs,
        "_any": encode_any,
        "_redact": redact,
        "_timestamp": timestamp,
        "_UTC": UTC,
        "_datetime": datetime,
        "_odd": odd_float,
        "_plain": _plain,
        "_wrong": _wrong,
        "_parts": _parts,
        "_item": _item,
        "_cls": cls,
    }
    source = encoder_source(cls, _written(cls), namespace, compact)
    title = "compact encode" if compact else "encode"
    encode: Callable[[Any, Encoding], dict[str, Any]] = compiled(
        source, namespace, cls, "encode", title
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
    namespace: dict[str, Any] = {
        "_CHK": _CHECKERS,
        "_items": _check_items,
        "_plain": _plain,
        "_wrong": _wrong,
        "_parts": _parts,
    }
    source = checker_source(cls, _written(cls), namespace)
    check: Callable[[Any, Any], None] = compiled(source, namespace, cls, "check")
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
    if kind is datetime and ctx.times and value.tzinfo is UTC and value.microsecond:
        return value  # orjson writes it as ``timestamp`` would (``Encoding.times``)
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
        return redact(value, ctx) if value else {}
    raise InvalidType(f"cannot encode {type(value).__name__}")


PVector_type: Final = type(to_pvector(()))
