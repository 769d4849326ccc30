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
from typing import Any, Final, TypeVar, Union

import attrs
from pyrsistent import PMap, PVector

from agents.context import AgentContext, MessageStore
from agents.errors import ErrorInfo, StateDecodeError
from agents.execution import ApprovalDecision, ExecutionState
from agents.goal import Goal
from agents.inference import InferenceRequest, InferenceResponse
from agents.messages import Message, ToolCall
from agents.persistent import (
    MAX_DEPTH,
    History,
    NestingError,
    deep_freeze,
    to_history,
    to_pmap,
    to_pvector,
)
from agents.record import Record
from agents.redaction import REDACTED, is_secret_key, redact
from agents.signals import ExecutionContinuation, StopSignal
from agents.state import AgentState
from agents.step import AgentStep, Compaction, StepExecution, ToolExecution
from agents.timeline import TimelineRow
from agents.usage import Usage

__all__ = [
    "REDACTED",
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

R = TypeVar("R", bound=Record)

RECORDS: Final[dict[str, type[Record]]] = {
    cls.__name__: cls
    for cls in (
        Goal,
        ApprovalDecision,
        AgentContext,
        AgentState,
        TimelineRow,
        AgentStep,
        Compaction,
        ErrorInfo,
        ExecutionContinuation,
        ExecutionState,
        InferenceRequest,
        InferenceResponse,
        Message,
        MessageStore,
        StepExecution,
        StopSignal,
        ToolCall,
        ToolExecution,
        Usage,
    )
}

RECORDS_BY_TYPE: Final[set[type]] = set(RECORDS.values())


def register(cls: type[R]) -> type[R]:
    """Make a record class of a higher layer known to the codec by its name (``kind``),
    as ``agents.definitions`` does for ``AgentDefinition``; returns the class."""
    if not (isinstance(cls, type) and issubclass(cls, Record)):
        raise TypeError(f"register() takes a Record class, got {cls!r}")
    RECORDS[cls.__name__] = cls
    RECORDS_BY_TYPE.add(cls)
    return cls


PVector_type: Final = type(to_pvector(()))

# -- encoding ---------------------------------------------------------------------------------

_FIELDS: dict[type, tuple[tuple[str, bool, bool], ...]] = {}
# Fields added after schema version 1 was published: written only when set, read as their
# default (None) when absent, so documents without them read as before and documents
# that do not use them stay byte for byte what they were.
_OPTIONAL: Final[dict[type, frozenset[str]]] = {
    ToolExecution: frozenset({"child"}),
    AgentStep: frozenset({"compaction", "conversation_length"}),
}


def _hints(cls: type) -> dict[str, Any]:
    # ToolExecution.child names AgentState, which step.py can only import for type checking.
    return typing.get_type_hints(cls, localns={"AgentState": AgentState})


_PLAIN: Final = frozenset({str, int, float, bool, str | None, int | None, float | None})


def _data_fields(cls: type) -> list[Any]:
    """The fields written and read: those that take part in equality (a field left out
    of ``==``, such as where a definition was read from, would make equal records encode
    differently)."""
    return [field for field in attrs.fields(cls) if field.eq]


def _field_plan(cls: type) -> tuple[tuple[str, bool, bool], ...]:
    """Each field's name, and whether its values are JSON scalars written as they are."""
    plan = _FIELDS.get(cls)
    if plan is None:
        hints = _hints(cls)
        optional = _OPTIONAL.get(cls, frozenset())
        plan = _FIELDS[cls] = tuple(
            (
                field.name,
                hints.get(field.name) in _PLAIN and field.name not in optional,
                field.name in optional,
            )
            for field in _data_fields(cls)
        )
    return plan


class _Refs:
    """What step input messages may refer to: the head and conversation of their state."""

    __slots__ = ("encoded", "head", "messages")

    def __init__(self, context: AgentContext) -> None:
        self.head = context.head()
        self.messages = context.store.messages
        # Records are shared across a state (a tool call sits in its response, its message
        # and its execution; a step's output messages are the conversation's): each is
        # encoded once per state, by identity, while the state keeps it alive.
        self.encoded: dict[int, dict[str, Any]] = {}

    def prefix_of(self, messages: History[Message]) -> int | None:
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
    if isinstance(value, Record):
        return _encode_record(value, refs)
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


def _encode_record(record: Record, refs: _Refs | None) -> dict[str, Any]:
    cls = type(record)
    if refs is not None:
        done = refs.encoded.get(id(record))
        if done is not None:
            return done
    out: dict[str, Any] = {"kind": cls.__name__}
    if cls is AgentState:
        refs = _Refs(record.context)  # type: ignore[attr-defined]
    elif refs is not None:
        refs.encoded[id(record)] = out  # filled in below
    for name, plain, optional in _field_plan(cls):
        value = getattr(record, name)
        if plain:
            out[name] = value
            continue
        if optional and value is None:
            continue
        if name == "input_messages" and cls is AgentStep and refs is not None:
            prefix = refs.prefix_of(value)
            if prefix is not None:
                out[name] = {"kind": "MessagesRef", "prefix": prefix}
                continue
        out[name] = _encode(value, refs)
    return out


def encode_value(value: Any) -> Any:
    """Any record or value as plain JSON data (records tagged with ``kind``)."""
    return _encode(value, None)


def encode_step_execution(step_execution: StepExecution, context: AgentContext) -> Any:
    """A step execution as JSON whose input messages refer to ``context``'s conversation
    (``MessagesRef``) when they are a prefix of it, as inside an encoded ``AgentState``."""
    return _encode_record(step_execution, _Refs(context))


def decode_step_execution(data: Any, context: AgentContext, path: str = "$") -> StepExecution:
    """The inverse of ``encode_step_execution``: a step execution whose ``MessagesRef``
    input refers to ``context``'s conversation. ``StateDecodeError`` names a bad field."""
    decoding = _Context()
    decoding.refs = _Refs(context)
    return _decode_record(data, path, decoding, StepExecution)


def to_dict(record: Record) -> dict[str, Any]:
    """``record`` as plain JSON data with ``kind`` and ``schema_version`` at the top."""
    if not isinstance(record, Record):
        raise TypeError(f"to_dict() takes a record, got {type(record).__name__}")
    body = _encode_record(record, None)
    return {"kind": body.pop("kind"), "schema_version": SCHEMA_VERSION, **body}


def to_json(record: Record) -> str:
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
    if isinstance(annotation, type) and issubclass(annotation, Record):
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
        if args and args[1] is Any:
            return _plain_map
        return _plain_map
    raise TypeError(f"the codec cannot decode {annotation!r} in {owner}")


def _record_decoder(cls: type[Record]) -> Decoder:
    def decode(value: Any, path: str, context: _Context) -> Any:
        return _decode_record(value, path, context, cls)

    return decode


def _field_decoders(cls: type[Record]) -> dict[str, Decoder]:
    decoders = _DECODERS.get(cls)
    if decoders is None:
        hints = _hints(cls)
        decoders = {}
        for field in _data_fields(cls):
            decoders[field.name] = _decoder_for(hints[field.name], cls.__name__)
        _DECODERS[cls] = decoders
        optional = _OPTIONAL.get(cls, frozenset())
        _REQUIRED[cls] = {k: v for k, v in decoders.items() if k not in optional}
    return decoders


_REQUIRED: dict[type, dict[str, Decoder]] = {}


def _messages_ref(value: Any, path: str, context: _Context) -> History[Message]:
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
    if not context.paths and cls not in _SPECIAL and type(value) is dict:
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
    if cls is AgentState:
        if context.states >= MAX_STATES:
            raise StateDecodeError(f"states nested deeper than {MAX_STATES} levels", path)
        context.states += 1
        context_path = _join(path, "context")
        if "context" not in value:
            raise StateDecodeError(f"missing field of {cls.__name__}", context_path)
        decoded_context = _decode_record(value["context"], context_path, context, AgentContext)
        context.refs = _Refs(decoded_context)
    optional = _OPTIONAL.get(cls, frozenset())
    kwargs: dict[str, Any] = {}
    for name, decode in decoders.items():
        field_path = _join(path, name) if paths else path
        if name not in value:
            if name in optional:
                continue
            raise StateDecodeError(f"missing field of {cls.__name__}", field_path)
        raw = value[name]
        if cls is AgentState and name == "context":
            kwargs[name] = decoded_context
            continue
        if (
            cls is AgentStep
            and name == "input_messages"
            and isinstance(raw, dict)
            and raw.get("kind") == "MessagesRef"
        ):
            kwargs[name] = _messages_ref(raw, field_path, context)
            continue
        kwargs[name] = decode(raw, field_path, context)
    context.refs = outer_refs
    if cls is AgentState:
        context.states -= 1
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise StateDecodeError(f"invalid {cls.__name__}: {exc}", path) from None


_SPECIAL: Final = frozenset({AgentState, AgentStep})  # decoded with references


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
        cls = found  # type: ignore[assignment]
    try:
        return _decode_record(data, "$", _Context(paths=False), cls)  # type: ignore[arg-type]
    except StateDecodeError:
        return _decode_record(data, "$", _Context(), cls)  # type: ignore[arg-type]


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
