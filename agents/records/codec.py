"""The JSON codec (docs/design/determinism.md): records to plain JSON and back, losslessly, with no
pickle.

Every record object is tagged with ``"kind"`` and written with its fields in declaration
order; plain maps (metadata, tool arguments, options, details) are written with sorted keys
and secrets redacted (docs/design/events.md); the top level carries ``"schema_version"``. A step's
input messages are written as ``{"kind": "MessagesRef", "prefix": k}`` when they are the request
head (system prompt, summary, buffer) followed by the first ``k`` conversation messages of
the state that holds the step, so a history serializes in O(steps).

Decoding is strict: every field of the schema version is required, unknown fields are
rejected, and any problem raises ``StateDecodeError`` naming the path of the bad field.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from agents.errors import InvalidArgument, InvalidType
from agents.records.compiled import replace_fields
from agents.records.decoding import (
    Document,
    Prebuilt,
    decode_field,
    decode_step_execution,
    from_dict,
    from_json,
)
from agents.records.encoding import Encoding, compact_encoder_of, encode_any, encoder_of
from agents.records.frozen import History
from agents.records.json_text import MAX_STATES, dumps, loads, nesting_position, parse_object
from agents.records.redaction import REDACTED, is_secret_key, redact
from agents.records.registry import (
    MESSAGES_REF,
    OPTIONAL,
    RECORD,
    RECORDS,
    REFERENCES,
    SCHEMA_VERSION,
    Field,
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
    "Document",
    "Encoding",
    "Prebuilt",
    "compact_record",
    "decode_field",
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
    "step_row_json",
    "to_dict",
    "to_json",
    "value_json",
]


def encode_value(value: Any, encoding: Encoding | None = None) -> Any:
    """Any record or value as plain JSON data (records tagged with ``kind``); ``encoding``
    notes a float that orjson writes otherwise (``Encoding.odd``), when given."""
    return encode_any(value, Encoding(None) if encoding is None else encoding)


OMITTED: Final = object()
"""What ``encode_field`` gives for a field the record's JSON leaves out."""


def encode_field(record: Any, name: str, encoding: Encoding | None = None) -> Any:
    """Field ``name`` of ``record`` as it is written inside the record's JSON, or
    ``OMITTED`` when the record's JSON leaves it out (an optional field at
    ``None``); for writing a record's changes field by field (the audit log).
    ``encoding``: as ``encode_value`` takes it."""
    field = _plan_by_name(record.__class__).get(name)
    if field is None:
        raise InvalidArgument(f"{type(record).__name__} has no field {name!r}")
    value = getattr(record, name)
    if field.plain:
        return value
    if field.optional and value is None:
        return OMITTED
    return encode_any(value, Encoding(None) if encoding is None else encoding)


@functools.cache
def _plan_by_name(cls: type) -> dict[str, Field]:
    return {field.name: field for field in field_plan(cls)}


def encode_step_execution(
    step_execution: Any,
    context: Any,
    encoding: Encoding | None = None,
    compact: bool = False,
    head: tuple[Any, ...] | None = None,
) -> Any:
    """A step execution as JSON whose input messages refer to ``context``'s conversation
    (``MessagesRef``) when they are a prefix of it, as inside an encoded ``AgentState``;
    ``encoding`` (its references are set here) notes an odd float, as ``encode_value``'s.
    ``compact``: in the audit log's compact form (``compact_encoder_of``); ``head``:
    ``context.head()``, when the caller has it."""
    if encoding is None:
        encoding = Encoding(Refs(context, head))
    else:
        encoding.refs = Refs(context, head)
    encoders = compact_encoder_of if compact else encoder_of
    return encoders(type(step_execution))(step_execution, encoding)


def compact_record(record: Any, encoding: Encoding | None = None) -> Any:
    """A record as JSON in the audit log's compact form: without ``kind`` (the reader
    knows the class) and without the fields at their defaults; ``encoding`` as
    ``encode_value`` takes it."""
    return compact_encoder_of(type(record))(
        record, Encoding(None) if encoding is None else encoding
    )


def step_row_json(step_execution: Any, input_messages: Any) -> str:
    """A step execution's JSON text with its step's input messages written as the JSON
    data ``input_messages`` (what a session store refers to them by), the rest as
    ``to_json`` writes it."""
    encoding = Encoding(None, times=True)
    step = step_execution.step
    bare = replace_fields(step_execution, step=replace_fields(step, input_messages=History()))
    data = encoder_of(type(step_execution))(bare, encoding)
    data["step"]["input_messages"] = input_messages
    return dumps(data, exotic=encoding.odd)


def value_json(value: Any) -> str:
    """``encode_value`` as JSON text, written as ``to_json`` writes."""
    encoding = Encoding(None, times=True)
    return dumps(encode_any(value, encoding), exotic=encoding.odd)


def to_dict(record: Any, encoding: Encoding | None = None) -> dict[str, Any]:
    """``record`` as plain JSON data with ``kind`` and ``schema_version`` at the top;
    ``encoding`` notes an odd float, as ``encode_value``'s."""
    return _document(record, Encoding(None) if encoding is None else encoding)


def _document(record: Any, encoding: Encoding) -> dict[str, Any]:
    if not is_record(record):
        raise InvalidType(f"to_dict() takes a record, got {type(record).__name__}")
    body = encoder_of(type(record))(record, encoding)
    return {"kind": body.pop("kind"), "schema_version": SCHEMA_VERSION, **body}


def to_json(record: Any) -> str:
    """``record`` as compact JSON; the same record always gives the same text (what
    ``json.dumps(to_dict(record), ensure_ascii=False, separators=(",", ":"),
    allow_nan=False)`` writes, written faster: ``json_text.dumps``, which writes the times
    the encoders leave as they are)."""
    encoding = Encoding(None, times=True)
    data = _document(record, encoding)
    return dumps(data, exotic=encoding.odd)
