"""Decoding (docs/design/determinism.md): plain JSON data back to records, strictly.

Every field of the schema version is required, unknown fields are rejected, and any problem
raises ``StateDecodeError`` naming the path of the bad field. A first pass builds no paths;
an error sends the document through a second pass that builds them, to say exactly where.
"""

from __future__ import annotations

import enum
import math
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, TypeVar, Union

from pyrsistent import PMap, PVector

from agents.errors import InvalidType, StateDecodeError
from agents.records.compact import thick
from agents.records.compiled import DecoderSource, compiled
from agents.records.frozen import (
    History,
    NestingError,
    deep_freeze,
    to_history,
    to_pmap,
    to_pvector,
)
from agents.records.json_text import MAX_STATES, loads
from agents.records.registry import (
    RECORD,
    RECORDS,
    RECORDS_BY_TYPE,
    SCHEMA_VERSION,
    Refs,
    data_fields,
    field_plan,
    hints,
    optional_of,
    parts_of_content,
    value_kind,
)
from agents.records.registry import scope as scope_of

__all__ = [
    "Document",
    "decode_field",
    "decode_record",
    "decode_step_execution",
    "field_decoders",
    "from_dict",
    "from_json",
    "messages_ref",
]

R = TypeVar("R")

Decoder = Callable[[Any, str, "_Context"], Any]


class _Context:
    """Decoding state: the context step input messages refer to, whether paths are built
    (the first, optimistic pass builds none; an error sends decoding through a second pass
    that builds them, and checks in the original order, to say exactly where), and whether
    the optimistic pass empties each object it has built a record from (``consume``: only
    where the data is the decoder's own, the second pass reading it again)."""

    __slots__ = ("consume", "paths", "refs", "shared", "states")

    def __init__(self, paths: bool = True, consume: bool = False) -> None:
        self.refs: Refs | None = None
        self.paths = paths
        self.consume = consume  # the data is the decoder's own: objects emptied once read
        self.states = 0  # AgentStates being decoded, one inside another (sub-agents' runs)
        self.shared: dict[bytes, Any] = {}  # SHARED records decoded, by their exact JSON


def _shown(value: Any) -> str:
    """A value from the input as an error shows it: a scalar as its repr (cut short), a
    list or an object by its kind only (its repr could be nested past any limit)."""
    if value is None or isinstance(value, str | int | float):
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    return f"a JSON {_type_name(value)}"


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
        raise StateDecodeError(f"not an ISO-8601 timestamp: {_shown(value)}", path) from None
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


class Prebuilt:
    """Records a store has already decoded, standing where their JSON array would in the
    data given to ``from_dict`` (a session store shares one decoded message between the
    conversation and every step input holding it). JSON text never produces one."""

    __slots__ = ("items",)

    def __init__(self, items: History[Any]) -> None:
        self.items = items


def _sequence(inner: Decoder, build: Callable[[list[Any]], Any]) -> Decoder:
    def decode(value: Any, path: str, context: _Context) -> Any:
        if type(value) is Prebuilt and build is to_history:
            return value.items
        if not isinstance(value, list):
            raise StateDecodeError(f"expected an array, got {_type_name(value)}", path)
        if not context.paths:
            return build([inner(item, path, context) for item in value])
        return build([inner(item, f"{path}[{index}]", context) for index, item in enumerate(value)])

    return decode


def _content(classes: dict[str, type]) -> Decoder:
    """A message's content: its text, or an array of parts of ``classes`` by ``kind``
    (one text part is that text, as ``content.to_content`` makes it)."""

    def decode(value: Any, path: str, context: _Context) -> Any:
        if type(value) is str:
            return value
        if not isinstance(value, list):
            raise StateDecodeError(f"expected text or parts, got {_type_name(value)}", path)
        parts = []
        for index, item in enumerate(value):
            where = f"{path}[{index}]" if context.paths else path
            kind = item.get("kind") if isinstance(item, dict) else None
            cls = classes.get(kind) if isinstance(kind, str) else None
            if cls is None:
                raise StateDecodeError(f"expected a part ({', '.join(classes)})", where)
            parts.append(_COMPILED[cls](item, where, context))
        if not parts:  # as ``content.to_content`` makes it: no parts, or one text, is text
            return ""
        if len(parts) == 1 and type(parts[0]) is classes.get("TextPart"):
            text: str = getattr(parts[0], "text")  # noqa: B009  # (a TextPart)
            return text
        return to_pvector(parts)

    return decode


def _enumeration(kind: type[enum.Enum]) -> Decoder:
    by_value = {member.value: member for member in kind}

    def decode(value: Any, path: str, _: _Context) -> Any:
        try:
            return by_value[value]
        except (KeyError, TypeError):
            allowed = ", ".join(repr(v) for v in by_value)
            raise StateDecodeError(
                f"{_shown(value)} is not a {kind.__name__} (one of {allowed})", path
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
    parts = parts_of_content(annotation)
    if parts is not None:
        return _content({cls.__name__: cls for cls in parts})
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
    raise InvalidType(f"the codec cannot decode {annotation!r} in {owner}")


def _record_decoder(cls: type[Any]) -> Decoder:
    """The class's compiled decoder (``compiled.decoder_of``), made when first used: the
    optimistic pass in straight-line code, the general ``decode_record`` when it doubts."""

    def decode(value: Any, path: str, context: _Context) -> Any:
        return _COMPILED[cls](value, path, context)

    return decode


def field_decoders(cls: type[Any]) -> dict[str, Decoder]:
    """Each field's general decoder, by name."""
    decoders = _DECODERS.get(cls)
    if decoders is None:
        annotations = hints(cls)
        decoders = {}
        for field in data_fields(cls):
            named = field.metadata.get(RECORD)
            annotation = RECORDS[named] if named is not None else annotations[field.name]
            decoder = _decoder_for(annotation, cls.__name__)
            if named is not None and field.default is None:
                decoder = _optional(decoder)
            decoders[field.name] = decoder
        _DECODERS[cls] = decoders
    return decoders


def messages_ref(value: Any, path: str, context: _Context) -> History[Any]:
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


def decode_record(value: Any, path: str, context: _Context, cls: type[R]) -> R:
    """The general decoder of a record (the compiled ones call it when they doubt, and
    for a state): every check in order, building paths when ``context.paths``."""
    decoders = field_decoders(cls)
    if not isinstance(value, dict):
        raise StateDecodeError(f"expected a {cls.__name__} object, got {_type_name(value)}", path)
    kind = value.get("kind")
    if kind != cls.__name__:
        raise StateDecodeError(f"expected kind {cls.__name__!r}, got {_shown(kind)}", path)
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
    scope = scope_of(cls)
    if scope is not None:  # decoded first: the steps inside refer to it
        if context.states >= MAX_STATES:
            raise StateDecodeError(f"states nested deeper than {MAX_STATES} levels", path)
        context.states += 1
        scope_path = _join(path, scope)
        if scope not in value:
            raise StateDecodeError(f"missing field of {cls.__name__}", scope_path)
        kwargs[scope] = decoders[scope](value[scope], scope_path, context)
        context.refs = Refs(kwargs[scope])
    for field in field_plan(cls):
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
            kwargs[name] = messages_ref(raw, field_path, context)
            continue
        kwargs[name] = decoders[name](raw, field_path, context)
    context.refs = outer_refs
    if scope is not None:
        context.states -= 1
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise StateDecodeError(f"invalid {cls.__name__}: {exc}", path) from None


def _join(path: str, name: str) -> str:
    return name if path == "$" else f"{path}.{name}"


# -- compiled decoders --------------------------------------------------------


def _compile_decoder(cls: type, compact: bool) -> Decoder:
    if scope_of(cls) is not None:  # a state: its scope is decoded first, the general way
        return lambda value, path, context: decode_record(value, path, context, cls)
    namespace: dict[str, Any] = {
        "_general": decode_record,
        "_Bad": StateDecodeError,
        "_ref": messages_ref,
        "_DEC": _COMPILED,
        "_CDEC": _COMPACT,
        "_thick": thick,
        "_MISSING": _MISSING,
    }
    source = DecoderSource(cls, field_decoders(cls), namespace, compact).source()
    title = "compact decode" if compact else "decode"
    decode: Decoder = compiled(source, namespace, cls, "decode", title)
    return decode


class _Decoders(dict[type, Decoder]):
    """Each class's compiled decoder, made when first asked for (generated code looks
    decoders up here by a field's class: one dict lookup); ``compact``: of the audit log's
    compact form (``records.compact``)."""

    def __init__(self, compact: bool) -> None:
        super().__init__()
        self.compact = compact

    def __missing__(self, cls: type) -> Decoder:
        found = self[cls] = _compile_decoder(cls, self.compact)
        return found


_MISSING: Final = object()
_COMPILED: Final = _Decoders(compact=False)
_COMPACT: Final = _Decoders(compact=True)


def decoder_of(cls: type) -> Decoder:
    """The compiled decoder of ``cls``: ``(data, path, context) -> record``, the optimistic
    pass in straight-line code, the general ``decode_record`` when it doubts."""
    return _COMPILED[cls]


def decode_field(cls: type[Any], name: str, data: Any) -> Any:
    """One field of a ``cls`` record from the JSON the codec writes for it (a record's
    changes field by field, as the audit log keeps them); ``StateDecodeError`` names a bad
    part of it."""
    found = _FIELDS.get((cls, name))
    if found is None:
        found = _FIELDS[(cls, name)] = _field_decoder(cls, name)
    decoder, holds_records = found
    try:  # only the decoders of records change a context: the others share one
        return decoder(data, name, _Context(paths=False) if holds_records else _NO_RECORDS)
    except StateDecodeError:
        return decoder(data, name, _Context())


def _field_decoder(cls: type[Any], name: str) -> tuple[Decoder, bool]:
    """A field's general decoder, and whether what it decodes may hold records."""
    decoder = field_decoders(cls).get(name)
    if decoder is None:
        raise StateDecodeError(f"unknown field for {cls.__name__}", name)
    field = next(field for field in data_fields(cls) if field.name == name)
    annotation = hints(cls)[name]
    inner = optional_of(annotation)
    kind = value_kind(inner if inner is not None else annotation)
    return decoder, field.metadata.get(RECORD) is not None or kind in ("record", "records")


_FIELDS: Final[dict[tuple[type, str], tuple[Decoder, bool]]] = {}
_NO_RECORDS: Final = _Context(paths=False)  # never changed: no record is decoded with it


def from_dict(data: Any, cls: type[R] | None = None) -> R:
    """Rebuild a record from ``to_dict`` output (``cls`` is read from ``kind`` if not given)."""
    return _read(data, _document_class(data, cls), None)


def from_json(text: str | bytes, cls: type[R] | None = None) -> R:
    """Rebuild a record from ``to_json`` output."""
    if not isinstance(text, str | bytes | bytearray):
        raise InvalidType(f"from_json takes JSON text (str or bytes), not {type(text).__name__}")
    data = loads(text)
    return _read(data, _document_class(data, cls), text)


def _read(data: Any, cls: type[R], text: str | bytes | None) -> R:
    """A ``cls`` record from a document's data: the optimistic pass, then, if it finds a
    problem, the pass that says where. ``text``: the JSON the data was just read from,
    when nobody else holds the data: each object is emptied as soon as its record is
    built, so the parsed document goes as it is read rather than all at once at the end
    (the garbage collector, which visits whatever outlives a few hundred allocations,
    visits less of it: 15 % of ``from_json``'s time on a 1,000-step state), and the second
    pass reads the text again."""
    try:
        decoded: R = _record_decoder(cls)(data, "$", _Context(False, consume=text is not None))
        return decoded
    except StateDecodeError:
        return decode_record(data if text is None else loads(text), "$", _Context(), cls)


def _document_class(data: Any, cls: type[R] | None) -> type[R]:
    """The class of a document's record (``cls``, else its ``kind``), once its top level
    is checked: an object of this schema version."""
    if not isinstance(data, dict):
        raise StateDecodeError(f"expected a JSON object, got {_type_name(data)}", "$")
    if "schema_version" not in data:
        raise StateDecodeError("missing schema_version", "schema_version")
    version = data["schema_version"]
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise StateDecodeError(
            f"unsupported schema_version {_shown(version)} (this version of agents reads "
            f"{SCHEMA_VERSION})",
            "schema_version",
        )
    if cls is None:
        kind = data.get("kind")
        found = RECORDS.get(kind) if isinstance(kind, str) else None
        if found is None:
            raise StateDecodeError(f"unknown kind {_shown(kind)}", "kind")
        cls = found
    return cls


class Document:
    """Records of one document read one at a time (an audit log's records), sharing what
    repeats among them (``SHARED``: a step's output messages are the conversation's new
    ones) as a state's decoding does."""

    __slots__ = ("_optimistic", "_shared")

    def __init__(self) -> None:
        self._shared: dict[bytes, Any] = {}
        self._optimistic = self._context()

    def _context(self) -> _Context:
        optimistic = _Context(paths=False)
        optimistic.shared = self._shared
        return optimistic

    def record(self, data: Any, cls: type[R], path: str = "$", compact: bool = False) -> R:
        """A ``cls`` record from its JSON (without ``schema_version``; ``compact``: in the
        audit log's compact form, ``records.compact``)."""
        try:  # one decoding context for every record, while none fails half-way
            decoded: R = (_COMPACT if compact else _COMPILED)[cls](data, path, self._optimistic)
            return decoded
        except BaseException as exc:
            self._optimistic = self._context()  # the failed one may be left inside a state
            if not isinstance(exc, StateDecodeError):
                raise
        data = thick(data, cls) if compact else data
        return decode_record(data, path, _Context(), cls)  # again, with paths, to say where


def decode_step_execution(
    data: Any,
    context: Any,
    path: str = "$",
    document: Document | None = None,
    head: tuple[Any, ...] | None = None,
    compact: bool = False,
) -> Any:
    """The inverse of ``encode_step_execution``: a step execution whose ``MessagesRef``
    input refers to ``context``'s conversation (sharing what repeats with the other
    records of ``document``; ``head``: ``context.head()``, when the caller has it;
    ``compact``: in the audit log's compact form). ``StateDecodeError`` names a bad field."""
    refs, cls = Refs(context, head), RECORDS["StepExecution"]
    optimistic = _Context(paths=False)
    optimistic.refs = refs
    if document is not None:
        optimistic.shared = document._shared
    try:
        return (_COMPACT if compact else _COMPILED)[cls](data, path, optimistic)
    except StateDecodeError:  # again, building paths, to say where
        decoding = _Context()
        decoding.refs = refs
        return decode_record(thick(data, cls) if compact else data, path, decoding, cls)
