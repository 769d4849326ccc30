"""The audit log's compact form of a record, read back (docs/design/auditing.md).

The compact encoders (``encoding.compact_encoder_of``) leave out ``kind`` where the field
says which record it holds (``registry.compact_class``), every field at its default, and a
``MessagesRef`` but its prefix. The compact decoders (``Document.record`` and
``decode_step_execution`` with ``compact=True``, in ``decoding``) read that form straight
into records; ``thick`` rebuilds from it the JSON the codec writes, for the codec's
decoders, which say what is wrong where the compact decoders doubt.
"""

from __future__ import annotations

import copy
import functools
import itertools
from collections.abc import Callable
from typing import Any, Final, NamedTuple, cast

import attrs

from agents.records.encoding import Encoding, encode_any
from agents.records.registry import (
    RECORD,
    compact_class,
    data_fields,
    element_of,
    field_plan,
    hints,
    optional_of,
)

__all__ = ["plan", "thick"]

_REQUIRED: Final = object()


class _Field(NamedTuple):
    name: str
    fresh: Callable[[], Any] | None  # the default's JSON (new), when the reader fills it in
    inner: type | None  # the one record class the field holds, when it says which
    many: bool  # a sequence of them
    ref: bool  # messages that may be a reference into the conversation (``MESSAGES_REF``)


@functools.cache
def plan(cls: type) -> tuple[_Field, ...]:
    """How ``thick`` reads each field of ``cls`` (an optional field, ``OPTIONAL``, is read
    without it as it is)."""
    annotations = hints(cls)
    optional = {field.name for field in field_plan(cls) if field.optional}
    refs = {field.name for field in field_plan(cls) if field.messages_ref}
    fields = []
    for field in data_fields(cls):
        inner, many = None, False
        if field.metadata.get(RECORD) is None:  # (else a sub-agent's state: kind written)
            annotation = annotations[field.name]
            inner = compact_class(annotation)
            many = element_of(optional_of(annotation) or annotation) is not None
        default = _default_json(field)
        fresh = None
        if default is not _REQUIRED and field.name not in optional:
            fresh = _maker(default, None if many else inner)
        fields.append(_Field(field.name, fresh, inner, many, field.name in refs))
    return tuple(fields)


def _default_json(field: Any) -> Any:
    default: Any = field.default
    if default is attrs.NOTHING:
        return _REQUIRED
    if isinstance(default, cast(type, attrs.Factory)):
        default = cast(Any, default).factory()
    value = field.converter(default) if field.converter is not None else default
    return encode_any(value, Encoding(None))


def _maker(default: Any, record: type | None) -> Callable[[], Any]:
    """A maker of ``default`` (JSON): itself when it is a scalar, else a new copy (a
    ``record`` at its defaults made as ``thick`` makes one: 5x faster than a deep copy)."""
    if default == [] or default == {}:
        return type(default)
    if record is not None and isinstance(default, dict) and thick({}, record) == default:
        return functools.partial(thick, {}, record)
    if isinstance(default, list | dict):
        return functools.partial(copy.deepcopy, default)
    return itertools.repeat(default).__next__


def thick(data: Any, cls: type) -> Any:
    """The JSON the codec writes for the record ``data`` is the compact form of (the
    compact encoders' inverse): a new object with its ``kind``, its defaults and the
    records it holds. What is no object, and keys no field has, are left for the decoder
    to refuse."""
    if type(data) is not dict:
        return data
    out: dict[str, Any] = {"kind": cls.__name__}
    for name, fresh, inner, many, ref in plan(cls):
        if name in data:
            value = data[name]
            if ref and type(value) is int:  # the prefix of a ``MessagesRef``
                value = {"kind": "MessagesRef", "prefix": value}
            elif inner is not None:
                if many:
                    if type(value) is list:
                        value = [thick(item, inner) for item in value]
                else:
                    value = thick(value, inner)
            out[name] = value
        elif fresh is not None:
            out[name] = fresh()
    if len(out) - 1 != len(data):  # a key of no field (or ``kind``): the decoder says so
        out.update((key, value) for key, value in data.items() if key not in out)
    return out
