"""The JSON codec (SPEC §9): records to plain JSON and back, losslessly, with no pickle.

Every record object is tagged with ``"kind"`` and written with its fields in declaration
order; plain maps (metadata, tool arguments, options, details) are written with sorted keys
and secrets redacted (SPEC §10); the top level carries ``"schema_version"``. A step's input
messages are written as ``{"kind": "MessagesRef", "prefix": k}`` when they are the request
head (system prompt, summary, buffer) followed by the first ``k`` conversation messages of
the state that holds the step, so a history serializes in O(steps).

Decoding is strict: every field of the schema version is required, unknown fields are
rejected, and any problem raises ``StateDecodeError`` naming the path of the bad field.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from pyrsistent import PMap, PVector

from agents.records.decoding import decode_step_execution, from_dict, from_json
from agents.records.frozen import History, to_pvector
from agents.records.json_text import MAX_STATES, loads, nesting_position, parse_object
from agents.records.redaction import REDACTED, is_secret_key, redact
from agents.records.registry import (
    MESSAGES_REF,
    OPTIONAL,
    RECORD,
    RECORDS,
    RECORDS_BY_TYPE,
    REFERENCES,
    SCHEMA_VERSION,
    SCOPES,
    Refs,
    field_plan,
    is_record,
    register,
)

__all__ = [
    "MAX_STATES",
    "MESSAGES_REF",
    "OMITTED",
    "OPTIONAL",
    "RECORD",
    "RECORDS",
    "REDACTED",
    "REFERENCES",
    "SCHEMA_VERSION",
    "decode_step_execution",
    "encode_field",
    "encode_step_execution",
    "encode_value",
    "from_dict",
    "from_json",
    "is_record",
    "is_secret_key",
    "loads",
    "nesting_position",
    "parse_object",
    "redact",
    "register",
    "to_dict",
    "to_json",
]

PVector_type: Final = type(to_pvector(()))

_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def _encode(value: Any, refs: Refs | None) -> Any:
    kind = type(value)
    if kind in _SCALARS:  # exact types first: the common cases without isinstance chains
        return value
    if kind in RECORDS_BY_TYPE:
        return _encode_record(value, refs)
    if kind is PVector_type or kind is list or kind is tuple:
        return [_encode(item, refs) for item in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, datetime):
        return _encode_datetime(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, History | PVector | tuple | list):
        return [_encode(item, refs) for item in value]
    if isinstance(value, PMap | Mapping):
        return redact(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def _encode_datetime(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: records hold aware UTC times")
    return value.isoformat(timespec="microseconds")


def _encode_record(record: Any, refs: Refs | None) -> dict[str, Any]:
    cls = type(record)
    if refs is not None:
        done = refs.encoded.get(id(record))
        if done is not None:
            return done
    out: dict[str, Any] = {"kind": cls.__name__}
    plan = field_plan(cls)
    scope = SCOPES[cls]
    if scope is not None:  # a document of its own: steps inside refer to its context
        refs = Refs(getattr(record, scope))
    elif refs is not None:
        refs.encoded[id(record)] = out  # filled in below
    for name, plain, optional, messages_ref in plan:
        value = getattr(record, name)
        if plain:
            out[name] = value
            continue
        if optional and value is None:
            continue
        if messages_ref and refs is not None:
            prefix = refs.prefix_of(value)
            if prefix is not None:
                out[name] = {"kind": "MessagesRef", "prefix": prefix}
                continue
        out[name] = _encode(value, refs)
    return out


def encode_value(value: Any) -> Any:
    """Any record or value as plain JSON data (records tagged with ``kind``)."""
    return _encode(value, None)


OMITTED: Final = object()
"""What ``encode_field`` gives for a field the record's JSON leaves out."""


def encode_field(record: Any, name: str) -> Any:
    """Field ``name`` of ``record`` as it is written inside the record's JSON, or
    ``OMITTED`` when the record's JSON leaves it out (an optional field at
    ``None``); for writing a record's changes field by field (the audit log)."""
    for field, plain, optional, _ in field_plan(type(record)):
        if field == name:
            value = getattr(record, name)
            if plain:
                return value
            if optional and value is None:
                return OMITTED
            return _encode(value, None)
    raise AttributeError(f"{type(record).__name__} has no field {name!r}")


def encode_step_execution(step_execution: Any, context: Any) -> Any:
    """A step execution as JSON whose input messages refer to ``context``'s conversation
    (``MessagesRef``) when they are a prefix of it, as inside an encoded ``AgentState``."""
    return _encode_record(step_execution, Refs(context))


def to_dict(record: Any) -> dict[str, Any]:
    """``record`` as plain JSON data with ``kind`` and ``schema_version`` at the top."""
    if not is_record(record):
        raise TypeError(f"to_dict() takes a record, got {type(record).__name__}")
    body = _encode_record(record, None)
    return {"kind": body.pop("kind"), "schema_version": SCHEMA_VERSION, **body}


def to_json(record: Any) -> str:
    """``record`` as compact JSON; the same record always gives the same text."""
    return json.dumps(to_dict(record), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
