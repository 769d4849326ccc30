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
import itertools
import json
import math
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, NamedTuple, TypeVar, Union

import attrs
from pyrsistent import PMap, PVector

from agents.errors import StateDecodeError
from agents.records.frozen import (
    MAX_DEPTH,
    History,
    NestingError,
    deep_freeze,
    to_history,
    to_pmap,
    to_pvector,
)
from agents.records.redaction import REDACTED, is_secret_key, redact

__all__ = [
    "MESSAGES_REF",
    "OPTIONAL",
    "RECORD",
    "RECORDS",
    "REDACTED",
    "REFERENCES",
    "SCHEMA_VERSION",
    "decode_step_execution",
    "encode_step_execution",
    "encode_value",
    "from_dict",
    "from_json",
    "is_secret_key",
    "loads",
    "nesting_position",
    "parse_object",
    "redact",
    "register",
    "to_dict",
    "to_json",
]

SCHEMA_VERSION: Final = 1
MAX_STATES: Final = 16
"""How many ``AgentState``s may nest in a document (a sub-agent's run inside its parent's
tool execution, and so on): deeper documents are refused with a ``StateDecodeError``."""

R = TypeVar("R")

# Per-field choices, as attrs field metadata (``attrs.field(metadata={OPTIONAL: True})``):
OPTIONAL: Final = "agents.codec.optional"
"""A field added after schema version 1 was published: written only when set, read as its
default (``None``) when absent, so documents without it read as before and documents that
do not use it stay byte for byte what they were."""
REFERENCES: Final = "agents.codec.references"
"""The field (an ``AgentContext``) whose head and conversation the steps inside the record
refer to (an ``AgentState``'s ``context``); such a record is a document of its own, and
documents nest at most ``MAX_STATES`` deep."""
MESSAGES_REF: Final = "agents.codec.messages_ref"
"""A field of messages written as ``{"kind": "MessagesRef", "prefix": k}`` when it is the
head and first ``k`` messages of the enclosing document's context (a step's input)."""
RECORD: Final = "agents.codec.record"
"""The name of the record class a field holds, where its annotation cannot say it (a
sub-agent's ``AgentState`` inside a ``ToolExecution``)."""

RECORDS: Final[dict[str, type[Any]]] = {}
"""Record classes by name (their ``kind``), filled as record classes are defined."""
RECORDS_BY_TYPE: Final[set[type]] = set()


def register(cls: type[R]) -> type[R]:
    """Make a record class known to the codec by its name (``kind``); returns the class.

    ``Record`` subclasses register themselves when they are defined (attrs's slotted class
    replaces the class it was made from, under the same name). A class whose name another
    module's record holds already is encoded, but not found by ``kind`` alone."""
    record: type[Any] = cls
    if not (isinstance(record, type) and attrs.has(record)):
        raise TypeError(f"register() takes an attrs record class, got {cls!r}")
    RECORDS_BY_TYPE.add(record)
    held = RECORDS.get(record.__name__)
    if held is None or (held.__module__, held.__qualname__) == (
        record.__module__,
        record.__qualname__,
    ):
        RECORDS[record.__name__] = record
    return cls


def is_record(value: Any) -> bool:
    """Whether ``value`` is an instance of a registered record class."""
    return type(value) in RECORDS_BY_TYPE


PVector_type: Final = type(to_pvector(()))

# -- encoding ---------------------------------------------------------------------------------


class _Field(NamedTuple):
    """How the codec writes and reads one field."""

    name: str
    plain: bool  # a JSON scalar, written as it is
    optional: bool  # written only when set (OPTIONAL)
    messages_ref: bool  # written as a MessagesRef when it is one (MESSAGES_REF)


_FIELDS: dict[type, tuple[_Field, ...]] = {}
_SCOPES: dict[type, str | None] = {}  # the REFERENCES field of each class, if any


def _hints(cls: type) -> dict[str, Any]:
    # Annotations name records by their class names; a record's module may not import
    # every record it names (a step's sub-agent state): the registry resolves them.
    return typing.get_type_hints(cls, localns=RECORDS)


_PLAIN: Final = frozenset({str, int, float, bool, str | None, int | None, float | None})


def _data_fields(cls: type) -> list[Any]:
    """The fields written and read: those that take part in equality (a field left out
    of ``==``, such as where a definition was read from, would make equal records encode
    differently)."""
    return [field for field in attrs.fields(cls) if field.eq]


def _field_plan(cls: type) -> tuple[_Field, ...]:
    """Each field's name and how it is written."""
    plan = _FIELDS.get(cls)
    if plan is None:
        hints = _hints(cls)
        plan = _FIELDS[cls] = tuple(
            _Field(
                field.name,
                hints.get(field.name) in _PLAIN and not field.metadata.get(OPTIONAL, False),
                bool(field.metadata.get(OPTIONAL, False)),
                bool(field.metadata.get(MESSAGES_REF, False)),
            )
            for field in _data_fields(cls)
        )
        scopes = [field.name for field in attrs.fields(cls) if field.metadata.get(REFERENCES)]
        _SCOPES[cls] = scopes[0] if scopes else None
    return plan


def _scope(cls: type) -> str | None:
    """The field whose conversation steps inside a ``cls`` refer to (``REFERENCES``)."""
    if cls not in _SCOPES:
        _field_plan(cls)
    return _SCOPES[cls]


class _Refs:
    """What step input messages may refer to: the head and conversation of their state."""

    __slots__ = ("encoded", "head", "messages")

    def __init__(self, context: Any) -> None:  # an AgentContext
        self.head: tuple[Any, ...] = context.head()
        self.messages: History[Any] = context.store.messages
        # Records are shared across a state (a tool call sits in its response, its message
        # and its execution; a step's output messages are the conversation's): each is
        # encoded once per state, by identity, while the state keeps it alive.
        self.encoded: dict[int, dict[str, Any]] = {}

    def prefix_of(self, messages: History[Any]) -> int | None:
        """``k`` when ``messages`` equal the head followed by the first ``k`` conversation
        messages, judged by value: equal states must encode alike however their histories
        happen to be split into head and body (SPEC §17)."""
        head = messages.head
        if head is self.head or head == self.head:  # split as the context splits it
            body = messages.body()
        else:  # built another way (decoded whole, by hand): compare the values
            size = len(self.head)
            if len(messages) < size:
                return None
            items = iter(messages)
            if tuple(itertools.islice(items, size)) != self.head:
                return None
            body = History(items)
        return len(body) if body.is_prefix_of(self.messages) else None


_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def _encode(value: Any, refs: _Refs | None) -> Any:
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


def _encode_record(record: Any, refs: _Refs | None) -> dict[str, Any]:
    cls = type(record)
    if refs is not None:
        done = refs.encoded.get(id(record))
        if done is not None:
            return done
    out: dict[str, Any] = {"kind": cls.__name__}
    plan = _field_plan(cls)
    scope = _SCOPES[cls]
    if scope is not None:  # a document of its own: steps inside refer to its context
        refs = _Refs(getattr(record, scope))
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


def encode_step_execution(step_execution: Any, context: Any) -> Any:
    """A step execution as JSON whose input messages refer to ``context``'s conversation
    (``MessagesRef``) when they are a prefix of it, as inside an encoded ``AgentState``."""
    return _encode_record(step_execution, _Refs(context))


def decode_step_execution(data: Any, context: Any, path: str = "$") -> Any:
    """The inverse of ``encode_step_execution``: a step execution whose ``MessagesRef``
    input refers to ``context``'s conversation. ``StateDecodeError`` names a bad field."""
    decoding = _Context()
    decoding.refs = _Refs(context)
    return _decode_record(data, path, decoding, RECORDS["StepExecution"])


def to_dict(record: Any) -> dict[str, Any]:
    """``record`` as plain JSON data with ``kind`` and ``schema_version`` at the top."""
    if not is_record(record):
        raise TypeError(f"to_dict() takes a record, got {type(record).__name__}")
    body = _encode_record(record, None)
    return {"kind": body.pop("kind"), "schema_version": SCHEMA_VERSION, **body}


def to_json(record: Any) -> str:
    """``record`` as compact JSON; the same record always gives the same text."""
    return json.dumps(to_dict(record), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# -- decoding ---------------------------------------------------------------------------------

Decoder = Callable[[Any, str, "_Context"], Any]


class _Context:
    """Decoding state: the context step input messages refer to, and whether paths are
    built (the first, optimistic pass builds none; an error sends decoding through a second
    pass that builds them, and checks in the original order, to say exactly where)."""

    __slots__ = ("paths", "refs", "states")

    def __init__(self, paths: bool = True) -> None:
        self.refs: _Refs | None = None
        self.paths = paths
        self.states = 0  # AgentStates being decoded, one inside another (sub-agents' runs)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _scalar(kind: type, label: str) -> Decoder:
    def decode(value: Any, path: str, _: _Context) -> Any:
        if type(value) is kind:
            if kind is float and not math.isfinite(typing.cast(float, value)):
                raise StateDecodeError(f"{value!r} is not a JSON number", path)
            return value
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:  # 1e400 written as digits: JSON allows it, a float cannot
                raise StateDecodeError(f"{value} is out of a number's range", path) from None
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return value
        raise StateDecodeError(f"expected {label}, got {_type_name(value)}", path)

    return decode


def _datetime(value: Any, path: str, _: _Context) -> datetime:
    if not isinstance(value, str):
        raise StateDecodeError(f"expected an ISO-8601 timestamp, got {_type_name(value)}", path)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise StateDecodeError(f"not an ISO-8601 timestamp: {value!r}", path) from None
    if parsed.tzinfo is None:
        raise StateDecodeError(f"timestamp {value!r} has no UTC offset", path)
    return parsed


def _json_value(value: Any, path: str, _: _Context) -> Any:
    try:
        return deep_freeze(value)
    except NestingError as exc:
        raise StateDecodeError(exc.problem, f"{path}{exc.where}") from None


def _plain_map(value: Any, path: str, _: _Context) -> Any:
    if not isinstance(value, dict):
        raise StateDecodeError(f"expected an object, got {_type_name(value)}", path)
    try:
        return to_pmap(value)
    except NestingError as exc:
        raise StateDecodeError(exc.problem, f"{path}{exc.where}") from None


def _optional(inner: Decoder) -> Decoder:
    def decode(value: Any, path: str, context: _Context) -> Any:
        return None if value is None else inner(value, path, context)

    return decode


def _sequence(inner: Decoder, build: Callable[[list[Any]], Any]) -> Decoder:
    def decode(value: Any, path: str, context: _Context) -> Any:
        if not isinstance(value, list):
            raise StateDecodeError(f"expected an array, got {_type_name(value)}", path)
        if not context.paths:
            return build([inner(item, path, context) for item in value])
        return build([inner(item, f"{path}[{index}]", context) for index, item in enumerate(value)])

    return decode


def _enumeration(kind: type[enum.Enum]) -> Decoder:
    by_value = {member.value: member for member in kind}

    def decode(value: Any, path: str, _: _Context) -> Any:
        try:
            return by_value[value]
        except (KeyError, TypeError):
            allowed = ", ".join(repr(v) for v in by_value)
            raise StateDecodeError(
                f"{value!r} is not a {kind.__name__} (one of {allowed})", path
            ) from None

    return decode


_DECODERS: dict[type, dict[str, Decoder]] = {}


def _decoder_for(annotation: Any, owner: str) -> Decoder:
    if annotation is str:
        return _scalar(str, "a string")
    if annotation is bool:
        return _scalar(bool, "a boolean")
    if annotation is int:
        return _scalar(int, "an integer")
    if annotation is float:
        return _scalar(float, "a number")
    if annotation is datetime:
        return _datetime
    if annotation is Any:
        return _json_value
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enumeration(annotation)
    if annotation in RECORDS_BY_TYPE:
        return _record_decoder(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (Union, types.UnionType):
        rest = [arg for arg in args if arg is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            return _optional(_decoder_for(rest[0], owner))
    if origin is History:
        return _sequence(_decoder_for(args[0], owner), to_history)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _sequence(_decoder_for(args[0], owner), tuple)
    if origin in (Mapping, dict) and args and args[0] is str:
        return _plain_map
    if origin is PVector or (origin is not None and getattr(origin, "__name__", "") == "PVector"):
        return _sequence(_decoder_for(args[0], owner), to_pvector)
    if origin is PMap or (origin is not None and getattr(origin, "__name__", "") == "PMap"):
        return _plain_map
    raise TypeError(f"the codec cannot decode {annotation!r} in {owner}")


def _record_decoder(cls: type[Any]) -> Decoder:
    def decode(value: Any, path: str, context: _Context) -> Any:
        return _decode_record(value, path, context, cls)

    return decode


def _field_decoders(cls: type[Any]) -> dict[str, Decoder]:
    decoders = _DECODERS.get(cls)
    if decoders is None:
        hints = _hints(cls)
        decoders = {}
        for field in _data_fields(cls):
            named = field.metadata.get(RECORD)
            annotation = RECORDS[named] if named is not None else hints[field.name]
            decoder = _decoder_for(annotation, cls.__name__)
            if named is not None and field.default is None:
                decoder = _optional(decoder)
            decoders[field.name] = decoder
        _DECODERS[cls] = decoders
        optional = {f.name for f in _field_plan(cls) if f.optional}
        _REQUIRED[cls] = {k: v for k, v in decoders.items() if k not in optional}
        _SPECIAL[cls] = _scope(cls) is not None or any(f.messages_ref for f in _field_plan(cls))
    return decoders


_REQUIRED: dict[type, dict[str, Decoder]] = {}


def _messages_ref(value: Any, path: str, context: _Context) -> History[Any]:
    refs = context.refs
    prefix = value.get("prefix")
    if set(value) != {"kind", "prefix"} or not isinstance(prefix, int) or isinstance(prefix, bool):
        raise StateDecodeError("a MessagesRef has exactly 'kind' and an integer 'prefix'", path)
    if refs is None:
        raise StateDecodeError("a MessagesRef can only appear inside an AgentState", path)
    if not 0 <= prefix <= len(refs.messages):
        raise StateDecodeError(
            f"MessagesRef prefix {prefix} is outside the conversation "
            f"({len(refs.messages)} messages)",
            path,
        )
    return refs.messages.prefix(prefix).with_head(refs.head)


def _decode_record(value: Any, path: str, context: _Context, cls: type[R]) -> R:
    decoders = _field_decoders(cls)
    if not context.paths and not _SPECIAL[cls] and type(value) is dict:
        # The optimistic pass: exactly the fields (or the required ones) and "kind"; any
        # doubt goes the long way.
        fields = (
            decoders
            if len(value) == len(decoders) + 1
            else _REQUIRED[cls]
            if len(value) == len(_REQUIRED[cls]) + 1
            else None
        )
        if fields is not None and value.get("kind") == cls.__name__:
            try:
                return cls(
                    **{name: decode(value[name], path, context) for name, decode in fields.items()}
                )
            except (KeyError, TypeError, ValueError):
                raise StateDecodeError(f"invalid {cls.__name__}", path) from None
    if not isinstance(value, dict):
        raise StateDecodeError(f"expected a {cls.__name__} object, got {_type_name(value)}", path)
    kind = value.get("kind")
    if kind != cls.__name__:
        raise StateDecodeError(f"expected kind {cls.__name__!r}, got {kind!r}", path)
    paths = context.paths
    if paths or len(value) != len(decoders) + (2 if "schema_version" in value else 1):
        unknown = [
            key
            for key in value
            if key != "kind"
            and key not in decoders
            and not (key == "schema_version" and path == "$")
        ]
    else:  # as many keys as fields: a missing field is caught below
        unknown = []
    if unknown:
        where = f"{path}.{unknown[0]}" if path != "$" else unknown[0]
        raise StateDecodeError(f"unknown field for {cls.__name__}", where)
    outer_refs = context.refs  # a sub-agent's state nests inside its parent's
    kwargs: dict[str, Any] = {}
    scope = _SCOPES[cls]
    if scope is not None:  # decoded first: the steps inside refer to it
        if context.states >= MAX_STATES:
            raise StateDecodeError(f"states nested deeper than {MAX_STATES} levels", path)
        context.states += 1
        scope_path = _join(path, scope)
        if scope not in value:
            raise StateDecodeError(f"missing field of {cls.__name__}", scope_path)
        kwargs[scope] = decoders[scope](value[scope], scope_path, context)
        context.refs = _Refs(kwargs[scope])
    for field in _field_plan(cls):
        name = field.name
        if name == scope:
            continue
        field_path = _join(path, name) if paths else path
        if name not in value:
            if field.optional:
                continue
            raise StateDecodeError(f"missing field of {cls.__name__}", field_path)
        raw = value[name]
        if field.messages_ref and isinstance(raw, dict) and raw.get("kind") == "MessagesRef":
            kwargs[name] = _messages_ref(raw, field_path, context)
            continue
        kwargs[name] = decoders[name](raw, field_path, context)
    context.refs = outer_refs
    if scope is not None:
        context.states -= 1
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise StateDecodeError(f"invalid {cls.__name__}: {exc}", path) from None


_SPECIAL: dict[type, bool] = {}  # classes decoded with references (scope or MessagesRef)


def _join(path: str, name: str) -> str:
    return name if path == "$" else f"{path}.{name}"


def from_dict(data: Any, cls: type[R] | None = None) -> R:
    """Rebuild a record from ``to_dict`` output (``cls`` is read from ``kind`` if not given)."""
    if not isinstance(data, dict):
        raise StateDecodeError(f"expected a JSON object, got {_type_name(data)}", "$")
    if "schema_version" not in data:
        raise StateDecodeError("missing schema_version", "schema_version")
    version = data["schema_version"]
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise StateDecodeError(
            f"unsupported schema_version {version!r} (this version of agents reads "
            f"{SCHEMA_VERSION})",
            "schema_version",
        )
    if cls is None:
        kind = data.get("kind")
        found = RECORDS.get(kind) if isinstance(kind, str) else None
        if found is None:
            raise StateDecodeError(f"unknown kind {kind!r}", "kind")
        cls = found
    try:
        return _decode_record(data, "$", _Context(paths=False), cls)
    except StateDecodeError:
        return _decode_record(data, "$", _Context(), cls)


def from_json(text: str | bytes, cls: type[R] | None = None) -> R:
    """Rebuild a record from ``to_json`` output."""
    return from_dict(loads(text), cls)


def loads(text: str | bytes) -> Any:
    """JSON text as Python data, strictly: ``NaN`` and ``Infinity`` (which Python's ``json``
    accepts) and nesting past what the readers handle are ``StateDecodeError``s too."""
    try:
        return json.loads(text, parse_constant=_non_finite)
    except RecursionError:
        where = _too_deep(text)
        raise StateDecodeError(f"not valid JSON: nested too deeply ({where})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise StateDecodeError(f"not valid JSON: {exc}") from None


def parse_object(text: str) -> PMap[str, Any] | None:
    """A JSON object in ``text`` (a model's tool call arguments) as a frozen map, or
    ``None`` when it is not one: invalid JSON, another kind of value, non-finite numbers,
    or nesting past ``MAX_DEPTH``."""
    try:
        value = loads(text)
    except StateDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    try:
        return to_pmap(value)
    except NestingError:
        return None


def _non_finite(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _too_deep(text: str | bytes) -> str:
    """Where a document nests past the codec's limits, for the error (looked for only
    after the parser gave up)."""
    limit = MAX_DEPTH + 20 * MAX_STATES
    found = nesting_position(text, limit)
    if found is None:
        return "more levels than the parser allows"
    line, column = found
    return f"more than {limit} levels at line {line} column {column}"


def nesting_position(text: str | bytes, limit: int) -> tuple[int, int] | None:
    """The line and column (1-based) where JSON-like text (JSON, TOML and YAML flow
    collections) first nests deeper than ``limit`` brackets, or ``None``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    depth, line, column, quoted, escaped = 0, 1, 0, "", False
    for char in text:
        column += 1
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\" and quoted == '"':
                escaped = True
            elif char == quoted:
                quoted = ""
        elif char in "\"'":
            quoted = char
        elif char in "[{":
            depth += 1
            if depth > limit:
                return line, column
        elif char in "]}":
            depth -= 1
        if char == "\n":
            line, column = line + 1, 0
    return None
